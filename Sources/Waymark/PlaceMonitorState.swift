import FoundationEssentials
import Glibc
import WaymarkCore

extension PlaceMonitor {
  /// One accepted fix as the state machine remembers it.
  public struct Sample: Sendable, Hashable, Codable {
    /// Fix time (UTC).
    public var time: Date
    /// Position, degrees.
    public var coordinate: Coordinate
    /// Horizontal accuracy used, metres (the reported one, or the assumed one).
    public var accuracyMeters: Double
    /// Speed over ground the receiver reported (Doppler), metres per second; `nil` if unknown.
    /// Absent from snapshots written before it existed.
    public var speedMetersPerSecond: Double?
    /// Course over ground the receiver reported, degrees clockwise from true north; `nil` if
    /// unknown. Absent from snapshots written before it existed.
    public var courseDegrees: Double?

    /// Creates a sample.
    public init(
      time: Date, coordinate: Coordinate, accuracyMeters: Double,
      speedMetersPerSecond: Double? = nil, courseDegrees: Double? = nil
    ) {
      self.time = time
      self.coordinate = coordinate
      self.accuracyMeters = accuracyMeters
      self.speedMetersPerSecond = speedMetersPerSecond
      self.courseDegrees = courseDegrees
    }
  }

  /// A change of state waiting for confirmation.
  public struct Candidate: Sendable, Hashable, Codable {
    /// The last accepted fix before the change began (`nil` if there was none, or only across a
    /// fix loss); used to interpolate a pass-through.
    public var before: Sample?
    /// The first fix of the new state: the candidate arrival time.
    public var first: Sample
    /// The latest fix of the new state.
    public var last: Sample
    /// Consecutive fixes of the new state so far.
    public var count: Int
    /// Of those, the fixes that count towards the confirmation: for an arrival, the ones whose
    /// error circle lies mostly inside (see `Configuration.entryAccuracyFactor`); for a
    /// departure, all of them.
    public var confirmingCount: Int

    /// Creates a candidate; `confirmingCount` defaults to `count`.
    public init(
      before: Sample?, first: Sample, last: Sample, count: Int, confirmingCount: Int? = nil
    ) {
      self.before = before
      self.first = first
      self.last = last
      self.count = count
      self.confirmingCount = confirmingCount ?? count
    }

    /// Seconds of fix time since the first fix of the new state.
    public var heldSeconds: Double { last.time.timeIntervalSince(first.time) }
  }

  /// A confirmed stay inside a place: an open visit.
  public struct Stay: Sendable, Hashable, Codable {
    /// Arrival time (first fix inside, or interpolated crossing).
    public var arrival: Date
    /// The last fix inside the enter radius: the departure time if the device leaves now.
    public var lastInside: Sample
    /// The last accepted fix of any kind while the stay was open.
    public var lastFix: Date
    /// Fixes inside the enter radius during the stay.
    public var fixCount: Int
    /// Best horizontal accuracy of those fixes, metres.
    public var bestAccuracyMeters: Double

    /// Creates a stay.
    public init(
      arrival: Date, lastInside: Sample, lastFix: Date, fixCount: Int, bestAccuracyMeters: Double
    ) {
      self.arrival = arrival
      self.lastInside = lastInside
      self.lastFix = lastFix
      self.fixCount = fixCount
      self.bestAccuracyMeters = bestAccuracyMeters
    }
  }

  /// The detection state of one place: what a snapshot stores and a restart restores.
  ///
  /// ```
  ///            inside fix                      confirmed
  ///  outside ─────────────▶ arriving ───────────────────────▶ inside
  ///     ▲  ◀─────────────────┘ any other fix (pass-through?)  │  ▲
  ///     │                                   error circle       │  │ fix not clearly out
  ///     │        confirmed                  beyond exit radius ▼  │
  ///     └───────────────────────────────────────────────── departing
  /// ```
  public enum State: Sendable, Hashable, Codable {
    /// Not at the place, nothing pending.
    case outside
    /// Fixes inside the enter radius, not yet confirmed.
    case arriving(Candidate)
    /// Confirmed at the place.
    case inside(Stay)
    /// At the place, with fixes clearly beyond the exit radius not yet confirmed.
    case departing(Stay, Candidate)

