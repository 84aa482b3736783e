import FoundationEssentials
import Glibc
import WaymarkCore

/// The device's velocity from its positions alone: the least-squares slope of the recent fixes'
/// east and north positions over their fix times, for logs whose speed is absent or computed
/// from positions (a phone's NMEA: 0.3–0.8 m/s at rest, often more) rather than Doppler.
///
/// The window holds the fixes of the last ``windowSeconds`` of fix time, and at least the last
/// ``minimumFixes`` when they span no more than ``longestWindowSeconds`` (a logger that samples
/// every 30 s). A still device's positions wander about one spot, so their slope stays near 0
/// however far they wander; a walker's grow by 1.4 m/s. Running sums make each fix cost the
/// same whatever the rate; they are recomputed from the held fixes now and then so that
/// rounding does not accumulate.
struct StayMotionWindow: Sendable {
  /// Seconds of fix time the window covers.
  static let windowSeconds = 60.0
  /// Fewest fixes the window keeps (when they are recent enough) and needs for a velocity.
  static let minimumFixes = 4
  /// Oldest fix, seconds, kept to make up ``minimumFixes``.
  static let longestWindowSeconds = 180.0
  /// Shortest span of fix time, seconds, over which a slope means anything.
  static let minimumSpanSeconds = 10.0

  private struct Point: Sendable {
    var t: Double
    var x: Double
    var y: Double
  }

  private var origin: Coordinate?
  private var originTime: Date?
  private var metersPerDegreeLongitude = 0.0
  private var points: [Point] = []
  private var head = 0
  private var n = 0.0
  private var st = 0.0
  private var stt = 0.0
  private var sx = 0.0
  private var sy = 0.0
  private var stx = 0.0
  private var sty = 0.0
  private var removals = 0

  /// Adds a fix (in fix-time order) and returns the speed over ground its window shows, metres
  /// per second; `nil` while the window is too short to tell.
  mutating func add(_ coordinate: Coordinate, at time: Date) -> Double? {
    if origin.map({ $0.distance(to: coordinate) > 20_000 }) ?? true { rebase(coordinate, time) }
    let point = project(coordinate, time)
    points.append(point)
    accumulate(point, 1)
    while head < points.count - 1 {
      let oldest = points[head]
      let age = point.t - oldest.t
      let kept = points.count - head
      guard age > Self.windowSeconds,
        kept > Self.minimumFixes || age > Self.longestWindowSeconds
      else { break }
      accumulate(oldest, -1)
      head += 1
      removals += 1
    }
    if head > 1024 || removals > 4096 { compact() }
    guard points.count - head >= 3, point.t - points[head].t >= Self.minimumSpanSeconds else {
      return nil
    }
    let denominator = n * stt - st * st
    guard denominator > 0 else { return nil }
    let vx = (n * stx - st * sx) / denominator
    let vy = (n * sty - st * sy) / denominator
    return (vx * vx + vy * vy).squareRoot()
  }

  /// Forgets every fix (a gap: what came before says nothing about the motion after).
  mutating func reset() {
    points.removeAll(keepingCapacity: true)
    head = 0
    n = 0
    st = 0
    stt = 0
    sx = 0
    sy = 0
    stx = 0
    sty = 0
    removals = 0
  }

  private mutating func accumulate(_ point: Point, _ sign: Double) {
    n += sign
    st += sign * point.t
    stt += sign * point.t * point.t
    sx += sign * point.x
    sy += sign * point.y
    stx += sign * point.t * point.x
    sty += sign * point.t * point.y
  }

  private func project(_ coordinate: Coordinate, _ time: Date) -> Point {
    guard let origin, let originTime else { return Point(t: 0, x: 0, y: 0) }
    var dLongitude = coordinate.longitude - origin.longitude
    if dLongitude > 180 { dLongitude -= 360 } else if dLongitude < -180 { dLongitude += 360 }
    return Point(
      t: time.timeIntervalSince(originTime), x: dLongitude * metersPerDegreeLongitude,
      y: (coordinate.latitude - origin.latitude) * Coordinate.metersPerDegree)
  }

  /// A new local frame at `coordinate`: the window starts afresh.
  private mutating func rebase(_ coordinate: Coordinate, _ time: Date) {
    origin = coordinate
    originTime = time
    metersPerDegreeLongitude = Coordinate.metersPerDegree * cos(coordinate.latitude * .pi / 180)
    reset()
  }

  /// Drops the removed fixes and recomputes the sums from those held, with times counted from
  /// the oldest (small numbers keep the sums exact enough).
  private mutating func compact() {
    points.removeFirst(head)
    head = 0
    if let oldest = points.first?.t, let time = originTime {
      originTime = time.addingTimeInterval(oldest)
      for index in points.indices { points[index].t -= oldest }
    }
    removals = 0
    n = 0
    st = 0
    stt = 0
    sx = 0
    sy = 0
    stx = 0
    sty = 0
    for point in points { accumulate(point, 1) }
  }
}
