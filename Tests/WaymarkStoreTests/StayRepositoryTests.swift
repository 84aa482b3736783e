import Foundation
import Testing
import WaymarkCore

@testable import WaymarkStore

@Suite("Stay repository")
struct StayRepositoryTests {
  static let start = Timestamp.date(milliseconds: 1_795_939_200_000)
  static let depot = Coordinate(latitude: 52.52, longitude: 13.405)

  static func stay(_ seconds: Double, departure: Double? = nil, fixes: Int = 100) -> Stay {
    Stay(
      arrivalDate: start.addingTimeInterval(seconds),
      departureDate: departure.map { start.addingTimeInterval($0) }, coordinate: depot,
      horizontalAccuracy: 4.5, fixCount: fixes, source: "test")
  }

  @Test("a version-7 store migrates to 8 with no stays, keeping its places")
  func migratesVersion7() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("v7.db")
    do {
      let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(7)))
      #expect(old.schemaVersion == 7)
      try old.write {
        _ = try PlaceRepository($0).upsert([
          Place(id: "depot", name: "Depot", coordinate: Self.depot)
        ])
      }
      #expect(throws: StoreError.self) { try old.read { try StayRepository($0).count() } }
    }
    let database = try Database(path: path)
    #expect(database.schemaVersion == Schema.migrations.last?.version)
    #expect(try database.integrityCheck() == ["ok"])
    #expect(try database.read { try PlaceRepository($0).all().map(\.id) } == ["depot"])
    #expect(try database.read { try StayRepository($0).count() } == 0)
  }

  @Test("a version-9 store's stays read as observed after migrating; an inferred one round-trips")
  func migratesVersion9AndKeepsInferredDepartures() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("v9.db")
    do {
      let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(9)))
      #expect(old.schemaVersion == 9)
      try old.write { connection in
        try connection.execute(
          """
          INSERT INTO stay (arrival, departure, latitude, longitude, accuracy, fix_count, last_fix)
          VALUES (?, ?, 52.52, 13.405, 4.5, 100, ?)
          """,
          [
            StoreTime.value(Self.start), StoreTime.value(Self.start.addingTimeInterval(600)),
            StoreTime.value(Self.start.addingTimeInterval(600)),
          ])
      }
    }
    let database = try Database(path: path)
    #expect(database.schemaVersion == Schema.migrations.last?.version)
    let before = try database.read { try StayRepository($0).all() }
    #expect(before.count == 1 && before[0].departureDate == Self.start.addingTimeInterval(600))
    #expect(before.allSatisfy { !$0.isDepartureInferred })
    var inferred = Self.stay(1000, departure: 1900)
    inferred.observedDepartureDate = Self.start.addingTimeInterval(1300)
    try database.write { try StayRepository($0).record(inferred, lastFix: Self.start) }
    let after = try database.read { try StayRepository($0).all() }
    #expect(after.count == 2)
    #expect(after[1].observedDepartureDate == Self.start.addingTimeInterval(1300))
    #expect(after[1].inferredSeconds == 600)
  }

  @Test("recording a stay again finds its row; a departure closes it; one stay is open at most")
  func recordsOnceAndClosesOnce() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("stays.db"))
    try database.write { connection in
      let stays = StayRepository(connection)
      #expect(try stays.record(Self.stay(0), lastFix: Self.start.addingTimeInterval(150)))
      // The same arrival again (a save, a replay): no new row; the open stay's progress moves.
      #expect(
        try !stays.record(Self.stay(0, fixes: 300), lastFix: Self.start.addingTimeInterval(300)))
      #expect(try stays.open()?.lastFix == Self.start.addingTimeInterval(300))
      #expect(try stays.open()?.stay.fixCount == 300)
      // A second open stay closes the first at its last fix.
      #expect(try stays.record(Self.stay(1000), lastFix: Self.start.addingTimeInterval(1150)))
      let all = try stays.all()
      #expect(all.count == 2)
      #expect(all[0].departureDate == Self.start.addingTimeInterval(300))
      #expect(all[1].isOpen && all[1].source == "test")
      // Its departure closes it; recording the open stay again later does not reopen it.
      #expect(
        try !stays.record(
          Self.stay(1000, departure: 1400), lastFix: Self.start.addingTimeInterval(1400)))
      #expect(try !stays.record(Self.stay(1000), lastFix: Self.start.addingTimeInterval(1500)))
      #expect(try stays.open() == nil)
      #expect(try stays.all()[1].departureDate == Self.start.addingTimeInterval(1400))
    }
  }

  @Test("a place imported later labels the stays in it, and only those")
  func labelsStaysInAPlace() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("stays.db"))
    try database.write { connection in
      let stays = StayRepository(connection)
      try stays.record(Self.stay(0, departure: 600), lastFix: Self.start.addingTimeInterval(600))
      var far = Self.stay(1000, departure: 1600)
      far.coordinate = Self.depot.offset(by: 500, bearingDegrees: 0)
      try stays.record(far, lastFix: Self.start.addingTimeInterval(1600))
      #expect(try stays.label(placeID: "depot", centre: Self.depot, radiusMeters: 50) == 1)
      #expect(try stays.all().map(\.placeID) == ["depot", nil])
      #expect(try stays.all(unnamedOnly: true).count == 1)
    }
  }
}
