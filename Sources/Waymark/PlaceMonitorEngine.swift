import FoundationEssentials
import Glibc
import WaymarkCore

/// The deterministic core of `PlaceMonitor`: places, their spatial index and the state of every
/// place that is not idle. A value type with no clock, no I/O and no callbacks: the same places
/// and the same fixes give the same events, byte for byte.
///
/// Cost per fix: the circles near the segment from the previous fix (the cells of a region
/// about 110 m around it, probed in the spatial index when the segment leaves that region —
/// once in tens of fixes — or one cell per grid level in use after a gap), a cheap planar
/// pre-filter on them, and the state machine of the places that are not idle (the device is at,
/// arriving at or leaving them — a handful, kept in place order without a dictionary). Idle
/// places take no per-fix work and no state memory.
public struct PlaceMonitorEngine: Sendable {
  /// The detection defaults.
  public let configuration: PlaceMonitor.Configuration

  /// Ids and names, packed, with the id lookup.
  private let names: PlaceMonitorNames
  /// Rules of places with overrides; the others derive theirs from the configuration.
  private let overriddenRules: [Int32: PlaceMonitor.Rules]
  /// The widest accuracy gate of any place: a worse fix is ignored everywhere.
  private let widestGateMeters: Double
  private let index: SpatialIndex

  /// The places that are not idle, with their states, in place order: a handful (the device
  /// is at, arriving at or leaving them), found by a binary search.
  private var states: [(place: Int32, state: PlaceMonitor.State)] = []
  private var previous: PlaceMonitor.Sample?
  /// `Configuration.heading(of: previous)`, kept so each fix's course is turned into a vector
  /// once.
  private var previousHeading: PlaceMonitor.Configuration.Heading?
  /// The `overlap: nearest` group number of each place that is in one.
  private let nearestGroups: [Int32: Int32]
  /// Fixes held as suspect since the last accepted one (docs/guide/places-and-visits.md,
  /// "Detection"), oldest first.
  private var suspects: [PlaceMonitor.Sample] = []
  private var candidates: [Int32] = []
  /// The circles near the last fixes, probed from the index once for many fixes.
  private var nearby = NearbyCircles()
  private var stepped: [(place: Int32, event: PlaceStepEvent)] = []
  /// The rules of the place stepped last: the device is usually at one place fix after fix,
  /// and its rules (the table's and the configuration's, neither of which changes) are then
  /// not looked up and derived again at each fix.
  private var lastRules: (place: Int32, rules: PlaceMonitor.Rules)?
  /// Testing aid: step every idle place on every fix, without the index or the pre-filter, as
  /// the reference the indexed path must match event for event.
  var isExhaustive = false

  /// Creates an engine over `places` (ids should be unique; a later duplicate is ignored).
  public init(places: [Place], configuration: PlaceMonitor.Configuration = .init()) {
    self.init(table: PlaceTable(places), configuration: configuration)
  }

  /// Creates an engine over the places of `table`, in its order.
  public init(table: PlaceTable, configuration: PlaceMonitor.Configuration = .init()) {
    self.configuration = configuration
    var overridden: [Int32: PlaceMonitor.Rules] = [:]
    var gate = configuration.maximumAccuracyMeters
    var groups: [Int32: Int32] = [:]
    var groupNumbers: [String: Int32] = [:]
    for (number, detection) in zip(table.overriddenPlaces, table.overrides) {
      let rules = configuration.rules(
        enterRadiusMeters: table.radii[Int(number)], overrides: detection)
      overridden[number] = rules
      gate = max(gate, rules.maximumAccuracyMeters)
      if detection.overlap == .nearest, let group = detection.group {
        let next = Int32(groupNumbers.count)
        groups[number] = groupNumbers[group, default: next]
        groupNumbers[group] = groups[number]
      }
    }
    self.nearestGroups = groups
    self.names = table.names.sealed()
    self.overriddenRules = overridden
    self.widestGateMeters = gate
    self.index =
      table.index
      ?? SpatialIndex(
        latitudes: table.latitudes, longitudes: table.longitudes, radiiMeters: table.radii)
  }

  /// The id of the place whose circle holds `coordinate` and whose centre is nearest (the
  /// lower place number on a tie), or `nil`.
  public func nearestPlaceID(containing coordinate: Coordinate) -> String? {
    var best: (place: Int, distance: Double)?
    for place in index.circles(containing: coordinate) {
      let distance = index.center(of: place).distance(to: coordinate)
      if distance < best?.distance ?? .infinity { best = (place, distance) }
    }
    return best.map { names.id($0.place) }
  }

