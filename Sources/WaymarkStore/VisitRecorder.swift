import FoundationEssentials
import WaymarkCore

/// Turns place events into durable visits: an arrival opens a visit, the departure closes it.
///
/// Each transition is one transaction: the event row, the visit row, the place's visited flag and
/// count, the monitor's snapshot for the place and the last fix, all committed together (with
/// `synchronous=FULL`, so a transition that returned survives a crash or power loss).
///
/// Recording is idempotent. Events are unique on (class, time, place) and visits on (place,
/// arrival), so replaying a log whose beginning is already recorded (after `kill -9`, say)
/// neither duplicates nor loses a visit. After a restart the recorder finds the open visits in
/// the store and closes each when its departure comes.
///
/// Fixes passed to ``observe(_:)-(Fix)`` are counted for the open visits whose circle contains them
/// (fix count, best accuracy). Counts are kept in memory and written at each transition and by
/// ``flush()``; a fix is counted once, by its time, even across replays. Fixes inside a place
/// before its arrival event (while the monitor confirms) are counted from a buffer of the most
/// recent fixes.
///
/// Deterministic: only fix and event times are used; the wall clock (`now`) dates nothing but
/// the MQTT messages queued with an event.
public final class VisitRecorder: Sendable {
  /// The database written to.
  public let database: Database
  /// Stored as the source of visits this recorder opens (device path, log file).
  public let source: String?
  /// The device whose visits, events, monitor state and last fix this recorder writes and
  /// resumes (``StoreDevice``): another device's open visits are neither continued nor closed.
  public let device: String
  private let recentLimit: Int
  private let state: Locked<State>
  private let now: @Sendable () -> Date

  private struct OpenVisit: Sendable {
    /// The row id; `nil` while the visit can only be inserted at its departure (another, later
    /// visit of the place is open in the store).
    var id: Int64?
    var arrival: Int64
    var center: Coordinate
    var radiusMeters: Double
    var lastCounted: Int64?
    var pendingCount = 0
    var pendingBest: Double?
    var pendingLast: Int64?

    mutating func count(_ fix: RecentFix) {
      guard fix.milliseconds >= arrival, fix.milliseconds > (lastCounted ?? Int64.min),
        center.distance(to: fix.coordinate) <= radiusMeters
      else { return }
      pendingCount += 1
      if let accuracy = fix.accuracy { pendingBest = min(pendingBest ?? accuracy, accuracy) }
      pendingLast = fix.milliseconds
      lastCounted = fix.milliseconds
    }
  }

  private struct RecentFix: Sendable {
    var milliseconds: Int64
    var coordinate: Coordinate
    var accuracy: Double?
  }

  private struct State: Sendable {
    var open: [String: OpenVisit] = [:]
    var recent: [RecentFix] = []
    var recentHead = 0
    var lastFix: MonitorStateRepository.LastFix?
    var lastFixDirty = false
  }

  /// Opens a recorder on `database` and loads the visits that are still open.
  ///
  /// - Parameters:
  ///   - database: the store.
  ///   - source: stored with each visit this recorder opens.
  ///   - device: the device recorded (default ``StoreDevice/local``, waymarkd's).
  ///   - recentFixLimit: how many recent fixes to keep for counting the fixes of a visit that
  ///     came before its arrival event.
  ///   - now: the wall clock, read only to date the MQTT messages queued with an event (the
  ///     outbox's age limit); visits are dated by their fixes.
  /// - Throws: ``StoreError``.
  public init(
    database: Database, source: String? = nil, device: String = StoreDevice.local,
    recentFixLimit: Int = 512, now: @escaping @Sendable () -> Date = { Date() }
  ) throws {
    self.database = database
    self.now = now
    self.source = source
    self.device = device
    self.recentLimit = max(1, recentFixLimit)
    let open = try database.read { connection in
      var open: [String: OpenVisit] = [:]
      let places = PlaceRepository(connection)
      for (placeID, entry) in try VisitRepository(connection, device: device).openEntries() {
        guard let place = try places.place(id: placeID) else { continue }
        open[placeID] = OpenVisit(
          id: entry.id, arrival: Timestamp.milliseconds(entry.arrival),
          center: place.coordinate, radiusMeters: place.radiusMeters,
          lastCounted: entry.lastFixMilliseconds)
      }
      return open
    }
    self.state = Locked(State(open: open))
  }

  /// The open visits known to the recorder: arrival time by place id.
  public var openVisits: [String: Date] {
    state.withLock { state in
      state.open.mapValues { StoreTime.date($0.arrival) }
    }
  }

