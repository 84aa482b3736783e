import CSQLite
import FoundationEssentials
import Glibc
import Synchronization
import WaymarkCore

/// The Waymark store: one write connection, used by one serialized writer, and one read-only
/// connection for the readers (GRDB's model).
///
/// Opening a database sets WAL journaling, `synchronous=FULL` (a committed transaction survives
/// power loss), foreign keys and a busy timeout, then brings the schema up to date with
/// ``Schema/migrations``. A file written by a newer Waymark is refused.
///
/// ``write(durability:_:)`` runs its closure as one `BEGIN IMMEDIATE` … `COMMIT` transaction on the
/// store's writer thread (`StoreWriter`), the only user of the write connection: writes from
/// many threads (the daemon's pipeline, broker and MQTT publisher share one `Database`) run one
/// after another in the order they came, and none waits in SQLite's busy handler for another
/// writer of this process. ``read(_:)`` runs its closure in a read transaction on a read-only
/// connection of its own, opened at the first read, under a lock; in WAL mode a reader sees the
/// last commit and never blocks the writer. Calls must not nest: a read or write inside a write,
/// or a read inside a read, throws instead of deadlocking.
/// Both block the calling thread until done; async callers that care run them off the
/// cooperative pool.
public final class Database: @unchecked Sendable {
  // @unchecked: the write connection is used only on the writer's thread; `reader` only under
  // its lock.
  private let writer: StoreWriter
  private let reader = Locked<Connection?>(nil)
  // `PRAGMA cache_size` for the read connection when it opens (``limitPageCache(kibibytes:)``).
  private let readerCachePragma = Locked<String?>(nil)
  // The thread holding `reader`'s lock (`pthread_self()`), or 0.
  private let readerOwner = Atomic<UInt>(0)
  /// The database file.
  public let path: String
  /// The schema version of the file after opening (`PRAGMA user_version`).
  public let schemaVersion: Int
  /// Whether SQLite opened the file read-only (`sqlite3_db_readonly`): its mode or owner lets
  /// this process read it but not write it. Every write then fails.
  public let isReadOnly: Bool

  /// How long a statement waits for another process's lock before failing, milliseconds.
  public static let busyTimeoutMilliseconds: Int32 = 5000

  /// How much a write's commit may be lost in a power cut.
  public enum Durability: Sendable {
    /// The commit is on the disk when ``Database/write(durability:_:)`` returns
    /// (`synchronous = FULL`).
    case full
    /// The commit skips the fsync (`synchronous = NORMAL`): in WAL mode it stays atomic and
    /// consistent, but it may be lost in a power cut until a later full commit or checkpoint.
    /// For writes whose loss does no harm, such as the MQTT publisher's deletions of
    /// acknowledged messages (a lost deletion sends a message again, which QoS 1 allows).
    case mayLoseRecent
  }