  /// Number of places monitored.
  public var placeCount: Int { names.count }

  /// The rules in force for place number `place`.
  func rules(_ place: Int32) -> PlaceMonitor.Rules {
    overriddenRules[place]
      ?? configuration.rules(enterRadiusMeters: index.radiusMeters(of: Int(place)))
  }

  // MARK: - Processing

  /// Feeds one location and returns the events it caused, in a deterministic order.
  ///
  /// Ignored: locations with an invalid coordinate, an accuracy worse than every place's gate,
  /// or a time not after the previous location taken (duplicates, reordering). A location whose
  /// displacement from the last accepted one is implausible is held as suspect
  /// (docs/guide/places-and-visits.md, "Detection") and reaches the places only if its run is
  /// later accepted.
  public mutating func process(_ location: Location) -> [PlaceEvent] {
    let accuracy = location.horizontalAccuracy ?? configuration.assumedAccuracyMeters
    guard location.coordinate.isValid, accuracy.isFinite, accuracy <= widestGateMeters else {
      return []
    }
    if let latest = suspects.last ?? previous, location.timestamp <= latest.time { return [] }
    let speed = location.speed.flatMap { $0.isFinite && $0 >= 0 ? $0 : nil }
    let course = location.course.flatMap { $0.isFinite ? $0 : nil }
    let fix = PlaceMonitor.Sample(
      time: location.timestamp, coordinate: location.coordinate,
      accuracyMeters: max(0, accuracy), speedMetersPerSecond: speed, courseDegrees: course)

    let planar = PlanarFrame(at: fix.coordinate)
    guard let previous else {
      return feed(
        fix, planar: planar, heading: PlaceMonitor.Configuration.heading(of: fix),
        segmentIsPlausible: true)
    }
    // The common case, cheaply: no suspects, and the planar distance (within 0.5 % of the
    // great-circle one this close) is clearly within the bound.
    if suspects.isEmpty, let planar, let offset = planar.project(previous.coordinate) {
      let approximate = (offset.x * offset.x + offset.y * offset.y).squareRoot()
      let heading = PlaceMonitor.Configuration.heading(of: fix)
      if approximate < 10_000,
        approximate * 1.01 + 0.01 <= configuration.plausibleJumpMeters(from: previous, to: fix),
        configuration.courseRatio(
          from: previous, heading: previousHeading, to: fix, heading: heading,
          east: -offset.x, north: -offset.y) <= 1
      {
        return feed(fix, planar: planar, heading: heading, segmentIsPlausible: true)
      }
    }
    let fromAccepted = jumpRatio(from: previous, to: fix)
    guard let lastSuspect = suspects.last else {
      if fromAccepted <= 1 {
        return feed(
          fix, planar: planar, heading: PlaceMonitor.Configuration.heading(of: fix),
          segmentIsPlausible: true)
      }
      suspects = [fix]
      return []
    }
    let fromSuspects = jumpRatio(from: lastSuspect, to: fix)
    if fromAccepted <= 1 && fromAccepted <= fromSuspects {
      // The suspect run ends: its fixes that fit between the last accepted fix and this one
      // (a good stretch behind one stray fix) are accepted in order, the rest (a burst) are
      // dropped.
      let run = suspects
      suspects.removeAll()
      var events: [PlaceEvent] = []
      for sample in run {
        guard let reference = self.previous, jumpRatio(from: reference, to: sample) <= 1,
          jumpRatio(from: sample, to: fix) <= 1
        else { continue }
        events += feed(
          sample, planar: PlanarFrame(at: sample.coordinate),
          heading: PlaceMonitor.Configuration.heading(of: sample), segmentIsPlausible: true)
      }
      return events
        + feed(
          fix, planar: planar, heading: PlaceMonitor.Configuration.heading(of: fix),
          segmentIsPlausible: true)
    }
    guard fromSuspects <= 1 else {
      suspects = [fix]
      return []
    }
    suspects.append(fix)
    guard let first = suspects.first,
      fix.time.timeIntervalSince(first.time) >= configuration.suspectHoldSeconds,
      suspects.count >= max(1, configuration.confirmations)
    else { return [] }
    // The run has been consistent with itself for long enough: it is the truth now. Feed it in
    // order; the jump into it is no segment to interpolate a pass-through on.
    let run = suspects
    suspects.removeAll()
    var events: [PlaceEvent] = []
    for (position, sample) in run.enumerated() {
      events += feed(
        sample, planar: PlanarFrame(at: sample.coordinate),
        heading: PlaceMonitor.Configuration.heading(of: sample),
        segmentIsPlausible: position > 0)
    }
    return events
  }

