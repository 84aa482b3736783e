import FoundationEssentials
import Glibc
import WaymarkCore

/// Finds stays — where the device remained for a while — from fixes alone, online, on fix time:
/// no clock, no I/O, no declared places. The same fixes always give the same events.
///
/// ```
///            inside: add            outside for departureConfirmation: re-anchor
///   ┌──────────┐  ┌──────────────┐  ┌───────────────────────────────┐
///   │          ▼  │              ▼  │                               │
///  (none) ──▶ candidate ──(lasted minimumDuration)──▶ stay ──▶ leaving ──(back within
///                                     emit arrival                      returnWindow)──▶ stay
///                                                                  │
///                                           (returnWindow over, or a new stay) emit departure
/// ```
///
/// A fix is *inside* the current cluster when its distance from the cluster's centre is at most
/// `max(minimumRadiusMeters, accuracyFactor × its horizontal accuracy)`: the radius adapts to the
/// error the receiver reports. Fixes outside are held; they end the cluster only once they have
/// lasted `departureConfirmationSeconds` of fix time with no fix inside in between, so a
/// multipath burst or a single jump ends nothing. A new cluster is then built backwards from the
/// newest held fix over the held fixes that agree with it, so that an arrival is dated by the
/// first fix of the stay, not by when it was recognised. A cluster whose fixes span
/// `minimumDurationSeconds` becomes a stay (a red light does not). A stay the device leaves is
/// kept for `returnWindowSeconds` after its last fix inside: if the device comes back before it
/// has made another stay, the excursion (a long burst, a walk to the car) is forgotten and the
/// stay goes on. A cluster that was not a stay yet when the fixes left it is kept as long, and
/// goes on likewise if the Doppler speed of the excursion showed the device still (a multipath
/// burst in the first two minutes of a stop moves the position, not the speed). A gap in the
/// fixes ends nothing: a stay continues across it when the device comes back where it was.
///
/// Cost per fix: constant, plus the held fixes (at most `departureConfirmationSeconds` of them)
/// once per confirmation.
public struct StayDetector: Sendable {
  /// The detection settings.
  public struct Configuration: Sendable, Hashable {
    /// Seconds of fix time a stay must last to count (config `visit-min-duration`). Default
    /// 120 s: a red light or a level crossing is not a visit.
    public var minimumDurationSeconds: Double
    /// Smallest radius of a stay around its centre, metres. Default 40 m: a house and its
    /// garden, a car park row, eight times the error of a receiver under open sky.
    public var minimumRadiusMeters: Double
    /// A fix with horizontal accuracy `a` counts as inside within `accuracyFactor × a` of the
    /// centre when that is more than the minimum radius. Default 3.
    public var accuracyFactor: Double
    /// Fixes whose horizontal accuracy is worse than this, metres, are ignored. Default 100 m.
    public var maximumAccuracyMeters: Double
    /// Accuracy assumed, metres, for a fix that reports none. Default 25 m.
    public var assumedAccuracyMeters: Double
    /// Seconds of fix time the fixes must stay outside before the device has left. Default
    /// 30 s: multipath bursts last 5–15 s. The departure is still the last fix inside.
    public var departureConfirmationSeconds: Double
    /// Seconds after its last fix inside during which a stay the device left is resumed if the
    /// device comes back (and has made no other stay). Default 120 s.
    public var returnWindowSeconds: Double

    /// Creates a configuration; every parameter has the documented default.
    public init(
      minimumDurationSeconds: Double = 120, minimumRadiusMeters: Double = 40,
      accuracyFactor: Double = 3, maximumAccuracyMeters: Double = 100,
      assumedAccuracyMeters: Double = 25, departureConfirmationSeconds: Double = 30,
      returnWindowSeconds: Double = 120
    ) {
      self.minimumDurationSeconds = minimumDurationSeconds
      self.minimumRadiusMeters = minimumRadiusMeters
      self.accuracyFactor = accuracyFactor
      self.maximumAccuracyMeters = maximumAccuracyMeters
      self.assumedAccuracyMeters = assumedAccuracyMeters
      self.departureConfirmationSeconds = departureConfirmationSeconds
      self.returnWindowSeconds = returnWindowSeconds
    }
  }

  /// What a fix changed.
  public enum Event: Sendable, Hashable {
    /// A stay began (it is open; its arrival is back-dated to its first fix).
    case arrival(Stay)
    /// A stay ended (its departure is the last fix inside).
    case departure(Stay)

    /// The stay of the event.
    public var stay: Stay {
      switch self {
      case .arrival(let stay), .departure(let stay): stay
      }
    }
  }

  /// The settings.
  public let configuration: Configuration

  private var current: StayCluster?
  /// Fixes outside `current` since its last fix inside, oldest first.
  private var held: [StayCluster.Sample] = []
  /// A stay the device left, kept for `returnWindowSeconds` in case it comes back.
  private var leaving: StayCluster?
  /// A cluster that was not a stay yet when the fixes left it, kept for `returnWindowSeconds`
  /// in case the device comes back without having moved.
  private var abandoned: StayCluster?
  /// Fixes since `abandoned` was left, and how many of them showed the device moving.
  private var excursionFixes = 0
  private var excursionMoving = 0
  private var lastTime: Date?