  /// Counts `fix` for the open visits whose circle contains it and remembers it as the last fix.
  /// Unusable fixes (no time, no position) are ignored. Nothing is written until the next
  /// transition or ``flush()``.
  public func observe(_ fix: Fix) {
    guard fix.isUsable, let time = fix.time, let coordinate = fix.coordinate else { return }
    let recent = RecentFix(
      milliseconds: Timestamp.milliseconds(time), coordinate: coordinate,
      accuracy: fix.horizontalError)
    let provenance: String? =
      switch fix.provenance {
      case .device(let path): path
      case .file(let path, _): path
      case .simulated(let name): name
      case nil: nil
      }
    state.withLock { state in
      if state.recent.count < recentLimit {
        state.recent.append(recent)
      } else {
        state.recent[state.recentHead] = recent
        state.recentHead = (state.recentHead + 1) % recentLimit
      }
      for key in state.open.keys {
        state.open[key]?.count(recent)
      }
      state.lastFix = MonitorStateRepository.LastFix(
        time: time, coordinate: coordinate, horizontalAccuracyMeters: fix.horizontalError,
        source: provenance ?? source)
      state.lastFixDirty = true
    }
  }

  /// Counts `location` like ``observe(_:)-(Fix)`` does a fix.
  public func observe(_ location: Location) {
    observe(
      Fix(
        time: location.timestamp, mode: .twoDimensional, coordinate: location.coordinate,
        horizontalError: location.horizontalAccuracy, provenance: location.source))
  }

  /// Records one transition in one transaction.
  ///
  /// - Parameters:
  ///   - event: the arrival or departure.
  ///   - snapshot: the monitor's serialized state for the event's place after the event, saved
  ///     in the same transaction; `nil` leaves the saved state alone.
  ///   - reasonJSON: the reason as JSON (as printed in NDJSON); `nil` encodes the event's reason
  ///     with ``EventReasonJSON``.
  ///   - outbox: messages that report the event (MQTT), queued in the same transaction when
  ///     the event is new to the store (a replayed transition is not sent again).
  ///   - outboxMaximum: past this many queued messages the oldest locations are dropped.
  /// - Returns: whether anything new was recorded (`false` for a replayed transition).
  /// - Throws: ``StoreError``; kind ``StoreError/Kind/notFound`` when the place is not in the
  ///   store. Nothing is written then.
  @discardableResult
  public func record(
    _ event: PlaceEvent, snapshot: String? = nil, reasonJSON: String? = nil,
    outbox: [OutboxMessage] = [], outboxMaximum: Int? = nil
  ) throws -> Bool {
    try commit { next, connection in
      guard let place = try PlaceRepository(connection).place(id: event.placeID) else {
        throw StoreError(
          .notFound, message: "no place with id '\(event.placeID)' in the store",
          path: connection.path)
      }
      let isNew = try EventRepository(connection, device: device).record(
        StoredEvent(event, reasonJSON: reasonJSON))
      let visitChanged: Bool
      switch event {
      case .arrival(let arrival):
        visitChanged = try arrive(arrival, place: place, state: &next, connection: connection)
      case .departure(let departure):
        visitChanged = try depart(departure, state: &next, connection: connection)
      }
      if let snapshot {
        try MonitorStateRepository(connection, device: device).save(
          placeID: event.placeID,
          MonitorStateRepository.Entry(snapshot: snapshot, lastFixTime: next.lastFix?.time))
      }
      try writeLastFix(&next, connection: connection)
      if isNew && !outbox.isEmpty {
        try OutboxRepository(connection).enqueue(outbox, now: now(), maximum: outboxMaximum)
      }
      return isNew || visitChanged
    }
  }

  /// Writes the pending fix counts of open visits and the last fix, in one transaction.
  public func flush() throws {
    try commit { next, connection in try writeCounts(&next, connection: connection) }
  }

  /// Saves monitor snapshots for several places (such as on shutdown), with the pending counts,
  /// in one transaction.
  ///
  /// - Parameter snapshots: serialized monitor state by place id.
  public func saveSnapshots(_ snapshots: [String: String]) throws {
    try commit { next, connection in
      let repository = MonitorStateRepository(connection, device: device)
      for (placeID, snapshot) in snapshots.sorted(by: { $0.key < $1.key }) {
        try repository.save(
          placeID: placeID,
          MonitorStateRepository.Entry(snapshot: snapshot, lastFixTime: next.lastFix?.time))
      }
      try writeCounts(&next, connection: connection)
    }
  }