  /// The plausibility of the move from `start` to `end` (docs/guide/places-and-visits.md,
  /// "Detection"): the larger of the distance test and, when both fixes move with a course, the course test. At most 1
  /// is plausible.
  private func jumpRatio(from start: PlaceMonitor.Sample, to end: PlaceMonitor.Sample) -> Double {
    let ratio = configuration.jumpRatio(from: start, to: end)
    guard let frame = PlanarFrame(at: end.coordinate), let offset = frame.project(start.coordinate)
    else { return ratio }
    return max(
      ratio, configuration.courseRatio(from: start, to: end, east: -offset.x, north: -offset.y))
  }

  /// Runs one accepted fix through the places: the ones that are not idle, then the idle ones
  /// whose circle holds the fix or meets the segment from the previous fix.
  private mutating func feed(
    _ fix: PlaceMonitor.Sample, planar: PlanarFrame?,
    heading: PlaceMonitor.Configuration.Heading?, segmentIsPlausible: Bool
  ) -> [PlaceEvent] {
    defer {
      previous = fix
      previousHeading = heading
    }
    stepped.removeAll(keepingCapacity: true)

    // 1. Places that are not idle (`states`, in place order), stepped in `stepAll`.
    // 2. Idle places whose circle holds the fix or meets the segment from the previous fix.
    // A conservative planar pre-filter runs on the geometry stored in the index cells, so
    // exact great-circle work is done only for the few circles that pass. The segment from the
    // previous fix: in the fix's planar frame when it is short, else as a cap around its middle.
    let (segmentStart, exactSegment) = segment(
      to: fix, planar: planar, isPlausible: segmentIsPlausible)
    var candidates = self.candidates
    self.candidates = []
    candidates.removeAll(keepingCapacity: true)
    if isExhaustive {
      candidates.append(contentsOf: (0..<Int32(names.count)))
    } else if let previous, segmentStart != nil {
      // The usual case, with no closure: the circles near the last fixes, probed again only
      // when the segment leaves their region.
      let box = SpatialIndex.Box(segmentFrom: previous.coordinate, to: fix.coordinate)
      if !nearby.region.contains(box) { nearby.refill(around: box, from: index) }
      for candidate in nearby.candidates
      where Self.mayMeet(candidate, planar: planar, segmentStart: segmentStart) {
        candidates.append(Int32(candidate.circle))
      }
    } else {
      var found: [Int32] = []
      func consider(_ candidate: SpatialIndex.Candidate) {
        if Self.mayMeet(candidate, planar: planar, segmentStart: nil) {
          found.append(Int32(candidate.circle))
        }
      }
      if let exactSegment {
        index.forEachCandidate(near: exactSegment.mid, radiusMeters: exactSegment.half, consider)
      } else {
        index.forEachCandidate(near: fix.coordinate, consider)
      }
      candidates.append(contentsOf: found)
    }
    if candidates.count > 1 {
      candidates.sort()
      var unique = 0
      for position in candidates.indices
      where unique == 0 || candidates[unique - 1] != candidates[position] {
        candidates[unique] = candidates[position]
        unique += 1
      }
      candidates.removeSubrange(unique...)
    }
    stepAll(idle: candidates, fix: fix, segmentIsPlausible: segmentIsPlausible)
    self.candidates = candidates

    guard !stepped.isEmpty else { return [] }
    return stepped.enumerated()
      .sorted { lhs, rhs in
        let (l, r) = (lhs.element, rhs.element)
        if time(of: l.event) != time(of: r.event) { return time(of: l.event) < time(of: r.event) }
        if l.place != r.place { return l.place < r.place }
        return lhs.offset < rhs.offset
      }
      .map { event(place: $0.element.place, $0.element.event) }
  }

