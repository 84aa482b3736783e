import FoundationEssentials

/// The built place monitor kept in the store (table `place_snapshot`), keyed by the places'
/// version (`place_version`), which triggers on `place` bump at every insert, delete and
/// update of a column a monitor reads, whoever writes.
///
/// The store keeps the bytes and their key only; what they hold, and checking that they are
/// sound, is the reader's (`PlaceTable`'s snapshot format in `Waymark`). Like every repository,
/// it works on the connection of an enclosing ``Database/read(_:)`` or
/// ``Database/write(durability:_:)``.
public struct PlaceSnapshotRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  /// The places' current version: it changes whenever a place is added, removed or has a
  /// field a monitor reads changed.
  ///
  /// - Throws: ``StoreError`` when the store cannot be read.
  public func placesVersion() throws -> Int64 {
    try connection.queryFirst("SELECT version FROM place_version WHERE id = 1") {
      $0.int64(0)
    } ?? -1
  }

  /// Calls `body` with the stored snapshot's bytes when it was made at places version
  /// `version` in format `format`, and returns its result; `nil` when there is no such
  /// snapshot. The bytes are valid only inside `body`.
  ///
  /// - Throws: ``StoreError`` when the store cannot be read, or what `body` throws.
  public func withSnapshot<T>(
    version: Int64, format: Int64, _ body: (UnsafeRawBufferPointer) throws -> T
  ) throws -> T? {
    var result: T?
    try connection.query(
      "SELECT data FROM place_snapshot WHERE id = 1 AND version = ? AND format = ?",
      [.integer(version), .integer(format)]
    ) { row in
      result = try row.withBlob(0, body)
    }
    return result
  }

  /// Stores `bytes` as the snapshot of places version `version` in format `format`, replacing
  /// any other, unless the places have changed since that version (then nothing is written).
  ///
  /// - Returns: whether the snapshot was stored.
  /// - Throws: ``StoreError`` when the store cannot be written.
  @discardableResult
  public func store(_ bytes: [UInt8], version: Int64, format: Int64) throws -> Bool {
    let changed = try connection.execute(
      """
      INSERT OR REPLACE INTO place_snapshot (id, version, format, data)
      SELECT 1, ?, ?, ? WHERE (SELECT version FROM place_version WHERE id = 1) = ?
      """, [.integer(version), .integer(format), .blob(bytes), .integer(version)])
    return changed > 0
  }

  /// Removes the snapshot, if any.
  ///
  /// - Throws: ``StoreError`` when the store cannot be written.
  public func remove() throws {
    try connection.execute("DELETE FROM place_snapshot")
  }
}