  /// Largest share of the fixes of an excursion that may show the device moving for a cluster
  /// that was not a stay yet to go on when the device comes back: a receiver at rest reports a
  /// spike above the stillness rule now and then; a drive or a walk away and back is all
  /// moving.
  static let stillExcursionShare = 0.2

  /// Creates a detector with no history.
  public init(configuration: Configuration = .init()) {
    self.configuration = configuration
  }

  /// Creates a detector that goes on with `stay`, an open stay recorded before a restart: fixes
  /// inside it continue it, and leaving it ends it at its last fix inside, `lastSeen` at the
  /// earliest.
  public init(resuming stay: Stay, lastSeen: Date, configuration: Configuration = .init()) {
    self.configuration = configuration
    var cluster = StayCluster(
      StayCluster.Sample(
        coordinate: stay.coordinate, accuracy: max(1, stay.horizontalAccuracy),
        time: stay.arrivalDate))
    cluster.lastInside = max(lastSeen, stay.arrivalDate)
    cluster.count = max(1, stay.fixCount)
    cluster.isStay = true
    current = cluster
    lastTime = cluster.lastInside
  }

  /// The stay the device is in, open; `nil` when it is in none (yet).
  public var openStay: Stay? {
    guard let current, current.isStay else { return nil }
    return current.stay(closed: false)
  }

  /// Time of the newest fix inside the open stay; `nil` when the device is in none.
  public var lastFixInside: Date? {
    guard let current, current.isStay else { return nil }
    return current.lastInside
  }

  /// Feeds one location; returns the stays it began or ended, in order.
  public mutating func process(_ location: Location) -> [Event] {
    let accuracy = location.horizontalAccuracy ?? configuration.assumedAccuracyMeters
    guard accuracy.isFinite, accuracy <= configuration.maximumAccuracyMeters,
      location.coordinate.isValid
    else { return [] }
    // Fix time only moves forward: a repeated or older epoch changes nothing.
    if let lastTime, location.timestamp <= lastTime { return [] }
    lastTime = location.timestamp
    let sample = StayCluster.Sample(
      coordinate: location.coordinate, accuracy: max(1, accuracy), time: location.timestamp,
      isMoving: (location.speed ?? 0) > StayCluster.movingMetersPerSecond)
    var events: [Event] = []

    if let left = leaving {
      if sample.time.timeIntervalSince(left.lastInside) > configuration.returnWindowSeconds {
        events.append(.departure(left.stay(closed: true)))
        leaving = nil
      } else if left.contains(sample, configuration), current?.isStay != true {
        // Back where it was before it made another stay: the excursion is forgotten.
        current = left
        leaving = nil
        held.removeAll(keepingCapacity: true)
        current?.add(sample)
        return events
      }
    }
    if let candidate = abandoned {
      if sample.time.timeIntervalSince(candidate.lastInside) > configuration.returnWindowSeconds
        || current?.isStay == true
      {
        abandoned = nil
      } else if candidate.contains(sample, configuration),
        Double(excursionMoving) <= Self.stillExcursionShare * Double(excursionFixes)
      {
        // Back without having moved: the excursion was a burst, and the stop goes on.
        current = candidate
        abandoned = nil
        held.removeAll(keepingCapacity: true)
      } else {
        excursionFixes += 1
        if sample.isMoving { excursionMoving += 1 }
      }
    }
    guard var cluster = current else {
      current = StayCluster(sample)
      return events
    }
    if cluster.contains(sample, configuration) {
      cluster.add(sample)
      held.removeAll(keepingCapacity: true)
    } else {
      held.append(sample)
      guard
        sample.time.timeIntervalSince(held[0].time) >= configuration.departureConfirmationSeconds
      else { return events }
      if cluster.isStay {
        if let left = leaving { events.append(.departure(left.stay(closed: true))) }
        leaving = cluster
      } else if cluster.stillSeconds > 0 {
        abandoned = cluster
        excursionFixes = held.count
        excursionMoving = held.count(where: \.isMoving)
      }
      cluster = reanchored()
      held.removeAll(keepingCapacity: true)
    }
    if !cluster.isStay,
      cluster.lastInside.timeIntervalSince(cluster.first) >= configuration.minimumDurationSeconds,
      cluster.stillSeconds >= configuration.minimumDurationSeconds
    {
      cluster.refineArrival()
      cluster.isStay = true
      if let left = leaving {
        events.append(.departure(left.stay(closed: true)))
        leaving = nil
      }
      events.append(.arrival(cluster.stay(closed: false)))
    }
    current = cluster
    return events
  }

  /// Ends the input (the end of a log): a stay the device had left is closed. The stay it is in
  /// stays open (``openStay``).
  public mutating func finish() -> [Event] {
    guard let left = leaving else { return [] }
    leaving = nil
    return [.departure(left.stay(closed: true))]
  }

  /// A cluster built backwards from the newest held fix over the held fixes that agree with it.
  private func reanchored() -> StayCluster {
    var probe = StayCluster(held[held.count - 1])
    var index = held.count - 2
    while index >= 0, probe.contains(held[index], configuration) {
      probe.add(held[index])
      index -= 1
    }
    // The same fixes again, oldest first, so that the cluster keeps them in order.
    var cluster = StayCluster(held[index + 1])
    for sample in held[(index + 2)...] { cluster.add(sample) }
    return cluster
  }
}