  /// The segment from the previous accepted fix to `fix`, when it is one to look along (plausible,
  /// within the fix-loss time, not standing still): its start in `fix`'s planar frame when that
  /// is within 2 km, else the cap around its middle that holds it.
  @inline(__always)
  private func segment(
    to fix: PlaceMonitor.Sample, planar: PlanarFrame?, isPlausible: Bool
  ) -> (start: (x: Double, y: Double)?, cap: (mid: Coordinate, half: Double)?) {
    guard isPlausible, let previous,
      fix.time.timeIntervalSince(previous.time) <= configuration.fixLossSeconds,
      previous.coordinate != fix.coordinate
    else { return (nil, nil) }
    if let planar, let start = planar.project(previous.coordinate),
      start.x * start.x + start.y * start.y < 4e6
    {
      return (start, nil)
    }
    let length = previous.coordinate.distance(to: fix.coordinate)
    let bearing = previous.coordinate.bearing(to: fix.coordinate)
    let mid = previous.coordinate.offset(by: length / 2, bearingDegrees: bearing)
    return (nil, (mid, length / 2 + 1))
  }

  /// The conservative planar pre-filter: whether `candidate`'s circle may hold the fix at the
  /// origin of `planar` or meet the segment from `segmentStart` to it (always, without a frame
  /// or for a circle too large or unknown).
  @inline(__always)
  private static func mayMeet(
    _ candidate: SpatialIndex.Candidate, planar: PlanarFrame?,
    segmentStart: (x: Double, y: Double)?
  ) -> Bool {
    guard let planar else { return true }
    let limit = candidate.radiusMeters * 1.01 + 1
    guard limit < 10_000 else { return true }
    let point = planar.offset(latitude: candidate.latitude, longitude: candidate.longitude)
    if point.x * point.x + point.y * point.y <= limit * limit { return true }
    guard let segmentStart else { return false }
    return PlanarFrame.segmentDistanceSquared(from: point, start: segmentStart) <= limit * limit
  }

  /// Steps the places that are not idle (`states`, in place order), then the idle ones among
  /// `idle` (each place once; the order does not matter, events are sorted afterwards) with
  /// `fix`, settling `overlap: nearest` groups first.
  @inline(__always)
  private mutating func stepAll(
    idle: [Int32], fix: PlaceMonitor.Sample, segmentIsPlausible: Bool
  ) {
    let claims =
      nearestGroups.isEmpty ? nil : nearestClaims(states.map(\.place) + idle, fix: fix)
    func input(for place: Int32) -> PlaceStepInput {
      var input = PlaceStepInput(
        fix: fix, distance: 0, previous: nil, segmentIsPlausible: segmentIsPlausible)
      if let claims, let group = nearestGroups[place], let claim = claims[group],
        claim.owner != place
      {
        input.isTakenByAnotherPlace = true
        let distance = index.center(of: Int(place)).distance(to: fix.coordinate)
        input.isClearlyAtAnotherPlace = claim.distance + 2 * fix.accuracyMeters < distance
      }
      return input
    }
    // Out of `self` while they step (each in place, no copy), back in below.
    var states = self.states
    self.states = []
    let activeCount = states.count
    var idleAfter = false
    for position in 0..<activeCount {
      let place = states[position].place
      step(place, state: &states[position].state, input: input(for: place))
      if case .outside = states[position].state { idleAfter = true }
    }
    for place in idle
    where activeCount == 0 || Self.position(of: place, in: states[..<activeCount]) == nil {
      var state = PlaceMonitor.State.outside
      step(place, state: &state, input: input(for: place))
      if case .outside = state { continue }
      states.append((place, state))
    }
    if idleAfter { states.removeAll { if case .outside = $0.state { true } else { false } } }
    if states.count > activeCount || idleAfter { states.sort { $0.place < $1.place } }
    self.states = states
  }

  /// The position of `place` in `states` (in place order), or `nil`.
  private static func position(
    of place: Int32, in states: ArraySlice<(place: Int32, state: PlaceMonitor.State)>
  ) -> Int? {
    let low = insertionPoint(of: place, in: states)
    return low < states.endIndex && states[low].place == place ? low : nil
  }

  /// The first position in `states` (in place order) whose place is not below `place`.
  private static func insertionPoint(
    of place: Int32, in states: ArraySlice<(place: Int32, state: PlaceMonitor.State)>
  ) -> Int {
    var (low, high) = (states.startIndex, states.endIndex)
    while low < high {
      let middle = (low + high) / 2
      if states[middle].place < place { low = middle + 1 } else { high = middle }
    }
    return low
  }

  /// The state of place number `place` (`.outside` when idle).
  private func state(of place: Int32) -> PlaceMonitor.State {
    Self.position(of: place, in: states[...]).map { states[$0].state } ?? .outside
  }

