import Foundation
import WaymarkCore

/// The deterministic core of `PlaceMonitor`: places, their spatial index and the state of every
/// place that is not idle. A value type with no clock, no I/O and no callbacks: the same places
/// and the same fixes give the same events, byte for byte.
///
/// Cost per fix: one spatial-index probe (one cell per grid level in use, or the few cells under
/// the segment from the previous fix), a cheap planar pre-filter on the circles found there,
/// and the state machine of the places that are not idle (the device is at, arriving at or
/// leaving them — a handful). Idle places take no per-fix work and no state memory.
public struct PlaceMonitorEngine: Sendable {
  /// The detection defaults.
  public let configuration: PlaceMonitor.Configuration

  private let ids: [String]
  private let names: [String]
  private let idNumbers: [String: Int32]
  /// Rules of places with overrides; the others derive theirs from the configuration.
  private let overriddenRules: [Int32: PlaceMonitor.Rules]
  /// The widest accuracy gate of any place: a worse fix is ignored everywhere.
  private let widestGateMeters: Double
  private let index: SpatialIndex

  private var states: [Int32: PlaceMonitor.State] = [:]
  private var previous: PlaceMonitor.Sample?
  private var candidates: [Int32] = []
  private var active: [Int32] = []
  private var stepped: [(place: Int32, event: PlaceStepEvent)] = []

  /// Creates an engine over `places` (ids should be unique; a later duplicate is ignored).
  public init(places: [Place], configuration: PlaceMonitor.Configuration = .init()) {
    self.configuration = configuration
    var ids: [String] = []
    var names: [String] = []
    var centers: [Coordinate] = []
    var radii: [Double] = []
    var numbers: [String: Int32] = [:]
    var overridden: [Int32: PlaceMonitor.Rules] = [:]
    var gate = configuration.maximumAccuracyMeters
    ids.reserveCapacity(places.count)
    names.reserveCapacity(places.count)
    centers.reserveCapacity(places.count)
    radii.reserveCapacity(places.count)
    numbers.reserveCapacity(places.count)
    for place in places where numbers[place.id] == nil && place.coordinate.isValid {
      let number = Int32(ids.count)
      numbers[place.id] = number
      ids.append(place.id)
      names.append(place.name)
      centers.append(place.coordinate)
      radii.append(max(0, place.radiusMeters))
      if place.detection != PlaceDetectionOverrides() {
        let rules = configuration.rules(for: place)
        overridden[number] = rules
        gate = max(gate, rules.maximumAccuracyMeters)
      }
    }
    self.ids = ids
    self.names = names
    self.idNumbers = numbers
    self.overriddenRules = overridden
    self.widestGateMeters = gate
    self.index = SpatialIndex(centers: centers, radiiMeters: radii)
  }

  /// Number of places monitored.
  public var placeCount: Int { ids.count }

  /// Approximate heap bytes of the spatial index (without place ids and names).
  public var indexByteCount: Int { index.approximateByteCount }

  /// The rules in force for place number `place`.
  func rules(_ place: Int32) -> PlaceMonitor.Rules {
    if let rules = overriddenRules[place] { return rules }
    let enter = index.radiusMeters(of: Int(place))
    return PlaceMonitor.Rules(
      enterRadiusMeters: enter,
      exitRadiusMeters: max(
        enter * configuration.exitRadiusFactor, enter + configuration.exitMarginMeters),
      maximumAccuracyMeters: configuration.maximumAccuracyMeters,
      confirmations: max(1, configuration.confirmations),
      dwellSeconds: max(0, configuration.dwellSeconds),
      fixLossSeconds: configuration.fixLossSeconds)
  }

  // MARK: - Processing