  /// Opens (and creates, when asked) the database at `path`, migrates it and starts its writer
  /// thread.
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
    self.isReadOnly = sqlite3_db_readonly(connection.handle, "main") == 1
    self.path = path
    self.writer = StoreWriter(connection: connection)
  }

  deinit {
    writer.stop()
  }

  /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`) on the store's writer thread and
  /// waits for it: all of it is committed, or, when `body` throws, none of it.
  ///
  /// - Parameters:
  ///   - durability: whether the commit is on the disk on return (default ``Durability/full``).
  ///   - body: the transaction's work; it runs on the writer's thread while the caller waits.
  /// - Returns: what `body` returns.
  /// - Throws: ``StoreError`` or what `body` throws (after rolling back).
  @discardableResult
  public func write<T>(durability: Durability = .full, _ body: (Connection) throws -> T) throws
    -> T
  {
    try writer.perform { connection in
      guard durability == .mayLoseRecent else {
        return try connection.transaction { try body(connection) }
      }
      try connection.executeScript("PRAGMA synchronous = NORMAL")
      defer { _ = try? connection.executeScript("PRAGMA synchronous = FULL") }
      return try connection.transaction { try body(connection) }
    }
  }

  /// Runs `body` in one read transaction on the read-only connection, which sees a consistent
  /// snapshot of the last commit.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: ``StoreError`` or what `body` throws.
  public func read<T>(_ body: (Connection) throws -> T) throws -> T {
    try reading { connection in
      try connection.execute("BEGIN DEFERRED")
      defer { if !connection.isAutocommit { _ = try? connection.execute("COMMIT") } }
      return try body(connection)
    }
  }

  /// Runs `body` with the read-only connection (opened on first use) and its lock held; a
  /// nested call on the same thread throws instead of waiting for itself.
  private func reading<T>(_ body: (Connection) throws -> T) throws -> T {
    if writer.isCurrentThread || readerOwner.load(ordering: .relaxed) == UInt(pthread_self()) {
      throw StoreError(
        .sqlite(code: SQLITE_MISUSE),
        message: "nested database access on the same thread (read or write inside write)",
        path: path)
    }
    return try reader.withLock { slot in
      readerOwner.store(UInt(pthread_self()), ordering: .relaxed)
      defer { readerOwner.store(0, ordering: .relaxed) }
      let connection = try slot ?? openReader()
      slot = connection
      return try body(connection)
    }
  }

  /// Opens the read-only connection, with the write connection's settings.
  private func openReader() throws -> Connection {
    let connection = try Connection(path: path, create: false, readOnly: true)
    sqlite3_busy_timeout(connection.handle, Database.busyTimeoutMilliseconds)
    try connection.executeScript("PRAGMA synchronous = FULL; PRAGMA foreign_keys = ON;")
    if let pragma = readerCachePragma.withLock({ $0 }) { try connection.executeScript(pragma) }
    return connection
  }

  /// Bounds the page cache of each of the store's connections to `kibibytes`
  /// (`PRAGMA cache_size = -kibibytes`; SQLite's default is 2,000 KiB a connection), the read
  /// connection included when it opens later. A long-running process whose reads and writes are
  /// small calls it so that a bulk read or a large message's deletion leaves at most this much
  /// behind; SQLite evicts the least recently used pages beyond it.
  public func limitPageCache(kibibytes: Int) throws {
    let pragma = "PRAGMA cache_size = -\(max(1, kibibytes))"
    try writer.perform { try $0.executeScript(pragma) }
    readerCachePragma.withLock { $0 = pragma }
    try reader.withLock { slot in try slot?.executeScript(pragma) }
  }

  /// Runs `PRAGMA integrity_check` and returns its lines (`["ok"]` for a sound file).
  public func integrityCheck() throws -> [String] {
    try read { connection in
      var lines: [String] = []
      try connection.query("PRAGMA integrity_check") { lines.append($0.text(0)) }
      return lines
    }
  }

  /// Runs `body` on the writer's thread with the write connection, outside any transaction:
  /// connection settings (`PRAGMA query_only`, which tests use to make writes fail as on a
  /// file system remounted read-only).
  func withWriteConnection<T>(_ body: (Connection) throws -> T) throws -> T {
    try writer.perform(body)
  }

  /// Copies the WAL back into the main file (`PRAGMA wal_checkpoint(TRUNCATE)`).
  public func checkpoint() throws {
    try writer.perform { try $0.executeScript("PRAGMA wal_checkpoint(TRUNCATE)") }
  }

  /// Frees the connections' page caches (`PRAGMA shrink_memory`). A long-running reader calls
  /// it after a bulk read, such as loading every place, so the cache does not stay at its high
  /// water mark; later statements refill only what they touch.
  public func releaseCacheMemory() throws {
    try reading { try $0.executeScript("PRAGMA shrink_memory") }
    try writer.perform { try $0.executeScript("PRAGMA shrink_memory") }
  }
}
