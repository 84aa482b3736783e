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
    try recordRevocation(clientID)
    return try connection.execute(
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
    try recordRevocation("*")
    try connection.execute("DELETE FROM authorization_grant")
  }

  /// The revocations recorded after `mark` (client ids, `*` for a reset) and the newest mark;
  /// with `mark` `nil`, none and the newest mark.
  public func revocations(after mark: Int64?) throws -> GrantRevocations {
    let newest =
      try connection.queryFirst("SELECT max(id) FROM grant_revocation") { $0.int64(0) } ?? 0
    guard let mark else { return GrantRevocations(clientIDs: [], mark: newest) }
    var clientIDs: [String] = []
    try connection.query(
      "SELECT client_id FROM grant_revocation WHERE id > ? ORDER BY id", [.integer(mark)]
    ) { clientIDs.append($0.text(0)) }
    return GrantRevocations(clientIDs: clientIDs, mark: newest)
  }

  /// Notes that `clientID`'s authorization was revoked (its "once" ends too); keeps the newest
  /// 1,000 notes.
  private func recordRevocation(_ clientID: String) throws {
    try connection.execute(
      "INSERT INTO grant_revocation (client_id) VALUES (?)", [.text(clientID)])
    try connection.execute(
      "DELETE FROM grant_revocation WHERE id <= (SELECT max(id) FROM grant_revocation) - 1000")
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
