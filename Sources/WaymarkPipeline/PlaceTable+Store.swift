import FoundationEssentials
import Waymark
import WaymarkStore

extension PlaceTable {
  /// The places of `database` as a monitor keeps them, ordered by id, with their spatial
  /// index built.
  ///
  /// When the store holds a snapshot of the places at their current version
  /// (``PlaceSnapshotRepository``) in this Waymark's format, and it reads back sound
  /// (``PlaceTable/init(snapshot:)``), that is the table: one blob read instead of a million
  /// rows and an index build. Otherwise — no snapshot yet, the places changed since, another
  /// format, or bytes that fail a check — the rows are read as ever (one query stepping the
  /// monitor's columns straight into the table, ``PlaceRepository/forEachMonitorRow(_:)``),
  /// the index is built, and, when the store is writable and `storeSnapshot` is set, the
  /// snapshot of that version is written for the next start. The places, their numbers and
  /// their order are the same either way.
  ///
  /// - Parameter storeSnapshot: write a snapshot after loading from the rows (default `true`).
  /// - Throws: ``StoreError`` when the store cannot be read (a failed snapshot write is not
  ///   an error: the next start loads from the rows again).
  package static func load(from database: Database, storeSnapshot: Bool = true) throws
    -> PlaceTable
  {
    try loadNoting(from: database, storeSnapshot: storeSnapshot).table
  }

  /// ``load(from:storeSnapshot:)``, saying whether the table came from the store's snapshot
  /// (`true`) or from the rows (`false`), for the daemon's log.
  ///
  /// - Throws: ``StoreError`` when the store cannot be read.
  package static func loadNoting(from database: Database, storeSnapshot: Bool = true) throws
    -> (table: PlaceTable, fromSnapshot: Bool)
  {
    let (stored, rows, version) = try database.read {
      connection -> (PlaceTable?, PlaceTable?, Int64) in
      let repository = PlaceSnapshotRepository(connection)
      let version = try repository.placesVersion()
      let stored = try repository.withSnapshot(version: version, format: snapshotFormat) {
        PlaceTable(snapshot: $0)
      }
      if let table = stored ?? nil { return (table, nil, version) }
      return (nil, try loadRows(connection), version)
    }
    if let stored { return (stored, true) }
    var table = rows ?? PlaceTable()
    table.buildIndex()
    if storeSnapshot, !database.isReadOnly, let bytes = table.snapshot() {
      _ = try? database.write(durability: .mayLoseRecent) {
        try PlaceSnapshotRepository($0).store(bytes, version: version, format: snapshotFormat)
      }
    }
    return (table, false)
  }

  /// The places read from their rows, in id order, without an index.
  private static func loadRows(_ connection: Connection) throws -> PlaceTable {
    let repository = PlaceRepository(connection)
    var table = PlaceTable()
    table.reserveCapacity(try repository.count())
    try repository.forEachMonitorRow { row in
      row.withID { id in
        row.withName { name in
          _ = table.append(
            id: id, name: name, coordinate: row.coordinate, radiusMeters: row.radiusMeters,
            detection: row.detection)
        }
      }
    }
    return table
  }
}
