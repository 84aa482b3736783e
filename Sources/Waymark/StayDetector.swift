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
/// burst in the first two minutes of a stop moves the position, not the speed), or reported
/// none (positions cannot tell a burst from a trip away and back).
///
/// **Gaps.** Loggers sleep while the device stands still (phones, GPSLogger, OwnTracks) and wake
/// when it moves. A gap of ``gapSeconds`` or more that begins while the device is still at a
/// cluster (a stay, a stop with ``minimumObservedStillSeconds`` of still fixes, or — in a log
/// without speed, where only the gap itself says the device stood — any cluster its last fix was
/// in) is judged by where the device reappears. Back near the centre and still: the stay goes on,
/// observed (without speed, once the positions after the gap show it still; if they show it moving,
/// it left at the gap's end). Within walking reach — the stay's edge plus
/// `walkingSpeedMetersPerSecond` times the gap — but not back at its centre: the device stood there
/// through the gap and left towards where it reappeared; the departure is inferred, the latest one
/// consistent with walking pace (the gap's end when it reappears at the edge), and the stay keeps
/// the last fix seen there as its observed end (`Stay.observedDepartureDate`). A stop too short to
/// be a stay before the gap becomes one when it lasted `minimumDurationSeconds` to that departure.
/// Farther than walking reach but nearer than a drive from the gap's start at
/// `drivingSpeedMetersPerSecond` (a car stop the logger slept through, then a drive): the stay ends
/// at the departure that pace infers; so does a departure first inferred at walking pace when the
/// fixes of `paceSpanSeconds` (20 s) after the gap move at a driving pace. Farther still, or after
/// a gap longer than `maximumBridgedGapSeconds`: the stay ends at the gap's start. A gap that began
/// on the move but lasted `minimumDurationSeconds` and ended within the stay radius of where it
/// began (a walker stopped, the logger slept at once, the walker went on) is a stay of its own,
/// from the gap's start to its end (inferred).
///
/// **Noise.** A fix is still when its speed says so; a fix without speed when the positions of
/// the last minute show no motion (`StayMotionWindow`), and the arrival of a stay without
/// speed is then its first fix near the centre. The radius grows to what the still fixes' spread shows
/// (`StayCluster.learnedRadius`, at most `maximumLearnedRadiusMeters`) when the reported
/// error is missing or claims better than the fixes show.
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
    /// Longest gap in the fixes, seconds, across which a stay goes on (config
    /// `visit-max-gap`): a longer one ends the stay at its start, wherever the device
    /// reappears. Default 43,200 s (12 hours): a phone that slept through the night at home
    /// makes one stay there. trackintel's `gap_threshold` is 15 minutes.
    public var maximumBridgedGapSeconds: Double
    /// Walking pace, metres per second, by which a device that reappears after a gap is judged
    /// to have walked away from the stay's edge (its departure inferred) or to have gone
    /// farther than a walk (the stay ends at the gap's start). Default 1.4 m/s.
    public var walkingSpeedMetersPerSecond: Double
    /// Largest radius, metres, learned from the spread of a stay's still fixes when the
    /// reported error is missing or claims better than the fixes show. Default 100 m.
    public var maximumLearnedRadiusMeters: Double
    /// Door-to-door pace in a vehicle, metres per second, by which a device that reappears
    /// farther than a walk after a gap is judged to have been driven off: it stood at the stay
    /// until that pace from its edge would have brought it where it reappeared (the departure
    /// inferred). Default 5 m/s (18 km/h: town driving with its stops and a logger's wake-up).
    /// A slower pace dates departures earlier and makes fewer stays of short stops.
    public var drivingSpeedMetersPerSecond: Double

    /// Creates a configuration; every parameter has the documented default.
    public init(
      minimumDurationSeconds: Double = 120, minimumRadiusMeters: Double = 40,
      accuracyFactor: Double = 3, maximumAccuracyMeters: Double = 100,
      assumedAccuracyMeters: Double = 25, departureConfirmationSeconds: Double = 30,
      returnWindowSeconds: Double = 120, maximumBridgedGapSeconds: Double = 43_200,
      walkingSpeedMetersPerSecond: Double = 1.4, maximumLearnedRadiusMeters: Double = 100,
      drivingSpeedMetersPerSecond: Double = 5
    ) {
      self.drivingSpeedMetersPerSecond = drivingSpeedMetersPerSecond
      self.maximumBridgedGapSeconds = maximumBridgedGapSeconds
      self.walkingSpeedMetersPerSecond = walkingSpeedMetersPerSecond
      self.maximumLearnedRadiusMeters = maximumLearnedRadiusMeters
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
    /// A stay ended (its departure is the last fix inside, or inferred in a gap).
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
  /// Whether the newest fix was inside `current` and still, by its speed and its positions:
  /// a gap that follows it began while still.
  private var lastWasStillInside = false
  /// The newest fix, inside or not: where a gap began.
  private var lastSample: StayCluster.Sample?
  private var motion = StayMotionWindow()
  /// A stay's departure still to be judged by the motion of the fixes after a gap.
  private var afterGap: AfterGap?
  /// Seconds between the newest fix and the one before it: under ``gapSeconds`` when the
  /// logger was logging up to a gap that follows (it fell silent, as a logger does that sleeps
  /// at rest), not sampling sparsely anyway.
  private var lastInterval = Double.infinity

  /// The first fix after a gap that began still at the current cluster, and what the fixes
  /// that follow it may still change.
  private struct AfterGap: Sendable {
    enum Pending: Sendable {
      /// It reappeared within walking reach but beyond the edge by `beyondEdge` metres, the
      /// departure inferred at walking pace: if the fixes that follow move at a driving pace,
      /// it was driven off, later.
      case walkingInferred(beyondEdge: Double)
      /// It reappeared near the centre, its stillness unknown (no speed, and the positions
      /// before the gap say nothing): if the positions that follow show it moving, it left at
      /// the gap's end (the logger woke because it moved).
      case resumedNear
    }
    var sample: StayCluster.Sample
    /// The last fix before the gap.
    var began: Date
    var pending: Pending
  }

  /// Seconds between two fixes from which on the interval is a gap (the logger slept or the
  /// receiver lost the sky), not sampling.
  public static let gapSeconds = 60.0
  /// Seconds of still fixes a stop must have shown before a gap for the gap to count as
  /// begun while still, when the stop is not a stay yet and its fixes report speed (without
  /// speed, a logger's gap is the sign of stillness: the pace at which the device reappears
  /// decides).
  public static let minimumObservedStillSeconds = 20.0

  /// Seconds of fix time after the first fix after a gap over which its pace is measured from
  /// positions: a walker's noise of 20 m between two fixes reads 1 m/s over it.
  static let paceSpanSeconds = 20.0

  /// Largest share of the fixes of an excursion that may show the device moving for a cluster
  /// that was not a stay yet to go on when the device comes back: a receiver at rest reports a
  /// spike above the stillness rule now and then; a drive or a walk away and back is all
  /// moving. Only a fix's speed counts: without speed a multipath burst's jump away and back
  /// reads as fast motion by position, so a stop in a log without speed goes on whenever the
  /// device comes back within the return window without having made another stay.
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
    let interval = lastTime.map { location.timestamp.timeIntervalSince($0) } ?? 0
    lastTime = location.timestamp
    let fellSilent = lastInterval < Self.gapSeconds
    lastInterval = interval
    // After a gap the positions before it say nothing about the motion now.
    if interval >= Self.gapSeconds { motion.reset() }
    let velocity = motion.add(location.coordinate, at: location.timestamp)
    let movingByPosition = velocity.map { $0 > StayCluster.movingMetersPerSecond } ?? false
    // The speed when the fix has one; else the positions of the last minute.
    let sample = StayCluster.Sample(
      coordinate: location.coordinate, accuracy: max(1, accuracy), time: location.timestamp,
      isMoving: location.speed.map { $0 > StayCluster.movingMetersPerSecond } ?? movingByPosition,
      isMovingByPosition: movingByPosition, hasSpeed: location.speed != nil,
      isStillKnown: location.speed.map { $0 <= StayCluster.movingMetersPerSecond }
        ?? velocity.map { $0 <= StayCluster.movingMetersPerSecond } ?? false)
    var events: [Event] = []
    let wasStillInside = lastWasStillInside
    let before = lastSample
    lastWasStillInside = false
    lastSample = sample
    if interval >= Self.gapSeconds {
      afterGap = nil
      switch gap(
        interval, before: wasStillInside, fellSilent: fellSilent, from: before, sample, &events)
      {
      case .handled: return events
      case .continues: break
      }
    } else if afterGap != nil {
      judgeDepartureAfterGap(sample, &events)
    }

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
        if sample.hasSpeed, sample.isMoving { excursionMoving += 1 }
      }
    }
    guard var cluster = current else {
      current = StayCluster(sample)
      return events
    }
    if cluster.contains(sample, configuration), !joinsHeld(sample, cluster) {
      cluster.add(sample)
      held.removeAll(keepingCapacity: true)
      let still = !sample.isMoving && !sample.isMovingByPosition
      // Without speed the positions' stillness lags by up to a minute: being inside is enough.
      lastWasStillInside = sample.hasSpeed ? !sample.isMoving : true
      // Back near the centre and still after a gap: the device had not left.
      if still, sample.isStillKnown, cluster.inferredDeparture != nil,
        cluster.isNear(sample.coordinate)
      {
        cluster.inferredDeparture = nil
        cluster.gapStart = nil
      }
    } else {
      held.append(sample)
      guard
        sample.time.timeIntervalSince(held[0].time) >= configuration.departureConfirmationSeconds
      else { return events }
      cluster = leave(cluster, &events)
      // The new cluster is built back from this fix: a gap that follows begins inside it.
      lastWasStillInside = sample.hasSpeed ? !sample.isMoving : true
    }
    promoteIfLasted(&cluster, &events)
    current = cluster
    return events
  }

  /// Whether `sample`, inside `cluster`, goes with the fixes held outside it instead: the
  /// cluster is no stay yet and the fix lies nearer the newest held fix than the centre. A
  /// walk-in's centre lags behind the walker, so a stop just beyond it has fixes on both sides
  /// of the radius; those inside must not keep resetting the fixes that will make the stop.
  private func joinsHeld(_ sample: StayCluster.Sample, _ cluster: StayCluster) -> Bool {
    guard !cluster.isStay, let newest = held.last else { return false }
    return newest.coordinate.distance(to: sample.coordinate)
      < cluster.centre.distance(to: sample.coordinate)
  }

  /// Ends the input (the end of a log): a stay the device had left is closed. The stay it is in
  /// stays open (``openStay``).
  public mutating func finish() -> [Event] {
    guard let left = leaving else { return [] }
    leaving = nil
    return [.departure(left.stay(closed: true))]
  }

  /// Makes `cluster` a stay when it lasted `minimumDurationSeconds` — observed, with its
  /// still fixes spanning as long, or to a departure inferred in a gap — and emits its arrival
  /// (after the departure of a stay the device had left).
  private mutating func promoteIfLasted(_ cluster: inout StayCluster, _ events: inout [Event]) {
    let minimum = configuration.minimumDurationSeconds
    let observed =
      cluster.lastInside.timeIntervalSince(cluster.first) >= minimum
      && cluster.stillSeconds >= minimum
    let inferred =
      cluster.inferredDeparture.map {
        $0.timeIntervalSince(max(cluster.first, cluster.firstStill ?? cluster.first)) >= minimum
      } ?? false
    guard !cluster.isStay, observed || inferred else { return }
    cluster.refineArrival()
    cluster.isStay = true
    if let left = leaving {
      events.append(.departure(left.stay(closed: true)))
      leaving = nil
    }
    events.append(.arrival(cluster.stay(closed: false)))
  }

  /// The device has left `cluster` (the held fixes are confirmed): keeps it as the stay it
  /// may come back to, or the stop it may go on with, and returns the cluster built from the
  /// held fixes.
  private mutating func leave(_ cluster: StayCluster, _ events: inout [Event]) -> StayCluster {
    if cluster.isStay {
      if let left = leaving { events.append(.departure(left.stay(closed: true))) }
      leaving = cluster
    } else if cluster.stillSeconds > 0 {
      abandoned = cluster
      excursionFixes = held.count
      excursionMoving = held.count(where: { $0.hasSpeed && $0.isMoving })
    }
    let next = reanchored()
    held.removeAll(keepingCapacity: true)
    return next
  }

  /// What a gap did: everything (`handled`: the sample started afresh), or nothing yet (the
  /// sample goes on through the usual rules).
  private enum GapOutcome {
    case handled
    case continues
  }

  /// Judges a gap of `interval` seconds that `sample` ends (see the type's **Gaps**).
  private mutating func gap(
    _ interval: Double, before wasStillInside: Bool, fellSilent: Bool,
    from last: StayCluster.Sample?,
    _ sample: StayCluster.Sample, _ events: inout [Event]
  ) -> GapOutcome {
    guard var cluster = current else { return .continues }
    var wasStillInside = wasStillInside
    if fellSilent, cluster.isStay, let last = held.last,
      last.time.timeIntervalSince(held[0].time) < configuration.departureConfirmationSeconds,
      held.allSatisfy({ !$0.hasSpeed || !$0.isMoving })
    {
      // Fixes beyond the stay's edge for less than the departure confirmation before a logger
      // that was logging fell silent, none moving by its speed: no departure was confirmed,
      // and such a logger sleeps because the device is still. The noise of the stay.
      held.removeAll(keepingCapacity: true)
      wasStillInside = last.hasSpeed ? !last.isMoving : true
    } else if !held.isEmpty {
      // The fixes before the gap had left the cluster: they are where the device was.
      let last = held[held.count - 1]
      cluster = leave(cluster, &events)
      wasStillInside = last.hasSpeed ? !last.isMoving : true
      current = cluster
    }
    let began = cluster.lastInside
    let observed =
      cluster.hasSpeed ? cluster.stillSeconds : cluster.lastInside.timeIntervalSince(cluster.first)
    let stillBefore =
      wasStillInside
      && (cluster.isStay || !cluster.hasSpeed && fellSilent
        || observed >= Self.minimumObservedStillSeconds)
    let distance = cluster.centre.distance(to: sample.coordinate)
    let edge = cluster.radius(for: sample, configuration)
    let reach = edge + configuration.walkingSpeedMetersPerSecond * interval
    let driven = sample.time.addingTimeInterval(
      -max(0, distance - edge) / configuration.drivingSpeedMetersPerSecond)
    if interval <= configuration.maximumBridgedGapSeconds, stillBefore, distance > reach,
      driven > began
    {
      // Farther than a walk, nearer than a drive from the gap's start: the device stood here
      // until it was driven off (a car stop that the logger slept through).
      if let left = leaving { events.append(.departure(left.stay(closed: true))) }
      leaving = nil
      abandoned = nil
      held.removeAll(keepingCapacity: true)
      cluster.inferredDeparture = driven
      cluster.gapStart = began
      promoteIfLasted(&cluster, &events)
      if cluster.isStay { events.append(.departure(cluster.stay(closed: true))) }
      current = StayCluster(sample)
      return .handled
    }
    if interval > configuration.maximumBridgedGapSeconds || stillBefore && distance > reach {
      // Too long to bridge, or farther than a drive: whatever stood here ends at the gap's
      // start.
      if let left = leaving { events.append(.departure(left.stay(closed: true))) }
      if cluster.isStay { events.append(.departure(cluster.stay(closed: true))) }
      leaving = nil
      abandoned = nil
      held.removeAll(keepingCapacity: true)
      current = StayCluster(sample)
      return .handled
    }
    guard stillBefore else {
      _ = stood(interval, from: last, to: sample, edge: edge, &events)
      return .continues
    }
    let still = !sample.isMoving && !sample.isMovingByPosition
    if still && cluster.isStay && cluster.isNear(sample.coordinate) {
      // Back at the centre. Without speed its stillness is unknown until the positions after
      // the gap tell: a logger that woke because the device moved may have woken near it.
      if !sample.isStillKnown {
        afterGap = AfterGap(sample: sample, began: began, pending: .resumedNear)
      }
      return .continues
    }
    // Within walking reach but not back at the centre (or not still), or back at a stop that
    // was not a stay yet: the device stood here through the gap (and walked off towards where
    // it reappeared). Fixes back at the centre and still withdraw the inference.

    let beyondEdge = max(0, distance - edge)
    let walked = beyondEdge / configuration.walkingSpeedMetersPerSecond
    cluster.inferredDeparture = max(began, sample.time.addingTimeInterval(-walked))
    cluster.gapStart = began
    if beyondEdge > 0 {
      afterGap = AfterGap(
        sample: sample, began: began, pending: .walkingInferred(beyondEdge: beyondEdge))
    }
    promoteIfLasted(&cluster, &events)
    current = cluster
    return .continues
  }

  /// Judges the departure left open by a gap (``afterGap``) by the motion of the fixes after
  /// it, before `sample` goes through the usual rules: driven off (a pace of
  /// `drivingSpeedMetersPerSecond` or more over ``paceSpanSeconds`` from the first fix after
  /// the gap) dates the departure at that pace, later than walking pace did; positions that
  /// show a device back at the centre moving date it at the gap's end.
  private mutating func judgeDepartureAfterGap(
    _ sample: StayCluster.Sample, _ events: inout [Event]
  ) {
    guard let after = afterGap else { return }
    guard var cluster = current, cluster.first <= after.began else {
      afterGap = nil
      return
    }
    switch after.pending {
    case .walkingInferred(let beyondEdge):
      let elapsed = sample.time.timeIntervalSince(after.sample.time)
      guard elapsed >= Self.paceSpanSeconds else { return }
      afterGap = nil
      let pace = after.sample.coordinate.distance(to: sample.coordinate) / elapsed
      guard pace >= configuration.drivingSpeedMetersPerSecond,
        let walked = cluster.inferredDeparture, cluster.gapStart == after.began
      else { return }
      let driven = after.sample.time.addingTimeInterval(
        -beyondEdge / configuration.drivingSpeedMetersPerSecond)
      cluster.inferredDeparture = max(walked, driven)
    case .resumedNear:
      // Still unknown until the positions after the gap can tell.
      guard sample.isStillKnown || sample.isMovingByPosition else { return }
      afterGap = nil
      guard sample.isMovingByPosition, cluster.inferredDeparture == nil else { return }
      cluster.inferredDeparture = after.sample.time
      cluster.gapStart = after.began
    }
    promoteIfLasted(&cluster, &events)
    current = cluster
  }

  /// A gap that did not begin at a stop but ended where it began (within the stay radius of
  /// its last fix) after `minimumDurationSeconds` or more: the logger slept because the device
  /// stood (a walker stops, the logger sleeps at once, the walker goes on). A stay from the
  /// gap's start, its departure inferred at the gap's end; the cluster before is left.
  ///
  /// - Returns: whether the gap made a stay.
  private mutating func stood(
    _ interval: Double, from last: StayCluster.Sample?, to sample: StayCluster.Sample,
    edge: Double, _ events: inout [Event]
  ) -> Bool {
    guard let last, interval >= configuration.minimumDurationSeconds,
      last.coordinate.distance(to: sample.coordinate) <= edge
    else { return false }
    if let left = leaving { events.append(.departure(left.stay(closed: true))) }
    if let cluster = current, cluster.isStay {
      events.append(.departure(cluster.stay(closed: true)))
    }
    leaving = nil
    abandoned = nil
    held.removeAll(keepingCapacity: true)
    var cluster = StayCluster(last)
    cluster.inferredDeparture = sample.time
    cluster.gapStart = last.time
    promoteIfLasted(&cluster, &events)
    current = cluster
    return true
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
