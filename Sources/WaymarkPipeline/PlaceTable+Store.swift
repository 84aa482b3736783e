import FoundationEssentials
import Waymark
import WaymarkStore

extension PlaceTable {
  /// The places of `database` as a monitor keeps them, ordered by id: one query stepping the
  /// monitor's columns straight into the table (``PlaceRepository/forEachMonitorRow(_:)``), no
  /// `Place` and no `String` per place.
  ///
  /// - Throws: ``StoreError`` when the store cannot be read.
  package static func load(from database: Database) throws -> PlaceTable {
    try database.read { connection in
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
}