    /// Whether the device counts as at the place (an open visit).
    public var isInside: Bool {
      switch self {
      case .inside, .departing: true
      case .outside, .arriving: false
      }
    }

    /// The open stay, if any.
    public var stay: Stay? {
      switch self {
      case .inside(let stay), .departing(let stay, _): stay
      case .outside, .arriving: nil
      }
    }
  }
}

/// What one place's state machine needs to know about a fix.
struct PlaceStepInput {
  /// The fix (already accepted by this place's accuracy gate and by the plausibility check).
  var fix: PlaceMonitor.Sample
  /// Distance from the place centre, metres.
  var distance: Double
  /// The previous fix that this place's accuracy gate accepts, however long ago.
  var previous: PlaceMonitor.Sample?
  /// Whether the segment from `previous` to `fix` may be used for a pass-through: `false` when
  /// `fix` starts a run of fixes that was accepted only after being held as suspect.
  var segmentIsPlausible = true
  /// In an `overlap: nearest` group: the fix lies inside a member that takes it (a nearer one,
  /// or one with an open visit that is not clearly farther), so it is not inside this place.
  var isTakenByAnotherPlace = false
  /// In an `overlap: nearest` group: the fix lies inside another member whose centre is nearer
  /// by more than twice the fix's accuracy, so it counts as clearly out of this place.
  var isClearlyAtAnotherPlace = false
}

/// The event a step produced, before the place's name is attached.
enum PlaceStepEvent {
  case arrival(time: Date, coordinate: Coordinate, reason: EventReason)
  case departure(time: Date, coordinate: Coordinate, arrival: Date, reason: EventReason)
}

extension PlaceMonitor.State {
  /// Advances the state machine of one place by one accepted fix. Pure: same inputs, same result.
  ///
  /// - Parameters:
  ///   - input: The fix, its distance to the centre, the previous accepted fix.
  ///   - rules: The place's resolved parameters.
  ///   - center: The place centre.
  ///   - configuration: The monitor's configuration (for the plausibility of a pass-through
  ///     segment).
  ///   - events: Receives the events that fired, in order.
  mutating func step(
    _ input: PlaceStepInput, rules: PlaceMonitor.Rules, center: Coordinate,
    configuration: PlaceMonitor.Configuration, events: inout [PlaceStepEvent]
  ) {
    let fix = input.fix
    let isInside = input.distance <= rules.enterRadiusMeters && !input.isTakenByAnotherPlace
    let isConfirming =
      isInside
      && input.distance + rules.entryAccuracyFactor * fix.accuracyMeters
        <= rules.enterRadiusMeters
    let isClearlyOut =
      input.distance - fix.accuracyMeters > rules.exitRadiusMeters
      || input.isClearlyAtAnotherPlace
    let step = Step(input: input, rules: rules)

    switch self {
    case .outside:
      if isInside {
        let candidate = PlaceMonitor.Candidate(
          before: input.previous, first: fix, last: fix, count: 1,
          confirmingCount: isConfirming ? 1 : 0)
        self = step.arriving(candidate, events: &events)
      } else if input.segmentIsPlausible, let previous = input.previous,
        fix.time.timeIntervalSince(previous.time) <= rules.fixLossSeconds,
        configuration.isPlausibleSegment(from: previous, to: fix),
        let crossing = PassThrough.crossing(
          from: previous, to: fix, center: center, radius: rules.enterRadiusMeters,
          endDistance: input.distance)
      {
        crossing.emit(rules: rules, confirmations: 0, events: &events)
      }

    case .arriving(var candidate):
      if isInside {
        candidate.count += 1
        if isConfirming { candidate.confirmingCount += 1 }
        candidate.last = fix
        self = step.arriving(candidate, events: &events)
      } else {
        self = .outside
        // Unconfirmed fixes inside, then out again: a pass-through if the straight line from
        // the fix before to this one cuts the circle (a parked device's noise does not), and
        // that line is one the receiver could have driven in the time.
        let radius = rules.enterRadiusMeters
        if let before = candidate.before,
          candidate.first.time.timeIntervalSince(before.time) <= rules.fixLossSeconds,
          fix.time.timeIntervalSince(candidate.last.time) <= rules.fixLossSeconds,
          fix.time.timeIntervalSince(before.time) <= 2 * rules.fixLossSeconds,
          configuration.isPlausibleSegment(from: before, to: fix),
          let chord = PassThrough.crossing(from: before, to: fix, center: center, radius: radius),
          let entry = PassThrough.crossing(
            from: before, to: candidate.first, center: center, radius: radius,
            allowInsideEnd: true),
          let exit = PassThrough.crossing(
            from: candidate.last, to: fix, center: center, radius: radius,
            allowInsideStart: true)
        {
          PassThrough(
            entryTime: entry.entryTime, entryPoint: entry.entryPoint, exitTime: exit.exitTime,
            exitPoint: exit.exitPoint, closestMeters: chord.closestMeters,
            accuracyMeters: max(before.accuracyMeters, fix.accuracyMeters)
          ).emit(rules: rules, confirmations: candidate.count, events: &events)
        }
      }

    case .inside(var stay):
      if isClearlyOut {
        let candidate = PlaceMonitor.Candidate(
          before: input.previous, first: fix, last: fix, count: 1)
        stay.lastFix = fix.time
        self = step.departing(stay, candidate, events: &events)
      } else {
        stay.record(fix, isInside: isInside)
        self = .inside(stay)
      }

    case .departing(var stay, var candidate):
      stay.lastFix = fix.time
      if isClearlyOut {
        candidate.count += 1
        candidate.confirmingCount += 1
        candidate.last = fix
        self = step.departing(stay, candidate, events: &events)
      } else {
        stay.record(fix, isInside: isInside)
        self = .inside(stay)
      }
    }
  }
}