  /// Runs `body` on a copy of the state in one write transaction; the copy replaces the state
  /// only when the transaction commits, so a failed write leaves memory and file in step.
  private func commit<T: Sendable>(_ body: (inout State, Connection) throws -> T) throws -> T {
    try state.withLock { state in
      var next = state
      let result = try database.write { connection in try body(&next, connection) }
      state = next
      return result
    }
  }

  /// Writes the pending fix counts of every open visit and the last fix.
  private func writeCounts(_ state: inout State, connection: Connection) throws {
    for key in state.open.keys {
      try writePending(&state.open[key]!, connection: connection)
    }
    try writeLastFix(&state, connection: connection)
  }

  private func arrive(
    _ arrival: PlaceEvent.Arrival, place: Place, state: inout State, connection: Connection
  ) throws -> Bool {
    let visits = VisitRepository(connection, device: device)
    let arrivalMilliseconds = Timestamp.milliseconds(arrival.time)
    var tracked = OpenVisit(
      id: nil, arrival: arrivalMilliseconds, center: place.coordinate,
      radiusMeters: place.radiusMeters)
    var changed = false
    if let entry = try visits.entry(placeID: place.id, arrival: arrival.time) {
      // Already recorded (a replay): follow it if it is still open.
      guard entry.departure == nil else {
        state.open[place.id] = nil
        return false
      }
      tracked.id = entry.id
      tracked.lastCounted = entry.lastFixMilliseconds
    } else {
      if let stale = try visits.openEntry(placeID: place.id) {
        if stale.arrival < arrival.time {
          // Its departure was never seen: close it at the last fix counted inside.
          let end = stale.lastFixMilliseconds.map(StoreTime.date) ?? stale.arrival
          try visits.close(id: stale.id, departure: min(end, arrival.time))
        } else {
          // A later visit is open: this one is inserted, closed, at its departure.
          state.open[place.id] = tracked
          count(recent: state, into: &state.open[place.id]!)
          return false
        }
      }
      let (entry, inserted) = try visits.insert(
        Visit(placeID: place.id, arrivalDate: arrival.time, source: source))
      if inserted {
        try PlaceRepository(connection).markVisited(id: place.id)
        changed = true
      }
      tracked.id = entry.id
      tracked.lastCounted = entry.lastFixMilliseconds
    }
    count(recent: state, into: &tracked)
    try writePending(&tracked, connection: connection)
    state.open[place.id] = tracked
    return changed
  }

  private func depart(
    _ departure: PlaceEvent.Departure, state: inout State, connection: Connection
  ) throws -> Bool {
    let visits = VisitRepository(connection, device: device)
    let arrivalMilliseconds = Timestamp.milliseconds(departure.arrival)
    var tracked = state.open[departure.placeID]
    if tracked?.arrival != arrivalMilliseconds { tracked = nil }
    var changed = false
    if let entry = try visits.entry(placeID: departure.placeID, arrival: departure.arrival) {
      if entry.departure == nil {
        if var tracked, tracked.id == entry.id {
          try writePending(&tracked, connection: connection)
        }
        changed = try visits.close(id: entry.id, departure: departure.time)
      }
    } else {
      // The arrival was never stored (recording started mid-visit, or a later visit was open).
      let (_, inserted) = try visits.insert(
        Visit(
          placeID: departure.placeID, arrivalDate: departure.arrival,
          departureDate: max(departure.time, departure.arrival),
          fixCount: tracked?.pendingCount ?? 0, bestAccuracyMeters: tracked?.pendingBest,
          source: source))
      if inserted {
        try PlaceRepository(connection).markVisited(id: departure.placeID)
        changed = true
      }
    }
    if tracked != nil { state.open[departure.placeID] = nil }
    return changed
  }

  private func count(recent state: State, into visit: inout OpenVisit) {
    let count = state.recent.count
    for offset in 0..<count {
      visit.count(state.recent[(state.recentHead + offset) % count])
    }
  }

  private func writePending(_ visit: inout OpenVisit, connection: Connection) throws {
    guard let id = visit.id, visit.pendingCount > 0, let last = visit.pendingLast else { return }
    try VisitRepository(connection, device: device).addFixes(
      id: id, count: visit.pendingCount, bestAccuracyMeters: visit.pendingBest,
      lastFixMilliseconds: last)
    visit.pendingCount = 0
    visit.pendingBest = nil
    visit.pendingLast = nil
  }

  private func writeLastFix(_ state: inout State, connection: Connection) throws {
    guard state.lastFixDirty, let fix = state.lastFix else { return }
    try MonitorStateRepository(connection, device: device).saveLastFix(fix)
    state.lastFixDirty = false
  }
}
