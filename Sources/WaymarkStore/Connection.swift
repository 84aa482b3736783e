import CSQLite

/// One open SQLite connection with a cache of prepared statements.
///
/// A `Connection` is handed to the closures of ``Database/write(durability:_:)`` (on the store's writer
/// thread) and ``Database/read(_:)`` (under the reader's lock) and must not escape them: that
/// thread and that lock are what make using it safe.
public final class Connection {
  let handle: OpaquePointer
  /// The database file.
  public let path: String
  private var statements: [String: Statement] = [:]

  init(path: String, create: Bool, readOnly: Bool = false) throws {
    var handle: OpaquePointer?
    // NOFOLLOW: a store path that is a symbolic link is refused (a link planted in a
    // group-writable state directory would otherwise have root create or write its target).
    var flags =
      (readOnly ? SQLITE_OPEN_READONLY : SQLITE_OPEN_READWRITE) | SQLITE_OPEN_NOMUTEX
      | SQLITE_OPEN_EXRESCODE | SQLITE_OPEN_NOFOLLOW
    if create { flags |= SQLITE_OPEN_CREATE }
    let code = sqlite3_open_v2(path, &handle, flags, nil)
    guard code == SQLITE_OK, let handle else {
      let message = handle.map { String(cString: sqlite3_errmsg($0)) } ?? "cannot open"
      sqlite3_close_v2(handle)
      throw StoreError(.sqlite(code: code), message: message, path: path)
    }
    self.handle = handle
    self.path = path
  }

  deinit {
    statements.removeAll()
    sqlite3_close_v2(handle)
  }

  /// Builds a ``StoreError`` from SQLite's current error state for `sql`.
  func error(_ code: Int32, sql: String?) -> StoreError {
    let extended = sqlite3_extended_errcode(handle)
    let message = String(cString: sqlite3_errmsg(handle))
    return StoreError(
      .sqlite(code: extended != 0 ? extended : code), message: message, sql: sql, path: path)
  }

  /// The cached prepared statement for `sql`, prepared on first use.
  ///
  /// - Throws: ``StoreError`` when the SQL does not compile.
  public func statement(_ sql: String) throws -> Statement {
    if let statement = statements[sql] { return statement }
    let statement = try Statement(sql, connection: self)
    statements[sql] = statement
    return statement
  }

  /// Runs one statement with bound values and returns the number of rows it changed.
  ///
  /// - Parameters:
  ///   - sql: one SQL statement with `?` parameters.
  ///   - values: the values for the parameters, in order.
  /// - Returns: rows inserted, updated or deleted (`sqlite3_changes`).
  /// - Throws: ``StoreError`` carrying `sql` but not `values`.
  @discardableResult
  public func execute(_ sql: String, _ values: [SQLValue] = []) throws -> Int {
    let statement = try statement(sql)
    try statement.bind(values)
    defer { statement.reset() }
    while try statement.step() {}
    return Int(sqlite3_changes(handle))
  }

  /// Runs a query and calls `body` for each row.
  ///
  /// - Throws: ``StoreError``, or what `body` throws.
  public func query(
    _ sql: String, _ values: [SQLValue] = [], _ body: (Row) throws -> Void
  ) throws {
    let statement = try statement(sql)
    try statement.bind(values)
    defer { statement.reset() }
    while try statement.step() {
      try body(statement.row)
    }
  }

  /// Runs a query and maps its first row, or returns `nil` when there is none.
  public func queryFirst<T>(
    _ sql: String, _ values: [SQLValue] = [], _ map: (Row) throws -> T
  ) throws -> T? {
    let statement = try statement(sql)
    try statement.bind(values)
    defer { statement.reset() }
    return try statement.step() ? map(statement.row) : nil
  }

  /// Runs `body` in one write transaction (`BEGIN IMMEDIATE`): all of it is committed, or, when
  /// `body` throws, none of it (rolled back, then rethrown).
  func transaction<T>(_ body: () throws -> T) throws -> T {
    try execute("BEGIN IMMEDIATE")
    do {
      let result = try body()
      try execute("COMMIT")
      return result
    } catch {
      if !isAutocommit { _ = try? execute("ROLLBACK") }
      throw error
    }
  }

  /// Runs SQL text without parameters, possibly several statements (schema scripts, pragmas).
  ///
  /// Wraps `sqlite3_exec(3)`. Only for constant SQL: never build `script` from data.
  public func executeScript(_ script: String) throws {
    var message: UnsafeMutablePointer<CChar>?
    let code = sqlite3_exec(handle, script, nil, nil, &message)
    guard code == SQLITE_OK else {
      let text = message.map { String(cString: $0) } ?? String(cString: sqlite3_errmsg(handle))
      sqlite3_free(message)
      throw StoreError(.sqlite(code: code), message: text, sql: script, path: path)
    }
  }

  /// Whether the connection is outside any transaction.
  public var isAutocommit: Bool { sqlite3_get_autocommit(handle) != 0 }
}