/// Confirmation and event building for one step of one place.
private struct Step {
  var input: PlaceStepInput
  var rules: PlaceMonitor.Rules

  func reason(_ rule: String, _ candidate: PlaceMonitor.Candidate) -> EventReason {
    EventReason(
      rule: rule, distanceMeters: input.distance,
      horizontalAccuracyMeters: input.fix.accuracyMeters,
      enterRadiusMeters: rules.enterRadiusMeters, exitRadiusMeters: rules.exitRadiusMeters,
      confirmations: candidate.confirmingCount, dwellSeconds: candidate.heldSeconds)
  }

  func isConfirmed(_ candidate: PlaceMonitor.Candidate) -> Bool {
    candidate.confirmingCount >= rules.confirmations
      && candidate.heldSeconds >= rules.dwellSeconds
  }

  /// The state after an inside fix: still arriving, or arrived (with the arrival event).
  func arriving(
    _ candidate: PlaceMonitor.Candidate, events: inout [PlaceStepEvent]
  ) -> PlaceMonitor.State {
    guard isConfirmed(candidate) else { return .arriving(candidate) }
    events.append(
      .arrival(
        time: candidate.first.time, coordinate: input.fix.coordinate,
        reason: reason("inside", candidate)))
    return .inside(
      PlaceMonitor.Stay(
        arrival: candidate.first.time, lastInside: candidate.last, lastFix: input.fix.time,
        fixCount: candidate.count, bestAccuracyMeters: candidate.last.accuracyMeters))
  }

  /// The state after a fix clearly beyond the exit radius: departing, or gone (with the event).
  func departing(
    _ stay: PlaceMonitor.Stay, _ candidate: PlaceMonitor.Candidate,
    events: inout [PlaceStepEvent]
  ) -> PlaceMonitor.State {
    guard isConfirmed(candidate) else { return .departing(stay, candidate) }
    // A fix loss right before the first fix beyond the exit radius means the device left while
    // unseen; the departure time is still the last fix inside.
    let gap = candidate.before.map { candidate.first.time.timeIntervalSince($0.time) } ?? 0
    let rule = gap > rules.fixLossSeconds ? "fix-loss" : "outside"
    events.append(
      .departure(
        time: stay.lastInside.time, coordinate: input.fix.coordinate, arrival: stay.arrival,
        reason: reason(rule, candidate)))
    return .outside
  }
}

