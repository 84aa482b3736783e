import FoundationEssentials
import WaymarkCore

/// Which locations are significant changes, CoreLocation's
/// `startMonitoringSignificantLocationChanges` for low-rate logging: the first location; one
/// at least ``minimumDistanceMeters`` from the last one let through; the first after a gap of
/// at least ``gapSeconds`` of fix time without a location; and, when
/// ``maximumIntervalSeconds`` is set, one that much fix time after the last one let through.
/// A value with no clock and no I/O: every decision uses fix timestamps.
public struct SignificantChangeFilter: Sendable, Hashable {
  /// Why a location was let through.
  public enum Reason: Sendable, Hashable {
    /// The first location.
    case first
    /// The device moved at least the minimum distance from the last significant location.
    case moved(meters: Double)
    /// The first location after a gap in the locations (seconds of fix time).
    case afterGap(seconds: TimeInterval)
    /// The maximum interval passed since the last significant location (seconds of fix time).
    case interval(seconds: TimeInterval)
  }

  /// Distance in metres from the last significant location that makes a new one (default 500).
  public var minimumDistanceMeters: Double
  /// Seconds of fix time between two consecutive locations that count as a gap (default 300):
  /// the first location after one is significant.
  public var gapSeconds: TimeInterval
  /// Seconds of fix time after which a location is significant even without moving (`nil`,
  /// the default: never).
  public var maximumIntervalSeconds: TimeInterval?
  /// The last significant location.
  public private(set) var lastSignificant: Location?
  /// The last location seen, significant or not.
  public private(set) var lastSeen: Location?

  /// Creates a filter.
  public init(
    minimumDistanceMeters: Double = 500, gapSeconds: TimeInterval = 300,
    maximumIntervalSeconds: TimeInterval? = nil
  ) {
    self.minimumDistanceMeters = minimumDistanceMeters
    self.gapSeconds = gapSeconds
    self.maximumIntervalSeconds = maximumIntervalSeconds
  }

  /// Takes one location (in fix-time order) and returns why it is significant, or `nil` when
  /// it is not.
  public mutating func admit(_ location: Location) -> Reason? {
    defer { lastSeen = location }
    let reason: Reason?
    if let last = lastSignificant {
      let moved = location.distance(from: last)
      let sincePrevious = lastSeen.map { location.timestamp.timeIntervalSince($0.timestamp) } ?? 0
      let sinceSignificant = location.timestamp.timeIntervalSince(last.timestamp)
      if moved >= minimumDistanceMeters {
        reason = .moved(meters: moved)
      } else if sincePrevious >= gapSeconds {
        reason = .afterGap(seconds: sincePrevious)
      } else if let maximum = maximumIntervalSeconds, sinceSignificant >= maximum {
        reason = .interval(seconds: sinceSignificant)
      } else {
        reason = nil
      }
    } else {
      reason = .first
    }
    if reason != nil { lastSignificant = location }
    return reason
  }
}
