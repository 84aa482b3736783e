import FoundationEssentials
import WaymarkCore

/// Authorization grants in the store, one per client id.
public struct GrantRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  /// The grant of `clientID`, or `nil` when none was decided.
  ///
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/corruptRow`` for an unknown level.
  public func grant(clientID: String) throws -> Grant? {
    try connection.queryFirst(
      """
      SELECT client_id, level, accuracy, granted_at FROM authorization_grant WHERE client_id = ?
      """, [.text(clientID)], grant)
  }

  /// Saves `grant`, replacing the client's previous one.
  public func set(_ grant: Grant) throws {
    try connection.execute(
      """
      INSERT INTO authorization_grant (client_id, level, accuracy, granted_at) VALUES (?, ?, ?, ?)
      ON CONFLICT (client_id) DO UPDATE SET level = excluded.level,
        accuracy = excluded.accuracy, granted_at = excluded.granted_at
      """,
      [
        .text(grant.clientID), .text(grant.level.rawValue), .text(grant.accuracy.rawValue),
        StoreTime.value(grant.grantedAt),
      ])
  }

  /// Removes the grant of `clientID`.
  ///
  /// - Returns: whether there was one.
  @discardableResult
  public func remove(clientID: String) throws -> Bool {
    try connection.execute(
      "DELETE FROM authorization_grant WHERE client_id = ?", [.text(clientID)]) > 0
  }

  /// Every grant, ordered by client id.
  public func all() throws -> [Grant] {
    var grants: [Grant] = []
    try connection.query(
      "SELECT client_id, level, accuracy, granted_at FROM authorization_grant ORDER BY client_id"
    ) { grants.append(try grant($0)) }
    return grants
  }

  /// Removes every grant.
  public func reset() throws {
    try connection.execute("DELETE FROM authorization_grant")
  }

  private func grant(_ row: Row) throws -> Grant {
    guard let level = GrantLevel(rawValue: row.text(1)),
      let accuracy = AccuracyAuthorization(rawValue: row.text(2))
    else {
      throw StoreError(
        .corruptRow, message: "grant row with an unknown level or accuracy",
        path: connection.path)
    }
    return Grant(
      clientID: row.text(0), level: level, accuracy: accuracy,
      grantedAt: StoreTime.date(row.int64(3)))
  }
}
