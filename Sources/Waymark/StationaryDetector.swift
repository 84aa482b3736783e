import FoundationEssentials
import WaymarkCore

/// Whether the device stands still, from the receiver's speed and the spread of its positions,
/// with hysteresis: CoreLocation's `isStationary`. A value with no clock and no I/O; every
/// decision uses fix timestamps.
///
/// ```text
///            still for `settleSeconds` within `radiusMeters`
///   moving ───────────────────────────────────────────────▶ stationary
///          ◀───────────────────────────────────────────────
///            moving evidence on every fix for `moveSeconds`
/// ```
///
/// A fix is *still* when its speed is below ``Thresholds/stopSpeed`` (or unknown) and it lies
/// within ``Thresholds/radiusMeters`` of the first still fix of the run. A fix is *moving
/// evidence* when its speed is at least ``Thresholds/moveSpeed`` or it lies farther than the
/// radius from where the device stopped. The gap between the two speeds, and the time moving
/// evidence must last without a break, are the hysteresis: a multipath burst at a stop (a few
/// fixes thrown tens of metres away with a made-up speed) does not clear it, driving off does.
public struct StationaryDetector: Sendable, Hashable {
  /// The thresholds of one activity.
  public struct Thresholds: Sendable, Hashable {
    /// Below this speed (metres per second) a fix may count as still.
    public var stopSpeed: Double
    /// At or above this speed (metres per second) a fix is moving evidence; higher than
    /// ``stopSpeed``.
    public var moveSpeed: Double
    /// How far (metres) positions may spread around the stop and still count as still.
    public var radiusMeters: Double
    /// Seconds of fix time still fixes must span before the device counts as stationary.
    public var settleSeconds: TimeInterval
    /// Seconds of fix time moving evidence must span, without a still fix in between, to clear
    /// stationarity.
    public var moveSeconds: TimeInterval

    /// Creates thresholds.
    public init(
      stopSpeed: Double = 0.5, moveSpeed: Double = 1.5, radiusMeters: Double = 25,
      settleSeconds: TimeInterval = 30, moveSeconds: TimeInterval = 5
    ) {
      self.stopSpeed = stopSpeed
      self.moveSpeed = max(moveSpeed, stopSpeed)
      self.radiusMeters = radiusMeters
      self.settleSeconds = settleSeconds
      self.moveSeconds = moveSeconds
    }
  }

  /// Where the detector is.
  public enum State: Sendable, Hashable {
    /// Moving; `stillSince` is the first fix of the current run of still fixes (its time and
    /// position), if any.
    case moving(stillSince: Date?, anchor: Coordinate?)
    /// Stationary since `since` around `anchor`; `movingSince` is the first fix of the current
    /// run of moving evidence, if any.
    case stationary(since: Date, anchor: Coordinate, movingSince: Date?)
  }

  /// The thresholds in use.
  public let thresholds: Thresholds
  /// The current state.
  public private(set) var state: State = .moving(stillSince: nil, anchor: nil)

  /// A detector that starts moving (nothing known).
  public init(thresholds: Thresholds = Thresholds()) { self.thresholds = thresholds }

  /// Whether the device counts as stationary now.
  public var isStationary: Bool {
    if case .stationary = state { return true }
    return false
  }

  /// Takes one location (in fix-time order) and returns whether the device is stationary
  /// after it.
  @discardableResult
  public mutating func update(with location: Location) -> Bool {
    let time = location.timestamp
    let here = location.coordinate
    switch state {
    case .moving(let stillSince, let anchor):
      let slow = location.speed.map { $0 < thresholds.stopSpeed } ?? true
      guard slow else {
        state = .moving(stillSince: nil, anchor: nil)
        return false
      }
      guard let stillSince, let anchor,
        here.distance(to: anchor) <= thresholds.radiusMeters, time >= stillSince
      else {
        state = .moving(stillSince: time, anchor: here)
        return false
      }
      if time.timeIntervalSince(stillSince) >= thresholds.settleSeconds {
        state = .stationary(since: time, anchor: anchor, movingSince: nil)
        return true
      }
      return false
    case .stationary(let since, let anchor, let movingSince):
      let fast = location.speed.map { $0 >= thresholds.moveSpeed } ?? false
      let away = here.distance(to: anchor) > thresholds.radiusMeters
      guard fast || away else {
        state = .stationary(since: since, anchor: anchor, movingSince: nil)
        return true
      }
      let start = movingSince ?? time
      if time.timeIntervalSince(start) >= thresholds.moveSeconds {
        state = .moving(stillSince: nil, anchor: nil)
        return false
      }
      state = .stationary(since: since, anchor: anchor, movingSince: start)
      return true
    }
  }
}
