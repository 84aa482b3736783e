import FoundationEssentials
import Waymark

/// When a client identity with reduced accuracy may be given a position, whichever of its
/// connections asks (WATCH or POLL): once per interval of fix time, on the interval's boundaries.
///
/// The first position of an identity goes out at once (at a moment the client chose); every
/// later one waits for the first fix at or after a multiple of the interval (in fix time since
/// 1970) that is at least one interval after the last. So the moments of release say nothing
/// about when a grid cell changed, and two releases are never less than an interval apart,
/// however often the client reconnects or polls. The broker keeps one per client id.
struct ReducedRelease: Sendable {
  /// The last position released (coarse), with its fix time.
  private(set) var last: Fix?

  /// Whether a position with fix time `time` may be released: the first, the one already
  /// released (to another connection of the identity), or one at or after the next boundary.
  func mayRelease(at time: Date, interval: Double) -> Bool {
    guard let lastTime = last?.time else { return true }
    if time == lastTime { return true }
    return time.timeIntervalSince1970 >= Self.nextBoundary(after: lastTime, interval: interval)
  }

  /// Records `fix` (coarse) as released.
  mutating func release(_ fix: Fix) { last = fix }

  /// The first multiple of `interval` (seconds since 1970) at least `interval` after `time`.
  static func nextBoundary(after time: Date, interval: Double) -> Double {
    guard interval > 0 else { return time.timeIntervalSince1970 }
    return ((time.timeIntervalSince1970 + interval) / interval).rounded(.up) * interval
  }
}
