/// An error from the store: SQLite's result code and message, and the SQL that failed.
///
/// The SQL text is kept so that a failure can be located; bound values are never part of the
/// error (they may be coordinates or names).
public struct StoreError: Error, Sendable, CustomStringConvertible {
  /// What kind of failure this is.
  public enum Kind: Sendable, Hashable {
    /// SQLite returned this (extended) result code.
    case sqlite(code: Int32)
    /// The database was written by a newer Waymark: its schema version is above ours.
    case newerSchema(found: Int, supported: Int)
    /// A row did not hold what the schema promises (such as an unknown grant level).
    case corruptRow
    /// A reference to something that is not in the store (such as an unknown place id).
    case notFound
  }

  /// What kind of failure this is.
  public var kind: Kind
  /// SQLite's message (`sqlite3_errmsg`) or our own explanation.
  public var message: String
  /// The SQL statement that failed, when one did. Never includes bound values.
  public var sql: String?
  /// The database file, when known.
  public var path: String?

  /// Creates an error.
  public init(_ kind: Kind, message: String, sql: String? = nil, path: String? = nil) {
    self.kind = kind
    self.message = message
    self.sql = sql
    self.path = path
  }

  /// The SQLite primary result code (the low byte of the extended code), or `nil`.
  public var resultCode: Int32? {
    if case .sqlite(let code) = kind { return code & 0xff }
    return nil
  }

  /// Whether the failure may pass by itself, so that the same write is worth trying again
  /// later: a full disk (`SQLITE_FULL`), an I/O error, a lock held too long (`SQLITE_BUSY`,
  /// `SQLITE_LOCKED`), a file that became read-only (a remount) or could not be opened.
  public var isTransient: Bool {
    switch resultCode {
    case 5, 6, 8, 10, 13, 14: true
    default: false
    }
  }

  /// Whether this is a constraint violation (`SQLITE_CONSTRAINT`).
  public var isConstraintViolation: Bool { resultCode == 19 }

  /// One line for a person: the message, the SQLite code, the SQL and the file.
  public var description: String {
    var text = message
    if case .sqlite(let code) = kind { text += " (SQLite code \(code))" }
    if let sql { text += " in SQL: \(sql)" }
    if let path { text += " [\(path)]" }
    return text
  }
}
