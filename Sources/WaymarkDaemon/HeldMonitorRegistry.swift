import FoundationEssentials
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkStore

/// The monitors waymarkd holds for apps (protocol 1.3, `MONITOR`), in the store: their
/// conditions and detection state (``MonitorState``, the in-process `Monitor`'s core, run by
/// `PlaceMonitorEngine` on fix time) and, per monitor, the queue of events the app has not
/// acknowledged.
///
/// The broker's thread adds, removes and reads (``HeldMonitorKeeper``); the pipeline's
/// ``process(_:)`` runs every fix through the monitors of the apps that hold `always` with
/// full accuracy and appends their events, with the monitor's state, in one transaction, so a
/// crash keeps both or neither. The state is also saved every ``saveIntervalSeconds`` of fix
/// time while nothing happens. One lock serializes the two threads; it is held across the
/// store's write (a write here is one small transaction, and a held monitor's events must not
/// be numbered twice).
///
/// Bounds: ``HeldMonitor/maximumEvents`` events per monitor (the oldest dropped: the app is
/// told how many it lost), ``HeldMonitor/maximumConditions`` conditions per monitor,
/// ``HeldMonitor/maximumMonitorsPerApp`` monitors per app and
/// ``HeldMonitor/maximumMonitorsPerUser`` per uid.
package final class HeldMonitorRegistry: HeldMonitorKeeper {
  private struct Held {
    var id: Int64
    var state: MonitorState
    var nextSequence: Int64
    /// Fix time of the last location when the state was last saved.
    var savedAt: Date?
  }

  /// Seconds of fix time between two saves of a monitor's state when no event happens.
  package static let saveIntervalSeconds: Double = 300

  private let database: Database
  private let monitors: Locked<[HeldMonitor.Key: Held]>
  private let authorized = Locked<Set<String>>([])
  private let configuration = PlaceMonitor.Configuration()

  /// Loads the held monitors of `database`.
  ///
  /// - Parameter unreadable: called with the key of a monitor whose state cannot be decoded
  ///   (it is left out, and its row kept).
  /// - Throws: ``StoreError`` when the store cannot be read.
  package init(database: Database, unreadable: (HeldMonitor.Key) -> Void = { _ in }) throws {
    self.database = database
    var monitors: [HeldMonitor.Key: Held] = [:]
    for row in try database.read({ try HeldMonitorRepository($0).all() }) {
      let key = HeldMonitor.Key(uid: row.uid, clientID: row.clientID, name: row.name)
      guard let saved = try? MonitorState.Saved(jsonText: Array(row.state.utf8)) else {
        unreadable(key)
        continue
      }
      let state = MonitorState(saved, configuration: configuration)
      monitors[key] = Held(
        id: row.id, state: state, nextSequence: row.nextSequence, savedAt: state.lastFixTime)
    }
    self.monitors = Locked(monitors)
  }

  /// How many monitors are held.
  package var count: Int { monitors.withLock { $0.count } }

  /// Only the monitors of `clientIDs` are evaluated from now on.
  package func authorize(_ clientIDs: Set<String>) {
    authorized.withLock { $0 = clientIDs }
  }

  /// Runs `location` through the monitors of authorized apps; stores their events.
  ///
  /// - Returns: the events, stored, in order.
  /// - Throws: ``StoreError`` when they cannot be stored (the monitors keep their state).
  package func process(_ location: Location) throws -> [HeldMonitor.Event] {
    let authorized = authorized.withLock { $0 }
    guard !authorized.isEmpty else { return [] }
    return try monitors.withLock { monitors in
      var changed: [(HeldMonitor.Key, Held, [Monitor.Event])] = []
      for (key, held) in monitors where authorized.contains(key.clientID) {
        var next = held
        let events = next.state.process(location)
        let due =
          held.savedAt.map { location.timestamp.timeIntervalSince($0) >= Self.saveIntervalSeconds }
          ?? true
        if events.isEmpty && !due {
          monitors[key] = next
          continue
        }
        next.savedAt = location.timestamp
        changed.append((key, next, events))
      }
      guard !changed.isEmpty else { return [] }
      var stored: [HeldMonitor.Event] = []
      var updated: [(HeldMonitor.Key, Held)] = []
      try database.write { connection in
        let repository = HeldMonitorRepository(connection)
        for (key, var held, events) in changed {
          try repository.save(id: held.id, state: Self.json(held.state))
          let appended = try repository.append(
            events.map { ($0.identifier, $0.state.rawValue, $0.date) }, to: held.id,
            bound: HeldMonitor.maximumEvents)
          held.nextSequence += Int64(appended.count)
          stored += appended.map { Self.event($0, key) }
          updated.append((key, held))
        }
      }
      for (key, held) in updated { monitors[key] = held }
      return stored
    }
  }

  /// Adds `conditions` to the monitor `key` (created when new), within the bounds.
  package func add(_ conditions: [HeldMonitor.Condition], to key: HeldMonitor.Key)
    throws(HeldMonitor.Refusal) -> Int
  {
    try guarded { monitors in
      var held: Held
      if let existing = monitors[key] {
        held = existing
      } else {
        let ofApp = monitors.keys.count { $0.uid == key.uid && $0.clientID == key.clientID }
        guard ofApp < HeldMonitor.maximumMonitorsPerApp else {
          throw HeldMonitor.Refusal(
            "too many monitors: \(HeldMonitor.maximumMonitorsPerApp) for this program")
        }
        guard monitors.keys.count(where: { $0.uid == key.uid }) < HeldMonitor.maximumMonitorsPerUser
        else {
          throw HeldMonitor.Refusal(
            "too many monitors: \(HeldMonitor.maximumMonitorsPerUser) for this user")
        }
        held = Held(
          id: 0, state: MonitorState(configuration: configuration), nextSequence: 1,
          savedAt: nil)
      }
      var changed = held.id == 0
      for condition in conditions {
        if held.state.entries.first(where: { $0.identifier == condition.identifier })?.condition
          == condition.circle
        {
          continue  // The same circle again: it keeps its state.
        }
        held.state.add(
          condition.circle, identifier: condition.identifier, assuming: condition.assumed)
        changed = true
      }
      guard held.state.entries.count <= HeldMonitor.maximumConditions else {
        throw HeldMonitor.Refusal(
          "more than \(HeldMonitor.maximumConditions) conditions in one monitor")
      }
      guard changed else { return held.state.entries.count }
      let json = Self.json(held.state)
      let id = held.id
      held.id = try database.write { connection in
        let repository = HeldMonitorRepository(connection)
        if id == 0 {
          return try repository.create(
            uid: key.uid, clientID: key.clientID, name: key.name, state: json)
        }
        try repository.save(id: id, state: json)
        return id
      }
      monitors[key] = held
      return held.state.entries.count
    }
  }

  /// Removes the conditions `identifiers` of the monitor `key`.
  package func remove(_ identifiers: [String], from key: HeldMonitor.Key)
    throws(HeldMonitor.Refusal) -> Int
  {
    try guarded { monitors in
      guard var held = monitors[key] else { throw Self.noSuchMonitor }
      var changed = false
      for identifier in identifiers where held.state.remove(identifier) { changed = true }
      if changed {
        let json = Self.json(held.state)
        try database.write { try HeldMonitorRepository($0).save(id: held.id, state: json) }
        monitors[key] = held
      }
      return held.state.entries.count
    }
  }

  /// Deletes the monitor `key` and its queue.
  package func delete(_ key: HeldMonitor.Key) throws(HeldMonitor.Refusal) {
    try guarded { monitors in
      guard let held = monitors[key] else { throw Self.noSuchMonitor }
      try database.write { try HeldMonitorRepository($0).delete(id: held.id) }
      monitors[key] = nil
    }
  }

  /// Acknowledges up to `cursor` and returns the page of events after it.
  package func events(of key: HeldMonitor.Key, after cursor: Int64) throws(HeldMonitor.Refusal)
    -> HeldMonitor.Backlog
  {
    try guarded { monitors in
      // No such monitor (yet, or not this app's): nothing to read, and nothing says whether
      // another app has one of that name.
      guard let held = monitors[key] else {
        return HeldMonitor.Backlog(events: [], lost: 0, more: false)
      }
      let (page, oldest) = try database.write { connection in
        let repository = HeldMonitorRepository(connection)
        if cursor > 0 { try repository.acknowledge(held.id, through: cursor) }
        return (
          try repository.events(of: held.id, after: cursor, limit: HeldMonitor.pageSize + 1),
          try repository.oldestSequence(of: held.id)
        )
      }
      let lost = max(0, (oldest ?? held.nextSequence) - 1 - cursor)
      return HeldMonitor.Backlog(
        events: page.prefix(HeldMonitor.pageSize).map { Self.event($0, key) }, lost: lost,
        more: page.count > HeldMonitor.pageSize, next: held.nextSequence)
    }
  }

  /// Deletes the events of `key` up to `sequence`.
  package func acknowledge(_ key: HeldMonitor.Key, through sequence: Int64)
    throws(HeldMonitor.Refusal)
  {
    try guarded { monitors in
      guard let held = monitors[key] else { return }
      try database.write { try HeldMonitorRepository($0).acknowledge(held.id, through: sequence) }
    }
  }

  // MARK: - Helpers

  private static let noSuchMonitor = HeldMonitor.Refusal("no such monitor")

  /// Runs `body` holding the lock; a store failure becomes a refusal (no coordinate in it).
  private func guarded<T>(_ body: (inout [HeldMonitor.Key: Held]) throws -> T)
    throws(HeldMonitor.Refusal) -> T
  {
    do {
      return try monitors.withLock { try body(&$0) }
    } catch let refusal as HeldMonitor.Refusal {
      throw refusal
    } catch {
      throw HeldMonitor.Refusal("cannot write the store")
    }
  }

  /// The stored text of `state` (a number JSON cannot hold is written `null`: the text then
  /// does not load, and the monitor is reported unreadable, as before).
  private static func json(_ state: MonitorState) -> String {
    state.saved.json.string
  }

  private static func event(_ stored: HeldMonitorRepository.Event, _ key: HeldMonitor.Key)
    -> HeldMonitor.Event
  {
    HeldMonitor.Event(
      key: key, sequence: stored.sequence, identifier: stored.identifier,
      state: Monitor.Event.State(rawValue: stored.state) ?? .unknown, date: stored.time)
  }
}
