import FoundationEssentials
import WaymarkCore

/// A message waiting in the store to be published (MQTT): it enters in the same
/// transaction as what it reports and leaves when the broker acknowledges it.
public struct OutboxMessage: Sendable, Hashable {
  /// What the message reports; locations are the first to go when the outbox is full, then
  /// transitions (``OutboxRepository/enqueue(_:now:maximum:)``).
  public enum Kind: String, Sendable, Hashable {
    /// A location (an OwnTracks `location` message on the device's topic).
    case location
    /// An arrival at or a departure from a place (an OwnTracks `transition` on `<topic>/event`).
    case transition
    /// The declared places (OwnTracks `waypoints` on `<topic>/waypoints`, retained).
    case waypoints
    /// A Home Assistant discovery config, the device's state or its availability (retained).
    case homeAssistant
    /// A location for a Traccar server (the OsmAnd protocol over HTTP, not MQTT): the payload is
    /// its query, the topic empty. Only the Traccar sender reads these; they are bounded apart.
    case osmand

    /// Whether a message of this kind replaces the one still waiting for its topic: the
    /// retained kinds, of which a broker keeps only the newest. They are never dropped.
    public var replacesWaiting: Bool { self == .waypoints || self == .homeAssistant }
  }

  /// The row id (assigned by the store; 0 before).
  public var id: Int64
  /// What it reports.
  public var kind: Kind
  /// The MQTT topic.
  public var topic: String
  /// The payload (JSON text).
  public var payload: String
  /// The MQTT quality of service, 0...2.
  public var qos: Int
  /// Whether the broker keeps it as the topic's retained message.
  public var retain: Bool

  /// Creates a message (not yet stored).
  public init(kind: Kind, topic: String, payload: String, qos: Int, retain: Bool = false) {
    self.id = 0
    self.kind = kind
    self.topic = topic
    self.payload = payload
    self.qos = qos
    self.retain = retain
  }
}

