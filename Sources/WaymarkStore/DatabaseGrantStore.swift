import Foundation

/// Authorization grants with one transaction per call: the shape a `GrantStore` protocol in the
/// `Waymark` module can be conformed to (in the CLI or daemon, which see both modules).
public final class DatabaseGrantStore: Sendable {
  /// The database.
  public let database: Database

  /// Uses `database`.
  public init(database: Database) {
    self.database = database
  }

  /// The grant of `clientID`, or `nil`.
  public func grant(for clientID: String) throws -> StoredGrant? {
    try database.read { try GrantRepository($0).grant(clientID: clientID) }
  }

  /// Saves `grant`, replacing the client's previous one.
  public func set(_ grant: StoredGrant) throws {
    try database.write { try GrantRepository($0).set(grant) }
  }

  /// Removes the grant of `clientID`; returns whether there was one.
  @discardableResult
  public func remove(clientID: String) throws -> Bool {
    try database.write { try GrantRepository($0).remove(clientID: clientID) }
  }

  /// Every grant, ordered by client id.
  public func all() throws -> [StoredGrant] {
    try database.read { try GrantRepository($0).all() }
  }

  /// Removes every grant.
  public func reset() throws {
    try database.write { try GrantRepository($0).reset() }
  }
}