  /// For each `overlap: nearest` group with a member among `places` whose circle holds `fix`:
  /// the member that takes the fix (the nearest one containing it, unless a member with an
  /// open visit is not clearly farther — then that one, or nobody if it does not contain the
  /// fix) and its distance.
  private func nearestClaims(
    _ places: [Int32], fix: PlaceMonitor.Sample
  ) -> [Int32: (owner: Int32, distance: Double)] {
    var nearest: [Int32: (place: Int32, distance: Double)] = [:]
    var open: [Int32: (place: Int32, distance: Double)] = [:]
    for place in places {
      guard let group = nearestGroups[place] else { continue }
      let distance = index.center(of: Int(place)).distance(to: fix.coordinate)
      if distance <= index.radiusMeters(of: Int(place)),
        nearest[group].map({ distance < $0.distance }) ?? true
      {
        nearest[group] = (place, distance)
      }
      if state(of: place).isInside, open[group].map({ distance < $0.distance }) ?? true {
        open[group] = (place, distance)
      }
    }
    var claims: [Int32: (owner: Int32, distance: Double)] = [:]
    for (group, candidate) in nearest {
      if let holder = open[group], holder.place != candidate.place,
        !(candidate.distance + 2 * fix.accuracyMeters < holder.distance)
      {
        let contains = holder.distance <= index.radiusMeters(of: Int(holder.place))
        claims[group] = (contains ? holder.place : -1, holder.distance)
      } else {
        claims[group] = (candidate.place, candidate.distance)
      }
    }
    return claims
  }

  /// Steps place number `place` from `state` with `input` (unless the fix is too inaccurate for
  /// its rules), collecting its events in `stepped`.
  private mutating func step(
    _ place: Int32, state: inout PlaceMonitor.State, input: PlaceStepInput
  ) {
    let rules: PlaceMonitor.Rules
    if let last = lastRules, last.place == place {
      rules = last.rules
    } else {
      rules = self.rules(place)
      lastRules = (place, rules)
    }
    let fix = input.fix
    guard fix.accuracyMeters <= rules.maximumAccuracyMeters else { return }
    let center = index.center(of: Int(place))
    var input = input
    input.distance = center.distance(to: fix.coordinate)
    input.previous = self.previous.flatMap {
      $0.accuracyMeters <= rules.maximumAccuracyMeters ? $0 : nil
    }
    var events: [PlaceStepEvent] = []
    state.step(
      input, rules: rules, center: center, configuration: configuration, events: &events)
    for event in events { stepped.append((place, event)) }
  }

  private func time(of event: PlaceStepEvent) -> Date {
    switch event {
    case .arrival(let time, _, _), .departure(let time, _, _, _): time
    }
  }

  private func event(place: Int32, _ event: PlaceStepEvent) -> PlaceEvent {
    let id = names.id(Int(place))
    let name = names.name(Int(place))
    switch event {
    case .arrival(let time, let coordinate, let reason):
      return .arrival(
        .init(time: time, placeID: id, placeName: name, coordinate: coordinate, reason: reason))
    case .departure(let time, let coordinate, let arrival, let reason):
      return .departure(
        .init(
          time: time, placeID: id, placeName: name, coordinate: coordinate, arrival: arrival,
          reason: reason))
    }
  }

  // MARK: - State

  /// The state of the place with `placeID` (`.outside` for an idle place); `nil` for an unknown
  /// id.
  public func state(for placeID: String) -> PlaceMonitor.State? {
    guard let number = names.number(of: placeID) else { return nil }
    return state(of: number)
  }

  /// The name of the place with `placeID`; `nil` for an unknown id.
  public func name(of placeID: String) -> String? {
    names.number(of: placeID).map { names.name(Int($0)) }
  }

  /// Replaces the state of the place with `placeID`; unknown ids are ignored.
  public mutating func setState(_ state: PlaceMonitor.State, for placeID: String) {
    guard let number = names.number(of: placeID) else { return }
    if let position = Self.position(of: number, in: states[...]) {
      if case .outside = state {
        states.remove(at: position)
      } else {
        states[position].state = state
      }
    } else if case .outside = state {
      return
    } else {
      states.insert((number, state), at: Self.insertionPoint(of: number, in: states[...]))
    }
  }

  /// Everything needed to resume after a restart.
  public func snapshot() -> PlaceMonitor.Snapshot {
    var places: [String: PlaceMonitor.State] = [:]
    for (number, state) in states { places[names.id(Int(number))] = state }
    return PlaceMonitor.Snapshot(previous: previous, places: places, suspects: suspects)
  }

