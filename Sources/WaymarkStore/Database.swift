import CSQLite
import FoundationEssentials
import Glibc
import Synchronization
import WaymarkCore

/// The Waymark store: one SQLite connection used as the single, serialized writer.
///
/// Opening a database sets WAL journaling, `synchronous=FULL` (a committed transaction survives
/// power loss), foreign keys and a busy timeout, then brings the schema up to date with
/// ``Schema/migrations``. A file written by a newer Waymark is refused.
///
/// Every access goes through ``write(_:)`` (one `BEGIN IMMEDIATE` … `COMMIT` transaction) or
/// ``read(_:)``, which hold a lock for the whole closure: calls from many threads are
/// serialized. Calls must not nest: a nested call on the same thread throws instead of
/// deadlocking.
/// SQLite calls block; async callers that care run them off the cooperative pool.
public final class Database: @unchecked Sendable {
  // @unchecked: `connection` is only touched while `lock` is held.
  private let lock = Locked(())
  // The thread holding `lock` (`pthread_self()`), or 0.
  private let owner = Atomic<UInt>(0)
  private let connection: Connection
  /// The database file.
  public let path: String
  /// The schema version of the file after opening (`PRAGMA user_version`).
  public let schemaVersion: Int

  /// How long a statement waits for another process's lock before failing, milliseconds.
  public static let busyTimeoutMilliseconds: Int32 = 5000

  /// Opens (and creates, when asked) the database at `path` and migrates it.
  ///
  /// - Parameters:
  ///   - path: the database file. Its directory must exist.
  ///   - createIfMissing: create the file when it does not exist (default `true`).
  ///   - migrations: the schema history to apply; tests pass a prefix to build old files.
  /// - Throws: ``StoreError``; kind ``StoreError/Kind/newerSchema(found:supported:)`` when the
  ///   file's schema is newer than `migrations`.
  public init(
    path: String, createIfMissing: Bool = true, migrations: [Migration] = Schema.migrations
  ) throws {
    let connection = try Connection(path: path, create: createIfMissing)
    sqlite3_busy_timeout(connection.handle, Database.busyTimeoutMilliseconds)
    let mode = try connection.queryFirst("PRAGMA journal_mode = WAL") { $0.text(0) }
    guard mode?.lowercased() == "wal" else {
      throw StoreError(
        .sqlite(code: SQLITE_ERROR), message: "cannot switch to WAL (journal mode \(mode ?? "?"))",
        sql: "PRAGMA journal_mode = WAL", path: path)
    }
    try connection.executeScript("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
    self.schemaVersion = try Migrator(migrations: migrations).migrate(connection)
    self.connection = connection
    self.path = path
  }

  /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`): all of it is committed, or, when
  /// `body` throws, none of it.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: ``StoreError`` or what `body` throws (after rolling back).
  @discardableResult
  public func write<T>(_ body: (Connection) throws -> T) throws -> T {
    try exclusively { try connection.transaction { try body(connection) } }
  }

  /// Runs `body` in one read transaction, which sees a consistent snapshot.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: ``StoreError`` or what `body` throws.
  public func read<T>(_ body: (Connection) throws -> T) throws -> T {
    try exclusively {
      try connection.execute("BEGIN DEFERRED")
      defer { if !connection.isAutocommit { _ = try? connection.execute("COMMIT") } }
      return try body(connection)
    }
  }

  /// Runs `body` holding the lock; a nested call on the same thread throws instead of waiting
  /// for itself.
  private func exclusively<T>(_ body: () throws -> T) throws -> T {
    if let result = try lock.withLockIfAvailable({ _ in try owned(body) }) { return result }
    if owner.load(ordering: .relaxed) == UInt(pthread_self()) {
      throw StoreError(
        .sqlite(code: SQLITE_MISUSE),
        message: "nested database access on the same thread (read or write inside write)",
        path: path)
    }
    return try lock.withLock { _ in try owned(body) }
  }

  /// Runs `body` marked as this thread's, with the lock held.
  private func owned<T>(_ body: () throws -> T) rethrows -> T {
    owner.store(UInt(pthread_self()), ordering: .relaxed)
    defer { owner.store(0, ordering: .relaxed) }
    return try body()
  }

  /// Lets this connection's commits skip the fsync (`PRAGMA synchronous = NORMAL`): in WAL mode
  /// they stay atomic and consistent, but the last ones may be lost in a power cut. For a
  /// connection whose writes may be lost without harm, such as the MQTT publisher's deletions
  /// of acknowledged messages (a lost deletion sends a message again, which QoS 1 allows).
  public func allowLosingRecentCommits() throws {
    try exclusively { try connection.executeScript("PRAGMA synchronous = NORMAL") }
  }

  /// Whether SQLite opened the file read-only (`sqlite3_db_readonly`): its mode or owner lets
  /// this process read it but not write it. Every write then fails.
  public var isReadOnly: Bool {
    lock.withLock { _ in sqlite3_db_readonly(connection.handle, "main") == 1 }
  }

  /// Runs `PRAGMA integrity_check` and returns its lines (`["ok"]` for a sound file).
  public func integrityCheck() throws -> [String] {
    try read { connection in
      var lines: [String] = []
      try connection.query("PRAGMA integrity_check") { lines.append($0.text(0)) }
      return lines
    }
  }

  /// Copies the WAL back into the main file (`PRAGMA wal_checkpoint(TRUNCATE)`).
  public func checkpoint() throws {
    try exclusively { try connection.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
  }

  /// Frees the connection's page cache (`PRAGMA shrink_memory`). A long-running reader calls it
  /// after a bulk read, such as loading every place, so the cache does not stay at its high
  /// water mark; later statements refill only what they touch.
  public func releaseCacheMemory() throws {
    try exclusively { try connection.executeScript("PRAGMA shrink_memory") }
  }
}
