import FoundationEssentials
import WaymarkCore

/// What ``LocationManager`` decides about each fix, as a value with no lock, no clock and no I/O
/// (as ``PlaceMonitorEngine`` is to ``PlaceMonitor``): the application's filters, whether
/// updates are on and where delivery stands, and the fix-time bookkeeping of gaps and of the
/// stale watchdog. Everything runs on fix timestamps.
///
/// ```text
///                start                 a location goes out
///   stopped ───────────▶ afterGap ───────────────────────────▶ delivering
///      ▲                    ▲  ◀── gap: a no-fix, more than gapInterval ──┘
///      │                    │      of fix time without a usable fix, or a new run
///      └──── stop ──────────┴───────────────── stop ──────────────────────┘
/// ```
///
/// In `afterGap` the next location goes out whatever the distance filter says; in `delivering`
/// the filter is measured from the last delivered location. Every state keeps the fix time of
/// the last reduced-accuracy delivery, whose interval applies across gaps and restarts.
struct LocationDelivery: Sendable {
  /// Where delivery stands.
  enum Phase: Sendable, Equatable {
    /// Updates are off; locations only answer one-shot requests.
    case stopped(lastReducedDelivery: Date?)
    /// Updates are on and the next location is the first (after a start or a gap).
    case afterGap(lastReducedDelivery: Date?)
    /// Updates are on; `lastRaw` (before any snapping) was the last location delivered.
    case delivering(lastRaw: Location, lastReducedDelivery: Date?)

    /// The fix time of the last delivery at reduced accuracy, if the last delivery was one.
    var lastReducedDelivery: Date? {
      switch self {
      case .stopped(let last), .afterGap(let last), .delivering(_, let last): last
      }
    }
  }

  /// What became of one fix.
  enum Outcome: Sendable, Equatable {
    /// No position or no time: nothing to deliver.
    case unusable
    /// Worse than ``maximumHorizontalAccuracy``, or of unknown accuracy when one is set.
    case inaccurate
    /// Accurate enough, as delivered (snapped when reduced), but held back: updates are off,
    /// or the distance filter or the reduced-accuracy interval holds it. One-shot requests
    /// still see it.
    case held(Location)
    /// Delivered to the streams and the delegate.
    case delivered(Location)

    /// The location a one-shot request may take, if any.
    var location: Location? {
      switch self {
      case .unusable, .inaccurate: nil
      case .held(let location), .delivered(let location): location
      }
    }
  }

  /// The accuracy the application wants.
  var desiredAccuracy = LocationAccuracy.best
  /// Metres from the last delivered location below which a location is held; `nil` for none.
  var distanceFilter: Double?
  /// Metres of horizontal accuracy beyond which (or when unknown) a fix is dropped.
  var maximumHorizontalAccuracy: Double?
  /// How approximate locations are made.
  var reducedAccuracy = ReducedAccuracy.standard
  /// Seconds of fix time without a usable fix that make a gap.
  var gapInterval: TimeInterval = 10

  /// Where delivery stands.
  private(set) var phase = Phase.stopped(lastReducedDelivery: nil)
  /// The fix time of the last usable fix.
  private(set) var lastUsableFixTime: Date?
  /// Usable fixes taken so far (wrapping), what the watchdog compares.
  private(set) var usableFixCount = 0
  /// Whether the watchdog reported the source stale and no usable fix came since.
  private(set) var isStale = false

  /// Whether updates are on.
  var isUpdating: Bool {
    if case .stopped = phase { return false }
    return true
  }

  /// Turns updates on: the next location is the first.
  mutating func start() {
    if case .stopped(let last) = phase { phase = .afterGap(lastReducedDelivery: last) }
  }

  /// Turns updates off.
  mutating func stop() {
    phase = .stopped(lastReducedDelivery: phase.lastReducedDelivery)
  }

  /// Marks a gap: the next location goes out whatever the distance filter says.
  mutating func gap() {
    if case .delivering(_, let last) = phase { phase = .afterGap(lastReducedDelivery: last) }
  }

  /// Takes one fix of the source.
  ///
  /// - Parameters:
  ///   - fix: the fix.
  ///   - reduced: whether the client gets reduced accuracy (granted or desired).
  /// - Returns: what became of it.
  mutating func take(_ fix: Fix, reduced: Bool) -> Outcome {
    guard let raw = Location(fix) else {
      if fix.mode == .noFix { gap() }
      return .unusable
    }
    if let last = lastUsableFixTime, raw.timestamp.timeIntervalSince(last) > gapInterval {
      gap()
    }
    lastUsableFixTime = raw.timestamp
    usableFixCount &+= 1
    isStale = false
    if let maximum = maximumHorizontalAccuracy {
      guard let accuracy = raw.horizontalAccuracy, accuracy <= maximum else { return .inaccurate }
    }
    let location = reduced ? reducedAccuracy.snap(raw) : raw
    switch phase {
    case .stopped:
      return .held(location)
    case .afterGap:
      break
    case .delivering(let lastRaw, _):
      if let filter = distanceFilter, raw.distance(from: lastRaw) < filter {
        return .held(location)
      }
    }
    if reduced, let last = phase.lastReducedDelivery,
      raw.timestamp.timeIntervalSince(last) < reducedAccuracy.minimumInterval
    {
      return .held(location)
    }
    phase = .delivering(lastRaw: raw, lastReducedDelivery: reduced ? raw.timestamp : nil)
    return .delivered(location)
  }

  /// The watchdog's check: the source is stale when no usable fix came since the previous
  /// check (reported once until the next fix).
  ///
  /// - Parameter previousCount: ``usableFixCount`` at the previous check.
  /// - Returns: the count to compare with next time, and whether the source just became stale.
  mutating func checkStale(previousCount: Int) -> (count: Int, becameStale: Bool) {
    guard usableFixCount == previousCount, !isStale else { return (usableFixCount, false) }
    isStale = true
    return (usableFixCount, true)
  }
}
