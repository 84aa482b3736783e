import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkPipeline
import WaymarkStore
import WaymarkTesting

/// The places' snapshot in a real store file: written at the first load, read back while the
/// places are unchanged, dropped from use by every change made by `waymark places` or by SQL
/// from another process, and never trusted when it does not read back sound.
@Suite struct PlaceSnapshotStoreTests {
  static let origin = Coordinate(latitude: 48.137, longitude: 11.575)

  /// A store of 200 places out of id order, one of them with overrides.
  static func store(in directory: TemporaryDirectory) throws -> (Database, String) {
    let path = directory.file("store.db")
    let database = try Database(path: path)
    var places: [Place] = []
    for number in 0..<200 {
      places.append(
        Place(
          id: "place-\((number * 37) % 200)", name: "Place \(number)",
          coordinate: origin.offset(by: Double(number) * 20, bearingDegrees: Double(number * 7)),
          radiusMeters: 40,
          detection: number == 5 ? PlaceDetectionOverrides(confirmations: 3) : .init()))
    }
    try database.write { _ = try PlaceRepository($0).upsert(places) }
    return (database, path)
  }

  /// Stores, at the places' current version, the snapshot of a one-place table ("decoy") that
  /// is not the store's: a load that returns it read the snapshot.
  static func plantDecoy(in database: Database) throws {
    var decoy = PlaceTable(
      [Place(id: "decoy", name: "Decoy", coordinate: origin, radiusMeters: 10)])
    decoy.buildIndex()
    let bytes = try #require(decoy.snapshot())
    try database.write { connection in
      let repository = PlaceSnapshotRepository(connection)
      let version = try repository.placesVersion()
      let stored = try repository.store(bytes, version: version, format: PlaceTable.snapshotFormat)
      #expect(stored)
    }
  }

  static func isDecoy(_ table: PlaceTable) -> Bool {
    table.count == 1 && PlaceMonitor(table: table).name(of: "decoy") == "Decoy"
  }

  /// The first load writes the snapshot of the current version; a snapshot there is what the
  /// next load returns (the decoy, the positive control); a change to the places by
  /// `waymark places add` / `remove` or by SQL from the sqlite3 shell (insert, delete, a
  /// moved centre, a new name or radius, a new override) makes the next load read the rows
  /// again, while an update of a column no monitor reads (a visit count) keeps it.
  @Test func everyChangeToThePlacesDropsTheSnapshot() throws {
    let directory = try TemporaryDirectory()
    let (database, path) = try Self.store(in: directory)
    let first = try PlaceTable.load(from: database)
    #expect(first.count == 200)
    let stored = try database.read { connection in
      let repository = PlaceSnapshotRepository(connection)
      return try repository.withSnapshot(
        version: try repository.placesVersion(), format: PlaceTable.snapshotFormat
      ) { PlaceTable(snapshot: $0)?.count }
    }
    #expect(stored == 200)

    let waymark = Products.executable("waymark")
    let sqlite = "/usr/bin/sqlite3"
    let changes: [(String, String, [String], Int)] = [
      (
        "waymark places add", waymark,
        [
          "places", "add", "--name", "New", "--lat", "48.14", "--lon", "11.58", "--id", "new",
          "--store", path,
        ], 201
      ),
      ("waymark places remove", waymark, ["places", "remove", "new", "--store", path], 200),
      (
        "SQL insert", sqlite,
        [
          path,
          "INSERT INTO place (id, name, latitude, longitude, radius) "
            + "VALUES ('sql', 'SQL', 48.1, 11.5, 30)",
        ], 201
      ),
      ("SQL delete", sqlite, [path, "DELETE FROM place WHERE id = 'sql'"], 200),
      ("SQL move", sqlite, [path, "UPDATE place SET latitude = 48.2 WHERE id = 'place-3'"], 200),
      ("SQL rename", sqlite, [path, "UPDATE place SET name = 'X' WHERE id = 'place-4'"], 200),
      ("SQL radius", sqlite, [path, "UPDATE place SET radius = 99 WHERE id = 'place-4'"], 200),
      (
        "SQL override", sqlite,
        [path, "UPDATE place SET dwell_seconds = 30 WHERE id = 'place-9'"], 200
      ),
    ]
    for (name, tool, arguments, count) in changes {
      try Self.plantDecoy(in: database)
      #expect(Self.isDecoy(try PlaceTable.load(from: database, storeSnapshot: false)), "\(name)")
      let run = try CommandRun.run(tool, arguments)
      #expect(run.status == 0, "\(name): \(run.stderr)")
      let loaded = try PlaceTable.load(from: database, storeSnapshot: false)
      #expect(!Self.isDecoy(loaded) && loaded.count == count, "\(name)")
    }
    try Self.plantDecoy(in: database)
    let visits = try CommandRun.run(sqlite, [path, "UPDATE place SET visit_count = 3"])
    #expect(visits.status == 0)
    #expect(Self.isDecoy(try PlaceTable.load(from: database)))
  }

  /// A snapshot of the current version that is truncated, garbled or of another format is
  /// not used: the load reads the rows (the real places, not the decoy's one) and stores a
  /// sound snapshot again.
  @Test func damagedSnapshotFallsBackToTheRows() throws {
    let directory = try TemporaryDirectory()
    let (database, _) = try Self.store(in: directory)
    var decoy = PlaceTable(
      [Place(id: "decoy", name: "Decoy", coordinate: Self.origin, radiusMeters: 10)])
    decoy.buildIndex()
    let good = try #require(decoy.snapshot())
    var flipped = good
    flipped[good.count / 2] ^= 0x10
    let damaged: [(String, [UInt8], Int64)] = [
      ("truncated", Array(good.prefix(good.count - 3)), PlaceTable.snapshotFormat),
      ("flipped", flipped, PlaceTable.snapshotFormat),
      ("empty", [], PlaceTable.snapshotFormat),
      ("other format", good, PlaceTable.snapshotFormat + 1),
      ("good (control)", good, PlaceTable.snapshotFormat),
    ]
    for (name, bytes, format) in damaged {
      try database.write { connection in
        let repository = PlaceSnapshotRepository(connection)
        let stored = try repository.store(
          bytes, version: try repository.placesVersion(), format: format)
        #expect(stored)
      }
      let loaded = try PlaceTable.load(from: database)
      if name.hasSuffix("(control)") {
        #expect(Self.isDecoy(loaded), "\(name)")
      } else {
        #expect(loaded.count == 200, "\(name)")
        // Rewritten: the next load reads the sound snapshot of the 200 places.
        let again = try database.read { connection in
          let repository = PlaceSnapshotRepository(connection)
          return try repository.withSnapshot(
            version: try repository.placesVersion(), format: PlaceTable.snapshotFormat
          ) { PlaceTable(snapshot: $0)?.count }
        }
        #expect(again == 200, "\(name)")
      }
    }
  }

  /// A snapshot is stored only for the version it was made at: a stale one is refused.
  @Test func staleSnapshotIsNotStored() throws {
    let directory = try TemporaryDirectory()
    let (database, _) = try Self.store(in: directory)
    try database.write { connection in
      let repository = PlaceSnapshotRepository(connection)
      let version = try repository.placesVersion()
      let current = try repository.store([1, 2, 3], version: version, format: 1)
      let stale = try repository.store([1, 2, 3], version: version - 1, format: 1)
      #expect(current && !stale)
    }
  }
}
