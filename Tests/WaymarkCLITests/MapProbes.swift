import Foundation
import WaymarkCore

@testable import WaymarkCLI

/// Where a person looking at the demo map must see a place circle, the track and the bare
/// paper: pixels worked out from the renderer's own projection of the store's coordinates,
/// away from everything drawn on top (markers, labels, the title, legend, scale bar and north
/// arrow).
struct MapProbes {
  typealias Point = (x: Double, y: Double)

  /// Inside a place circle (at 0.6 of its radius), by place id.
  var places: [(id: String, point: Point)] = []
  /// On the track.
  var track: [Point] = []
  /// Far from anything.
  var background: [Point] = []

  init(_ renderer: SVGMapRenderer) {
    let projection = renderer.projection
    let content = renderer.content
    let width = Double(projection.width)
    let height = Double(projection.height)
    let segments = content.segments.map { $0.map(projection.point) }
    let markers = content.stays.map { projection.point($0.coordinate) }

    func covered(_ p: Point) -> Bool {
      if p.y < 40 { return true }  // title
      if p.x < 270 && p.y > height - 56 { return true }  // scale bar
      if p.x > width - 60 && p.y < 76 { return true }  // north arrow
      if p.x > width - 170 && p.y > height - 104 { return true }  // legend
      for m in markers {
        if hypot(p.x - m.x, p.y - m.y) < 16 { return true }  // marker, pass-through chord
        // A label, above or below the marker (MapLabelLayout's boxes, 3 pixels more).
        let above = p.y > m.y - 28 && p.y < m.y - 1
        let below = p.y > m.y + 4 && p.y < m.y + 31
        if (above || below) && abs(p.x - m.x) < 480 { return true }
      }
      return false
    }
    func trackDistance(_ p: Point) -> Double {
      var best = Double.infinity
      for segment in segments {
        for (a, b) in zip(segment, segment.dropFirst(1)) {
          best = min(best, Self.distance(p, a, b))
        }
        if let only = segment.first, segment.count == 1 {
          best = min(best, hypot(p.x - only.x, p.y - only.y))
        }
      }
      return best
    }
    for circle in content.circles {
      let c = projection.point(circle.coordinate)
      let r = projection.pixels(circle.radiusMeters)
      guard r >= 20 else { continue }
      for step in 0..<16 {
        let angle = Double(step) * .pi / 8
        let p = (x: c.x + 0.6 * r * cos(angle), y: c.y + 0.6 * r * sin(angle))
        if !covered(p) && trackDistance(p) > MapStyle.trackWidth / 2 + 5 {
          places.append((circle.id, p))
          break
        }
      }
    }
    // Track points whose neighbours are at least 3 pixels away (so each is a drawn vertex).
    for segment in segments where segment.count >= 3 {
      for index in stride(from: 1, to: segment.count - 1, by: 3) {
        let (a, p, b) = (segment[index - 1], segment[index], segment[index + 1])
        guard hypot(p.x - a.x, p.y - a.y) >= 3, hypot(b.x - p.x, b.y - p.y) >= 3,
          !covered(p)
        else { continue }
        track.append(p)
      }
    }
    for y in stride(from: 20.0, to: height, by: 40) {
      for x in stride(from: 20.0, to: width, by: 40) {
        let p = (x: x, y: y)
        let outside = content.circles.allSatisfy {
          let c = projection.point($0.coordinate)
          return hypot(p.x - c.x, p.y - c.y) > projection.pixels($0.radiusMeters) + 20
        }
        if outside && !covered(p) && trackDistance(p) > 40 { background.append(p) }
      }
    }
  }

  /// The distance from `p` to the segment from `a` to `b`, pixels.
  static func distance(_ p: Point, _ a: Point, _ b: Point) -> Double {
    let dx = b.x - a.x
    let dy = b.y - a.y
    let length = dx * dx + dy * dy
    let t = length == 0 ? 0 : max(0, min(1, ((p.x - a.x) * dx + (p.y - a.y) * dy) / length))
    return hypot(p.x - a.x - t * dx, p.y - a.y - t * dy)
  }
}
