import CSQLite

/// A prepared statement. Values are bound to its `?` parameters, never spliced into the text.
///
/// A statement belongs to one ``Connection`` and is used only while its database lock is held.
public final class Statement {
  let handle: OpaquePointer
  /// The SQL text, as prepared (without bound values).
  public let sql: String
  // Unowned: the connection owns its statements (its cache), so it outlives them.
  private unowned let connection: Connection

  init(_ sql: String, connection: Connection) throws {
    var statement: OpaquePointer?
    let code = sqlite3_prepare_v3(
      connection.handle, sql, -1, UInt32(SQLITE_PREPARE_PERSISTENT), &statement, nil)
    guard code == SQLITE_OK, let statement else {
      sqlite3_finalize(statement)
      throw connection.error(code, sql: sql)
    }
    self.handle = statement
    self.sql = sql
    self.connection = connection
  }

  deinit { sqlite3_finalize(handle) }

  /// Resets the statement and binds `values` to its parameters, in order.
  ///
  /// - Throws: ``StoreError`` when the count does not match or SQLite refuses a value.
  public func bind(_ values: [SQLValue]) throws {
    sqlite3_reset(handle)
    let expected = Int(sqlite3_bind_parameter_count(handle))
    guard expected == values.count else {
      throw StoreError(
        .sqlite(code: SQLITE_RANGE),
        message: "statement expects \(expected) values, got \(values.count)",
        sql: sql, path: connection.path)
    }
    for (offset, value) in values.enumerated() {
      let index = Int32(offset + 1)
      let code: Int32
      switch value {
      case .null: code = sqlite3_bind_null(handle, index)
      case .integer(let number): code = sqlite3_bind_int64(handle, index, number)
      case .real(let number): code = sqlite3_bind_double(handle, index, number)
      case .text(let string):
        code = sqlite3_bind_text(handle, index, string, -1, transientDestructor)
      case .blob(let bytes):
        code = bytes.withUnsafeBytes { raw in
          sqlite3_bind_blob64(
            handle, index, raw.baseAddress, sqlite3_uint64(raw.count), transientDestructor)
        }
      }
      guard code == SQLITE_OK else { throw connection.error(code, sql: sql) }
    }
  }

  /// Advances to the next row.
  ///
  /// - Returns: `true` when a row is available, `false` when the statement is done.
  /// - Throws: ``StoreError`` with the statement's SQL (never its values).
  public func step() throws -> Bool {
    let code = sqlite3_step(handle)
    switch code {
    case SQLITE_ROW: return true
    case SQLITE_DONE: return false
    default:
      let error = connection.error(code, sql: sql)
      sqlite3_reset(handle)
      throw error
    }
  }

  /// The current row; valid until the next ``step()``.
  public var row: Row { Row(handle: handle) }

  /// Resets the statement so that it releases its read snapshot, and clears its bound values:
  /// a cached statement would otherwise hold the last of them (a payload, a position, a place
  /// snapshot of half a megabyte) until its next use.
  public func reset() {
    sqlite3_reset(handle)
    sqlite3_clear_bindings(handle)
  }
}

/// `SQLITE_TRANSIENT`: SQLite copies the bound bytes before the call returns.
nonisolated(unsafe) let transientDestructor = unsafeBitCast(
  -1, to: sqlite3_destructor_type.self)