/// The outbox table.
public struct OutboxRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  /// Appends `messages`, each `waypoints` or `homeAssistant` message replacing the one still
  /// waiting for its topic (the broker would keep only the newest: it is retained); then, past
  /// `maximum` rows for the broker, removes the oldest *location* messages and, when there are
  /// not enough of those, the oldest *transition* messages (an arrival or departure stays in the
  /// store's visit history; only its publication is lost). Retained messages count but are never
  /// dropped: the outbox holds at most `maximum` rows for the broker, or one per retained topic
  /// when there are more topics (a handful, in practice), whatever a broker that never
  /// acknowledges makes us queue. The Traccar server's rows (`osmand`) are bounded apart: past
  /// `maximum` of them, the oldest go.
  ///
  /// - Returns: how many location, transition and `osmand` messages were dropped to make room.
  @discardableResult
  public func enqueue(_ messages: [OutboxMessage], now: Date, maximum: Int? = nil) throws -> Int {
    for message in messages {
      if message.kind.replacesWaiting {
        try connection.execute(
          "DELETE FROM outbox WHERE kind = ? AND topic = ?",
          [.text(message.kind.rawValue), .text(message.topic)])
      }
      try connection.execute(
        """
        INSERT INTO outbox (kind, topic, payload, qos, retain, created) VALUES (?, ?, ?, ?, ?, ?)
        """,
        [
          .text(message.kind.rawValue), .text(message.topic), .text(message.payload),
          .integer(Int64(message.qos)), .integer(message.retain ? 1 : 0), StoreTime.value(now),
        ])
    }
    guard let maximum else { return 0 }
    var dropped = 0
    if messages.contains(where: { $0.kind != .osmand }) {
      for kind in [OutboxMessage.Kind.location, .transition] {
        let excess = try count(osmand: false) - maximum
        guard excess > 0 else { break }
        dropped += try dropOldest(kind, excess)
      }
    }
    if messages.contains(where: { $0.kind == .osmand }) {
      let excess = try count(osmand: true) - maximum
      if excess > 0 { dropped += try dropOldest(.osmand, excess) }
    }
    return dropped
  }

  private func dropOldest(_ kind: OutboxMessage.Kind, _ count: Int) throws -> Int {
    try connection.execute(
      """
      DELETE FROM outbox WHERE id IN
        (SELECT id FROM outbox WHERE kind = ? ORDER BY id LIMIT ?)
      """, [.text(kind.rawValue), .integer(Int64(count))])
  }

  /// Rows for the MQTT broker (`osmand == false`) or for the Traccar server.
  private func count(osmand: Bool) throws -> Int {
    try connection.queryFirst(
      "SELECT count(*) FROM outbox WHERE (kind = 'osmand') = ?", [.integer(osmand ? 1 : 0)]
    ) { Int($0.int64(0)) } ?? 0
  }

  /// The oldest `limit` locations for the Traccar server (kind `osmand`), oldest first: (id,
  /// query).
  public func nextOsmAnd(limit: Int) throws -> [(id: Int64, query: String)] {
    var rows: [(Int64, String)] = []
    try connection.query(
      "SELECT id, payload FROM outbox WHERE kind = 'osmand' ORDER BY id LIMIT ?",
      [.integer(Int64(limit))]
    ) { row in rows.append((row.int64(0), row.text(1))) }
    return rows
  }

  /// The oldest `limit` messages for the broker with an id above `after`, oldest first (copies of
  /// ``forEach(after:limit:_:)``'s rows).
  public func next(after: Int64, limit: Int) throws -> [OutboxMessage] {
    var messages: [OutboxMessage] = []
    try forEach(after: after, limit: limit) { raw in
      var message = OutboxMessage(
        kind: raw.kind, topic: String(decoding: raw.topic, as: UTF8.self),
        payload: String(decoding: raw.payload, as: UTF8.self), qos: Int(raw.qos),
        retain: raw.retain)
      message.id = raw.id
      messages.append(message)
      return true
    }
    return messages
  }

  /// One waiting message, read in place (for publishing without copying).
  public struct RawMessage {
    /// The row id.
    public var id: Int64
    /// What it reports.
    public var kind: OutboxMessage.Kind
    /// The topic, NUL-terminated UTF-8 (the terminator not counted).
    public var topic: UnsafeBufferPointer<UInt8>
    /// The payload bytes.
    public var payload: UnsafeBufferPointer<UInt8>
    /// The quality of service.
    public var qos: Int32
    /// Whether the broker should retain it.
    public var retain: Bool
  }

  /// Calls `body` with the oldest `limit` messages for the broker (not `osmand`) whose id is
  /// above `after`, in place: the buffers are valid only during the call. Stops early when
  /// `body` returns `false`.
  public func forEach(after: Int64, limit: Int, _ body: (RawMessage) throws -> Bool) throws {
    var going = true
    try connection.query(
      """
      SELECT id, topic, payload, qos, retain, kind FROM outbox
        WHERE id > ? AND kind != 'osmand' ORDER BY id LIMIT ?
      """,
      [.integer(after), .integer(Int64(limit))]
    ) { row in
      guard going else { return }
      going = try row.withText(1) { topic in
        try row.withText(2) { payload in
          try body(
            RawMessage(
              id: row.int64(0), kind: OutboxMessage.Kind(rawValue: row.text(5)) ?? .location,
              topic: topic, payload: payload, qos: Int32(row.int64(3)), retain: row.int64(4) != 0))
        }
      }
    }
  }

  /// Removes the messages `ids` (acknowledged by the broker), one statement per run of
  /// consecutive ids (acknowledgements mostly come in order).
  public func remove(_ ids: [Int64]) throws {
    let sorted = ids.sorted()
    var index = 0
    while index < sorted.count {
      var end = index
      while end + 1 < sorted.count && sorted[end + 1] <= sorted[end] + 1 { end += 1 }
      try connection.execute(
        "DELETE FROM outbox WHERE id BETWEEN ? AND ?",
        [.integer(sorted[index]), .integer(sorted[end])])
      index = end + 1
    }
  }

  /// Whether no message waits for the broker (cheaper than ``count()`` on a long outbox).
  public func isEmpty() throws -> Bool {
    try connection.queryFirst("SELECT 1 FROM outbox WHERE kind != 'osmand' LIMIT 1") { _ in true }
      == nil
  }

  /// Messages waiting.
  public func count() throws -> Int {
    try connection.queryFirst("SELECT count(*) FROM outbox") { Int($0.int64(0)) } ?? 0
  }
}
