import CSQLite

/// The current row of a ``Statement``, read by zero-based column index.
///
/// Valid only until the statement steps again.
public struct Row {
  let handle: OpaquePointer

  /// Whether column `index` is `NULL`.
  public func isNull(_ index: Int32) -> Bool {
    sqlite3_column_type(handle, index) == SQLITE_NULL
  }

  /// Column `index` as an integer (`0` for `NULL`).
  public func int64(_ index: Int32) -> Int64 {
    sqlite3_column_int64(handle, index)
  }

  /// Column `index` as an `Int` (`0` for `NULL`).
  public func int(_ index: Int32) -> Int {
    Int(sqlite3_column_int64(handle, index))
  }

  /// Column `index` as an integer, or `nil` for `NULL`.
  public func optionalInt64(_ index: Int32) -> Int64? {
    isNull(index) ? nil : int64(index)
  }

  /// Column `index` as a `Double` (`0` for `NULL`).
  public func double(_ index: Int32) -> Double {
    sqlite3_column_double(handle, index)
  }

  /// Column `index` as a `Double`, or `nil` for `NULL`.
  public func optionalDouble(_ index: Int32) -> Double? {
    isNull(index) ? nil : double(index)
  }

  /// Column `index` as text (`""` for `NULL`).
  public func text(_ index: Int32) -> String {
    optionalText(index) ?? ""
  }

  /// Column `index` as text, or `nil` for `NULL`.
  public func optionalText(_ index: Int32) -> String? {
    guard let pointer = sqlite3_column_text(handle, index) else { return nil }
    let count = Int(sqlite3_column_bytes(handle, index))
    return String(
      decoding: UnsafeBufferPointer(start: pointer, count: count), as: UTF8.self)
  }

  /// Calls `body` with column `index`'s UTF-8 bytes, NUL-terminated (no copy; valid only inside
  /// `body`). An empty buffer for `NULL`.
  public func withText<T>(_ index: Int32, _ body: (UnsafeBufferPointer<UInt8>) throws -> T)
    rethrows -> T
  {
    let pointer = sqlite3_column_text(handle, index)
    let count = Int(sqlite3_column_bytes(handle, index))
    return try body(UnsafeBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
  }

  /// Calls `body` with column `index`'s bytes as a blob (no copy; valid only inside `body`).
  /// An empty buffer for `NULL` or an empty blob.
  public func withBlob<T>(_ index: Int32, _ body: (UnsafeRawBufferPointer) throws -> T)
    rethrows -> T
  {
    let pointer = sqlite3_column_blob(handle, index)
    let count = Int(sqlite3_column_bytes(handle, index))
    return try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
  }
}
