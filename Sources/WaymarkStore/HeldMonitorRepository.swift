import FoundationEssentials
import WaymarkCore

/// The monitors waymarkd holds for apps and the events each app has not acknowledged yet.
///
/// A monitor is keyed by the peer's uid, its client id (`<user>:<exe>`) and the monitor's name;
/// its state (conditions, records, detection) is the Waymark library's JSON, kept as text. Its
/// events carry a sequence number, from 1, that never goes back for a monitor: an app reads
/// the events after the last one it handled and acknowledges up to it.
public struct HeldMonitorRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  /// One held monitor, as stored.
  public struct Stored: Sendable, Hashable {
    /// The row's id.
    public var id: Int64
    /// The peer's uid.
    public var uid: UInt32
    /// The peer's client id.
    public var clientID: String
    /// The monitor's name.
    public var name: String
    /// The monitor's state, JSON.
    public var state: String
    /// The sequence number the next event gets.
    public var nextSequence: Int64
  }

  /// One stored event.
  public struct Event: Sendable, Hashable {
    /// Its sequence number within its monitor, from 1.
    public var sequence: Int64
    /// The identifier of its condition.
    public var identifier: String
    /// `unknown`, `satisfied` or `unsatisfied`.
    public var state: String
    /// Fix time of the change (UTC).
    public var time: Date

    /// Creates an event.
    public init(sequence: Int64, identifier: String, state: String, time: Date) {
      self.sequence = sequence
      self.identifier = identifier
      self.state = state
      self.time = time
    }
  }

  /// Every held monitor.
  public func all() throws -> [Stored] {
    var monitors: [Stored] = []
    try connection.query(
      "SELECT id, uid, client_id, name, state, next_sequence FROM held_monitor ORDER BY id"
    ) {
      monitors.append(
        Stored(
          id: $0.int64(0), uid: UInt32(truncatingIfNeeded: $0.int64(1)), clientID: $0.text(2),
          name: $0.text(3), state: $0.text(4), nextSequence: $0.int64(5)))
    }
    return monitors
  }

  /// Creates the monitor with `state` and returns its id.
  public func create(uid: UInt32, clientID: String, name: String, state: String) throws -> Int64 {
    try connection.execute(
      "INSERT INTO held_monitor (uid, client_id, name, state) VALUES (?, ?, ?, ?)",
      [.integer(Int64(uid)), .text(clientID), .text(name), .text(state)])
    return try connection.queryFirst("SELECT last_insert_rowid()") { $0.int64(0) } ?? 0
  }

  /// Replaces the state of the monitor `id`.
  public func save(id: Int64, state: String) throws {
    try connection.execute(
      "UPDATE held_monitor SET state = ? WHERE id = ?", [.text(state), .integer(id)])
  }

  /// Deletes the monitor `id` and its events.
  public func delete(id: Int64) throws {
    try connection.execute("DELETE FROM held_monitor WHERE id = ?", [.integer(id)])
  }

  /// Appends `events` (their sequence numbers are assigned here, in order, from the monitor's
  /// next one) and keeps at most `bound` events: the oldest beyond it are deleted.
  ///
  /// - Returns: the events as stored, with their sequence numbers.
  public func append(
    _ events: [(identifier: String, state: String, time: Date)], to id: Int64, bound: Int
  ) throws -> [Event] {
    guard
      var next = try connection.queryFirst(
        "SELECT next_sequence FROM held_monitor WHERE id = ?", [.integer(id)], { $0.int64(0) })
    else { return [] }
    var stored: [Event] = []
    for event in events {
      try connection.execute(
        """
        INSERT INTO held_monitor_event (monitor_id, sequence, identifier, state, time)
        VALUES (?, ?, ?, ?, ?)
        """,
        [
          .integer(id), .integer(next), .text(event.identifier), .text(event.state),
          StoreTime.value(event.time),
        ])
      stored.append(
        Event(sequence: next, identifier: event.identifier, state: event.state, time: event.time))
      next += 1
    }
    try connection.execute(
      "UPDATE held_monitor SET next_sequence = ? WHERE id = ?", [.integer(next), .integer(id)])
    try connection.execute(
      "DELETE FROM held_monitor_event WHERE monitor_id = ? AND sequence < ?",
      [.integer(id), .integer(next - Int64(bound))])
    return stored
  }

  /// At most `limit` events of the monitor `id` after sequence `cursor`, oldest first.
  public func events(of id: Int64, after cursor: Int64, limit: Int) throws -> [Event] {
    var events: [Event] = []
    try connection.query(
      """
      SELECT sequence, identifier, state, time FROM held_monitor_event
      WHERE monitor_id = ? AND sequence > ? ORDER BY sequence LIMIT ?
      """, [.integer(id), .integer(cursor), .integer(Int64(limit))]
    ) {
      events.append(
        Event(
          sequence: $0.int64(0), identifier: $0.text(1), state: $0.text(2),
          time: StoreTime.date($0.int64(3))))
    }
    return events
  }

  /// The sequence number of the oldest event kept for the monitor `id`, or `nil` at none.
  public func oldestSequence(of id: Int64) throws -> Int64? {
    try connection.queryFirst(
      "SELECT min(sequence) FROM held_monitor_event WHERE monitor_id = ?", [.integer(id)]
    ) { $0.optionalInt64(0) } ?? nil
  }

  /// Deletes the events of the monitor `id` up to sequence `sequence`, included.
  public func acknowledge(_ id: Int64, through sequence: Int64) throws {
    try connection.execute(
      "DELETE FROM held_monitor_event WHERE monitor_id = ? AND sequence <= ?",
      [.integer(id), .integer(sequence)])
  }
}
