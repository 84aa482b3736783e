import FoundationEssentials
import Glibc

/// Cuts a projected track down to what shows at pixel resolution, so a big track makes a file
/// of the size of its drawing, not of its recording.
///
/// Two rules, in pixels:
/// - a point less than ``minimumStep`` from the last point kept is left out (the last point of
///   a segment is kept unless it is within a tenth of that);
/// - a step that runs only over pixels the track has already covered (a road driven again, a
///   stay's jitter) is left out too: the line is cut there and starts again where the track
///   leaves the covered pixels. A drive repeated a thousand times is drawn about once.
///
/// The SVG map's thinner has edges (off the map counts as covered); the interactive map's has
/// none (a web map's world at one zoom level, kept as the set of pixels touched), and its
/// finest level can leave the second rule out (``hidesCovered``), which walks every pixel.
struct MapTrackThinner {
  typealias Point = (x: Double, y: Double)

  /// The smallest step kept, pixels.
  static let minimumStep = 1.0

  private let width: Int
  private let height: Int
  /// Whether the map has edges (`width` × `height`); without, ``coveredPixels`` holds the
  /// coverage.
  private let isBounded: Bool
  /// Whether the track's centre line has crossed each pixel, row by row.
  private var covered: [Bool]
  /// The pixels the track's centre line has crossed, on a map without edges.
  private var coveredPixels: Set<Int> = []
  /// Whether a step over covered pixels only is left out (the second rule).
  let hidesCovered: Bool

  /// A thinner for a map of `width` × `height` pixels.
  init(width: Int, height: Int) {
    self.width = width
    self.height = height
    isBounded = true
    hidesCovered = true
    covered = Array(repeating: false, count: width * height)
  }

  /// A thinner for a map without edges (pixel coordinates from 0 to 2³¹), applying the second
  /// rule when `hidesCovered`.
  init(unboundedHidingCovered hidesCovered: Bool) {
    width = 0
    height = 0
    isBounded = false
    self.hidesCovered = hidesCovered
    covered = []
  }

  /// Adds one segment of the track, its points in time order.
  ///
  /// - Returns: the segment's lines to draw (a line of one point is a dot); none when all of
  ///   it is hidden.
  mutating func add(_ segment: [Point]) -> [[Point]] {
    guard let first = segment.first else { return [] }
    var lines: [[Point]] = []
    var line: [Point] = []
    var last = first
    if !hidesCovered || !isCovered(first) {
      if hidesCovered { mark(first) }
      line.append(first)
    }
    for (index, point) in segment.enumerated().dropFirst() {
      let step = hypot(point.x - last.x, point.y - last.y)
      let isEnd = index == segment.count - 1
      if step < Self.minimumStep && !(isEnd && step >= Self.minimumStep / 10) { continue }
      if !hidesCovered {
        line.append(point)
      } else if walk(from: last, to: point, marking: false) {
        // Hidden under the track drawn already: end the line here.
        if line.count > 0 { lines.append(line) }
        line = []
      } else {
        if line.isEmpty { line.append(last) }
        _ = walk(from: last, to: point, marking: true)
        line.append(point)
      }
      last = point
    }
    if line.count > 0 { lines.append(line) }
    return lines
  }

  /// Whether every pixel from `a` to `b` is covered (sampled every half pixel); with `marking`,
  /// marks them.
  private mutating func walk(from a: Point, to b: Point, marking: Bool) -> Bool {
    let samples = max(1, Int(saturating: (hypot(b.x - a.x, b.y - a.y) * 2).rounded(.up)))
    var all = true
    for step in 0...samples {
      let t = Double(step) / Double(samples)
      let p = (x: a.x + (b.x - a.x) * t, y: a.y + (b.y - a.y) * t)
      if marking {
        mark(p)
      } else if !isCovered(p) {
        all = false
        break
      }
    }
    return all
  }

  private func index(_ p: Point) -> Int? {
    guard isBounded else {
      guard p.x >= 0, p.y >= 0, p.x < 2_147_483_648, p.y < 2_147_483_648 else { return nil }
      return Int(saturating: p.y) << 31 | Int(saturating: p.x)
    }
    guard p.x >= 0, p.y >= 0, p.x < Double(width), p.y < Double(height) else { return nil }
    return Int(p.y) * width + Int(p.x)
  }

  private func isCovered(_ p: Point) -> Bool {
    // Off the map counts as covered: nothing there shows.
    guard let index = index(p) else { return true }
    return isBounded ? covered[index] : coveredPixels.contains(index)
  }

  private mutating func mark(_ p: Point) {
    guard let index = index(p) else { return }
    if isBounded {
      covered[index] = true
    } else {
      coveredPixels.insert(index)
    }
  }
}
