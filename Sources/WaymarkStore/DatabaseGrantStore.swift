import FoundationEssentials
import WaymarkCore

/// Authorization grants in the SQLite store, one transaction per call: the `GrantStore` that
/// keeps grants next to places and visits (the file-backed `FileGrantStore` is the other).
///
/// Every call reads or writes the database, so a grant changed by another process
/// (`waymark auth grant …`) is seen by the next call.
public final class DatabaseGrantStore: GrantStore {
  /// The database.
  public let database: Database

  /// Uses `database`.
  public init(database: Database) {
    self.database = database
  }

  /// The grant of `clientID`, or `nil`.
  public func grant(for clientID: String) throws -> Grant? {
    try database.read { try GrantRepository($0).grant(clientID: clientID) }
  }

  /// Every grant, ordered by client id.
  public func allGrants() throws -> [Grant] {
    try database.read { try GrantRepository($0).all() }
  }

  /// Saves `grant`, replacing the client's previous one.
  public func save(_ grant: Grant) throws {
    try database.write { try GrantRepository($0).set(grant) }
  }

  /// Removes the grant of `clientID`; returns whether there was one.
  @discardableResult
  public func removeGrant(for clientID: String) throws -> Bool {
    try database.write { try GrantRepository($0).remove(clientID: clientID) }
  }

  /// Removes every grant.
  public func removeAll() throws {
    try database.write { try GrantRepository($0).reset() }
  }

  /// SQLite's `PRAGMA data_version` of the store's read-only connection: it changes when a
  /// write connection committed (the CLI changing a grant, this process's writer recording
  /// visits, track or grants). Cheap: no table is read.
  public func changeMark() throws -> Int64? {
    try database.read { try $0.queryFirst("PRAGMA data_version") { $0.int64(0) } }
  }

  /// The revocations recorded after `mark`.
  public func revocations(after mark: Int64?) throws -> GrantRevocations {
    try database.read { try GrantRepository($0).revocations(after: mark) }
  }
}