extension PlaceMonitor.Stay {
  mutating func record(_ fix: PlaceMonitor.Sample, isInside: Bool) {
    lastFix = fix.time
    guard isInside else { return }
    lastInside = fix
    fixCount += 1
    bestAccuracyMeters = min(bestAccuracyMeters, fix.accuracyMeters)
  }
}

/// A straight crossing of a place's circle between two fixes.
struct PassThrough {
  var entryTime: Date
  var entryPoint: Coordinate
  var exitTime: Date
  var exitPoint: Coordinate
  var closestMeters: Double
  var accuracyMeters: Double

  /// The crossing of the circle of `radius` metres around `center` by the segment from `start`
  /// to `end`, or `nil` when the segment misses it or an end lies inside (unless allowed).
  ///
  /// Both fixes are projected azimuthal-equidistantly about the centre (exact distances and
  /// bearings from the centre, so it holds at the poles and across the antimeridian); the
  /// segment is straight in that plane, which is right to centimetres for the few hundred
  /// metres between fixes. Times are interpolated linearly along the segment. `endDistance`,
  /// when the caller has it, is `center.distance(to: end.coordinate)`.
  static func crossing(
    from start: PlaceMonitor.Sample, to end: PlaceMonitor.Sample, center: Coordinate,
    radius: Double, allowInsideStart: Bool = false, allowInsideEnd: Bool = false,
    endDistance: Double? = nil
  ) -> PassThrough? {
    let d0 = center.distance(to: start.coordinate)
    let d1 = endDistance ?? center.distance(to: end.coordinate)
    if (d0 <= radius && !allowInsideStart) || (d1 <= radius && !allowInsideEnd) { return nil }
    let b0 = center.bearing(to: start.coordinate) * .pi / 180
    let b1 = center.bearing(to: end.coordinate) * .pi / 180
    let x0 = d0 * sin(b0)
    let y0 = d0 * cos(b0)
    let dx = d1 * sin(b1) - x0
    let dy = d1 * cos(b1) - y0
    let a = dx * dx + dy * dy
    guard a > 0 else { return nil }
    let closestT = min(1, max(0, -(x0 * dx + y0 * dy) / a))
    let cx = x0 + closestT * dx
    let cy = y0 + closestT * dy
    let closest = (cx * cx + cy * cy).squareRoot()
    guard closest <= radius else { return nil }
    // |P + tD|² = r²  →  a t² + 2 b t + c = 0
    let b = x0 * dx + y0 * dy
    let c = x0 * x0 + y0 * y0 - radius * radius
    let root = max(0, b * b - a * c).squareRoot()
    let entryT = min(1, max(0, (-b - root) / a))
    let exitT = min(1, max(0, (-b + root) / a))
    let span = end.time.timeIntervalSince(start.time)
    func point(_ t: Double) -> Coordinate {
      let x = x0 + t * dx
      let y = y0 + t * dy
      let bearing = atan2(x, y) * 180 / .pi
      return center.offset(by: (x * x + y * y).squareRoot(), bearingDegrees: bearing)
    }
    return PassThrough(
      entryTime: start.time.addingTimeInterval(span * entryT), entryPoint: point(entryT),
      exitTime: start.time.addingTimeInterval(span * exitT), exitPoint: point(exitT),
      closestMeters: closest, accuracyMeters: max(start.accuracyMeters, end.accuracyMeters))
  }

  func emit(rules: PlaceMonitor.Rules, confirmations: Int, events: inout [PlaceStepEvent]) {
    let reason = EventReason(
      rule: "pass-through", distanceMeters: closestMeters,
      horizontalAccuracyMeters: accuracyMeters, enterRadiusMeters: rules.enterRadiusMeters,
      exitRadiusMeters: rules.exitRadiusMeters, confirmations: confirmations,
      dwellSeconds: exitTime.timeIntervalSince(entryTime))
    events.append(.arrival(time: entryTime, coordinate: entryPoint, reason: reason))
    events.append(
      .departure(time: exitTime, coordinate: exitPoint, arrival: entryTime, reason: reason))
  }
}
