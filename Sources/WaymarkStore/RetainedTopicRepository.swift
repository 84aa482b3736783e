import WaymarkCore

/// The retained topics `waymarkd` published for an integration that can be turned off (Home
/// Assistant's discovery): what must be emptied on the broker when it is.
///
/// A topic is recorded in the transaction that queues its first message, so a config that
/// reached the outbox is always known; it is forgotten in the transaction that queues its
/// removal (an empty retained message).
public struct RetainedTopicRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  /// Records `topics` as published for `integration` (a topic already recorded is kept).
  public func record(_ topics: [String], integration: String) throws {
    for topic in topics {
      try connection.execute(
        "INSERT OR IGNORE INTO retained_topic (topic, integration) VALUES (?, ?)",
        [.text(topic), .text(integration)])
    }
  }

  /// The topics recorded for `integration`, sorted.
  public func topics(integration: String) throws -> [String] {
    var topics: [String] = []
    try connection.query(
      "SELECT topic FROM retained_topic WHERE integration = ? ORDER BY topic",
      [.text(integration)]
    ) { row in topics.append(row.text(0)) }
    return topics
  }

  /// Forgets every topic of `integration`.
  public func forget(integration: String) throws {
    try connection.execute(
      "DELETE FROM retained_topic WHERE integration = ?", [.text(integration)])
  }
}
