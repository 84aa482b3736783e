/// One step of the schema history: a version number and the SQL that reaches it.
public struct Migration: Sendable {
  /// The schema version after this step (`PRAGMA user_version`), starting at 1.
  public var version: Int
  /// A short description, for people.
  public var name: String
  /// The statements to run, in one transaction with the version bump.
  public var sql: String

  /// Creates a migration.
  public init(version: Int, name: String, sql: String) {
    self.version = version
    self.name = name
    self.sql = sql
  }
}

/// Applies the migrations a database has not seen yet, each in its own transaction.
struct Migrator {
  var migrations: [Migration]

  /// Brings `connection` up to the last migration and returns the resulting version.
  func migrate(_ connection: Connection) throws -> Int {
    let supported = migrations.last?.version ?? 0
    var current = try connection.queryFirst("PRAGMA user_version") { $0.int(0) } ?? 0
    guard current <= supported else {
      throw StoreError(
        .newerSchema(found: current, supported: supported),
        message: "the database has schema version \(current), but this Waymark supports up to "
          + "version \(supported); use a newer Waymark or another store file",
        path: connection.path)
    }
    for migration in migrations where migration.version > current {
      try connection.transaction {
        // Another process may have migrated while we waited for the lock.
        let now = try connection.queryFirst("PRAGMA user_version") { $0.int(0) } ?? 0
        if now < migration.version {
          try connection.executeScript(migration.sql)
          // PRAGMA takes no parameters; the version is our own constant integer.
          try connection.executeScript("PRAGMA user_version = \(migration.version)")
        }
      }
      current = migration.version
    }
    return current
  }
}