  /// Feeds one location and returns the events it caused, in a deterministic order.
  ///
  /// Ignored: locations with an invalid coordinate, an accuracy worse than every place's gate,
  /// or a time not after the previous accepted location (duplicates, reordering).
  public mutating func process(_ location: Location) -> [PlaceEvent] {
    let accuracy = location.horizontalAccuracy ?? configuration.assumedAccuracyMeters
    guard location.coordinate.isValid, accuracy.isFinite, accuracy <= widestGateMeters else {
      return []
    }
    if let previous, location.timestamp <= previous.time { return [] }
    let fix = PlaceMonitor.Sample(
      time: location.timestamp, coordinate: location.coordinate,
      accuracyMeters: max(0, accuracy))
    defer { previous = fix }
    stepped.removeAll(keepingCapacity: true)

    // 1. Places that are not idle, in place order.
    active.removeAll(keepingCapacity: true)
    if !states.isEmpty {
      active.append(contentsOf: states.keys)
      active.sort()
      for place in active { step(place, state: states[place] ?? .outside, fix: fix) }
    }

    // 2. Idle places near the fix, or near the segment from the previous fix.
    let segment = previous.flatMap { previous -> (mid: Coordinate, half: Double)? in
      guard fix.time.timeIntervalSince(previous.time) <= configuration.fixLossSeconds
      else { return nil }
      let length = previous.coordinate.distance(to: fix.coordinate)
      guard length > 0 else { return nil }
      let bearing = previous.coordinate.bearing(to: fix.coordinate)
      return (previous.coordinate.offset(by: length / 2, bearingDegrees: bearing), length / 2)
    }
    candidates.removeAll(keepingCapacity: true)
    if let segment {
      index.forEachCandidate(near: segment.mid, radiusMeters: segment.half) { circle in
        candidates.append(Int32(circle))
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
    } else {
      index.forEachCandidate(near: fix.coordinate) { circle in candidates.append(Int32(circle)) }
    }
    let probe = segment?.mid ?? fix.coordinate
    let reach = segment?.half ?? 0
    let planar = PlanarFilter(at: probe)
    for place in candidates {
      if !active.isEmpty && active.contains(place) { continue }
      let center = index.center(of: Int(place))
      let radius = index.radiusMeters(of: Int(place))
      if let planar, !planar.mayReach(center, within: radius + reach) { continue }
      step(place, state: .outside, fix: fix)
    }

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

  private mutating func step(_ place: Int32, state: PlaceMonitor.State, fix: PlaceMonitor.Sample) {
    let rules = rules(place)
    guard fix.accuracyMeters <= rules.maximumAccuracyMeters else { return }
    let center = index.center(of: Int(place))
    let distance = center.distance(to: fix.coordinate)
    let previous = self.previous.flatMap {
      $0.accuracyMeters <= rules.maximumAccuracyMeters ? $0 : nil
    }
    var state = state
    var events: [PlaceStepEvent] = []
    state.step(
      PlaceStepInput(fix: fix, distance: distance, previous: previous), rules: rules,
      center: center, events: &events)
    if case .outside = state { states[place] = nil } else { states[place] = state }
    for event in events { stepped.append((place, event)) }
  }

  private func time(of event: PlaceStepEvent) -> Date {
    switch event {
    case .arrival(let time, _, _), .departure(let time, _, _, _): time
    }
  }

  private func event(place: Int32, _ event: PlaceStepEvent) -> PlaceEvent {
    let id = ids[Int(place)]
    let name = names[Int(place)]
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
    guard let number = idNumbers[placeID] else { return nil }
    return states[number] ?? .outside
  }

  /// Replaces the state of the place with `placeID`; unknown ids are ignored.
  public mutating func setState(_ state: PlaceMonitor.State, for placeID: String) {
    guard let number = idNumbers[placeID] else { return }
    if case .outside = state { states[number] = nil } else { states[number] = state }
  }

  /// Everything needed to resume after a restart.
  public func snapshot() -> PlaceMonitor.Snapshot {
    var places: [String: PlaceMonitor.State] = [:]
    for (number, state) in states { places[ids[Int(number)]] = state }
    return PlaceMonitor.Snapshot(previous: previous, places: places)
  }

  /// Resumes from `snapshot`: places not in it become idle; ids no longer monitored are dropped.
  public mutating func restore(_ snapshot: PlaceMonitor.Snapshot) {
    states = [:]
    for (id, state) in snapshot.places { setState(state, for: id) }
    previous = snapshot.previous
  }

  /// Open visits (places the device is at), ordered by place id.
  public func openVisits() -> [Visit] {
    states.compactMap { number, state -> Visit? in
      guard let stay = state.stay else { return nil }
      return Visit(
        placeID: ids[Int(number)], arrivalDate: stay.arrival, fixCount: stay.fixCount,
        bestAccuracyMeters: stay.bestAccuracyMeters)
    }
    .sorted { $0.placeID < $1.placeID }
  }
}

/// A conservative planar (equirectangular) distance test, used to skip exact great-circle
/// distances for circles that are clearly too far. Only built where it is safe: away from the
/// poles; callers fall back to exact distances elsewhere and for large reaches.
private struct PlanarFilter {
  let latitude: Double
  let longitude: Double
  let metersPerDegreeLongitude: Double
  static let metersPerDegree = Coordinate.earthRadiusMeters * .pi / 180

  init?(at point: Coordinate) {
    guard abs(point.latitude) < 70 else { return nil }
    latitude = point.latitude
    longitude = point.longitude
    metersPerDegreeLongitude = PlanarFilter.metersPerDegree * cos(point.latitude * .pi / 180)
  }

  /// `false` only when `center` is certainly farther than `meters` from the point.
  @inline(__always)
  func mayReach(_ center: Coordinate, within meters: Double) -> Bool {
    guard meters < 10_000 else { return true }
    var dLon = center.longitude - longitude
    if dLon > 180 { dLon -= 360 } else if dLon < -180 { dLon += 360 }
    let dx = dLon * metersPerDegreeLongitude
    let dy = (center.latitude - latitude) * PlanarFilter.metersPerDegree
    let limit = meters * 1.01 + 1
    return dx * dx + dy * dy <= limit * limit
  }
}