  /// Resumes from `snapshot`: places not in it become idle; ids no longer monitored are dropped.
  public mutating func restore(_ snapshot: PlaceMonitor.Snapshot) {
    states = []
    for (id, state) in snapshot.places { setState(state, for: id) }
    previous = snapshot.previous
    previousHeading = snapshot.previous.flatMap(PlaceMonitor.Configuration.heading(of:))
    suspects = snapshot.suspects
  }

  /// Open visits (places the device is at), ordered by place id.
  public func openVisits() -> [Visit] {
    states.compactMap { number, state -> Visit? in
      guard let stay = state.stay else { return nil }
      return Visit(
        placeID: names.id(Int(number)), arrivalDate: stay.arrival, fixCount: stay.fixCount,
        bestAccuracyMeters: stay.bestAccuracyMeters)
    }
    .sorted { $0.placeID < $1.placeID }
  }
}

/// A local equirectangular frame around a fix, in metres east (`x`) and north (`y`), used as
/// a conservative pre-filter before exact great-circle geometry. Only built away from the poles
/// (|latitude| < 70°) and only used within 10 km, where its error stays under 0.5 % — the
/// callers allow 1 % + 1 m.
private struct PlanarFrame {
  let latitude: Double
  let longitude: Double
  let metersPerDegreeLongitude: Double

  init?(at point: Coordinate) {
    guard abs(point.latitude) < 70 else { return nil }
    latitude = point.latitude
    longitude = point.longitude
    metersPerDegreeLongitude = Coordinate.metersPerDegree * cos(point.latitude * .pi / 180)
  }

  /// `point` in metres from the frame's origin; `nil` when more than about 50 km away.
  @inline(__always)
  func project(_ point: Coordinate) -> (x: Double, y: Double)? {
    let offset = offset(latitude: point.latitude, longitude: point.longitude)
    guard abs(offset.y) < 50_000, abs(offset.x) < 50_000 else { return nil }
    return offset
  }

  /// Metres east and north of the origin (longitudes wrapped to the shorter way).
  @inline(__always)
  func offset(latitude: Double, longitude: Double) -> (x: Double, y: Double) {
    let dLon = SpatialIndex.wrapped(longitude - self.longitude)
    return (
      dLon * metersPerDegreeLongitude, (latitude - self.latitude) * Coordinate.metersPerDegree
    )
  }

  /// Squared distance from `point` to the segment from `start` to the origin.
  @inline(__always)
  static func segmentDistanceSquared(
    from point: (x: Double, y: Double), start: (x: Double, y: Double)
  ) -> Double {
    let dx = -start.x
    let dy = -start.y
    let lengthSquared = dx * dx + dy * dy
    var t = 0.0
    if lengthSquared > 0 {
      t = min(1, max(0, ((point.x - start.x) * dx + (point.y - start.y) * dy) / lengthSquared))
    }
    let x = start.x + t * dx - point.x
    let y = start.y + t * dy - point.y
    return x * x + y * y
  }
}

/// The circles held by the index cells that a box around the last fixes touches: while each
/// new segment's box lies inside that region, its candidates are among these, and the index is
/// not probed again. A drive at 25 m/s crosses the region's margin (about 110 m) in a few
/// seconds; at 10 Hz that is one probe for tens of fixes.
private struct NearbyCircles: Sendable {
  /// The region the candidates cover (empty at first: it contains no box).
  var region = SpatialIndex.Box(south: 0, north: -1, west: 0, east: -1)
  /// The circles of the cells that the region touches (a circle may appear more than once).
  var candidates: [SpatialIndex.Candidate] = []

  /// The margin around a segment's box, degrees of latitude (about 111 m).
  static let marginDegrees = 0.001

  /// Probes `index` for a region around `box`, its margin as wide east–west as north–south.
  mutating func refill(around box: SpatialIndex.Box, from index: SpatialIndex) {
    let latitude = min(80, max(abs(box.south), abs(box.north)))
    let east = Self.marginDegrees / cos(latitude * .pi / 180)
    region = SpatialIndex.Box(
      south: box.south - Self.marginDegrees, north: box.north + Self.marginDegrees,
      west: box.west - east, east: box.east + east)
    candidates.removeAll(keepingCapacity: true)
    index.forEachCandidate(in: region) { candidates.append($0) }
  }
}
