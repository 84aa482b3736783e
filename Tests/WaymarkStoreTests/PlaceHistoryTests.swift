import Foundation
import Testing
import WaymarkCore

@testable import WaymarkStore

/// Schema version 4: visits keep a snapshot of their place, removing a place keeps its history,
/// deleting history is explicit, and a place added again with a removed one's id has its own.
@Suite("Place history")
struct PlaceHistoryTests {
  /// The cafe with every descriptive field.
  static let describedCafe = Place(
    id: "cafe", name: "Blue Bottle", coordinate: cafe.coordinate, radiusMeters: 60,
    category: "cafe", subtitle: "Mitte", address: "Main St 1", town: "Berlin",
    url: "https://example.org/cafe", image: "cafe.jpg", detail: "Cash only.")

  func makeDatabase(_ directory: TemporaryDirectory, _ places: [Place]) throws -> Database {
    let database = try Database(path: directory.path("h.db"))
    try database.write { _ = try PlaceRepository($0).upsert(places) }
    return database
  }

  func visits(_ database: Database, placeID: String? = nil) throws -> [VisitRecord] {
    try database.read { try VisitRepository($0).all(placeID: placeID) }
  }

  func events(_ database: Database) throws -> [StoredEvent] {
    try database.read { try EventRepository($0).all() }
  }

  @Test("a version-3 store migrates keeping every visit and event, snapshots from the places")
  func migratesVersion3() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("v3.db")
    do {
      let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(3)))
      #expect(old.schemaVersion == 3)
      try old.write { connection in
        try insertPlacesBeforeGroups(connection, [Self.describedCafe, office])
        // Version 3's visit and event tables, written as a version-3 Waymark wrote them.
        try connection.execute(
          """
          INSERT INTO visit (id, place_id, arrival, departure, fix_count, best_accuracy,
            last_fix, source) VALUES
            (1, 'cafe', 1000, 601000, 61, 3.5, 600000, 'drive.nmea'),
            (2, 'office', 3600000, NULL, 2, NULL, 3610000, 'drive.nmea'),
            (5, 'cafe', 7200000, 7200000, 0, NULL, NULL, 'stamp')
          """)
        try connection.execute(
          """
          INSERT INTO event (class, time, place_id, latitude, longitude, arrival, reason) VALUES
            ('ARRIVAL', 1000, 'cafe', 52.52, 13.405, NULL, '{"rule":"inside"}'),
            ('DEPARTURE', 601000, 'cafe', 52.52, 13.41, 1000, '{"rule":"outside"}'),
            ('ARRIVAL', 3600000, 'office', NULL, NULL, NULL, '{}')
          """)
        // time(3610), as version 3's monitor_state (one row per place) held it.
        try connection.execute(
          """
          INSERT INTO monitor_state (place_id, snapshot, last_fix_time)
            VALUES ('office', 'inside', 1795957210000)
          """)
      }
    }
    let database = try Database(path: path)
    #expect(database.schemaVersion == Schema.migrations.last?.version)
    #expect(try database.integrityCheck() == ["ok"])
    let migrated = try visits(database)
    #expect(migrated.map(\.id) == [1, 2, 5])
    #expect(migrated.map(\.visit.placeID) == ["cafe", "office", "cafe"])
    #expect(migrated[0].visit.fixCount == 61)
    #expect(migrated[0].visit.bestAccuracyMeters == 3.5)
    #expect(migrated[0].visit.departureDate == Timestamp.date(milliseconds: 601_000))
    #expect(migrated[1].visit.isOpen)
    #expect(migrated[2].visit.source == "stamp")
    // The snapshots are the place rows' fields, every one of them.
    #expect(migrated[0].place == PlaceSnapshot(Self.describedCafe))
    #expect(migrated[2].place == PlaceSnapshot(Self.describedCafe))
    #expect(migrated[1].place == PlaceSnapshot(office))
    #expect(migrated[1].place.category == nil)
    #expect(migrated.allSatisfy { $0.placeRemoved == nil })
    let migratedEvents = try events(database)
    #expect(migratedEvents.map(\.className) == ["ARRIVAL", "DEPARTURE", "ARRIVAL"])
    #expect(migratedEvents[1].arrival == Timestamp.date(milliseconds: 1000))
    #expect(migratedEvents[1].reasonJSON == #"{"rule":"outside"}"#)
    #expect(migratedEvents.allSatisfy { $0.placeRemoved == nil })
    #expect(try database.read { try MonitorStateRepository($0).all() }.keys.sorted() == ["office"])
    // The recorder's view is unchanged: the office visit is open, the same arrival is found.
    let recorder = try VisitRecorder(database: database)
    #expect(recorder.openVisits == ["office": Timestamp.date(milliseconds: 3_600_000)])
    #expect(
      try database.read {
        try VisitRepository($0).entry(placeID: "cafe", arrival: Timestamp.date(milliseconds: 1000))
      }?.id == 1)
    // Visits and events no longer reference place; monitor state still does.
    let references = try database.read { connection in
      var tables: [String] = []
      for table in ["visit", "event", "monitor_state"] {
        try connection.query(
          "SELECT ?, count(*) FROM pragma_foreign_key_list(?)",
          [
            .text(table), .text(table),
          ]
        ) { if $0.int(1) > 0 { tables.append($0.text(0)) } }
      }
      return tables
    }
    #expect(references == ["monitor_state"])
  }

  @Test("a version-3 store with a visit whose place is gone is refused, not silently trimmed")
  func migrationRefusesOrphans() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("orphan.db")
    do {
      let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(3)))
      try old.write { try insertPlacesBeforeGroups($0, [cafe]) }
    }
    do {
      // Only a connection without foreign keys can leave such a row.
      let raw = try Connection(path: path, create: false)
      try raw.executeScript(
        """
        PRAGMA foreign_keys = OFF;
        INSERT INTO visit (place_id, arrival) VALUES ('cafe', 1000), ('gone', 2000);
        """)
    }
    #expect(throws: StoreError.self) { try Database(path: path) }
    let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(3)))
    #expect(old.schemaVersion == 3)
    #expect(
      try old.read { connection in
        try connection.queryFirst("SELECT count(*) FROM visit") { $0.int(0) }
      } == 2)
  }

  @Test("a visit keeps its place as it was at arrival; later changes do not rewrite it")
  func snapshotAtArrival() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory, [Self.describedCafe])
    let recorder = try VisitRecorder(database: database)
    try recorder.record(arrival(cafe, at: 0))
    var renamed = Self.describedCafe
    renamed.name = "Blue Bottle Mitte"
    renamed.coordinate = cafe.coordinate.offset(by: 30, bearingDegrees: 0)
    renamed.town = nil
    try database.write { _ = try PlaceRepository($0).upsert([renamed]) }
    try recorder.record(departure(cafe, at: 600, arrived: 0))
    try recorder.record(arrival(cafe, at: 3600))
    let recorded = try visits(database)
    #expect(recorded.map(\.place.name) == ["Blue Bottle", "Blue Bottle Mitte"])
    #expect(recorded[0].place == PlaceSnapshot(Self.describedCafe))
    #expect(recorded[1].place == PlaceSnapshot(renamed))
    #expect(recorded[1].place.town == nil)
    #expect(recorded[0].visit.departureDate == time(600))
  }

  @Test("removing a place keeps its visits and events, marked; closes its open visit")
  func removalKeepsHistory() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory, [Self.describedCafe, office])
    let recorder = try VisitRecorder(database: database, source: "day")
    try VisitRecorderTests().play(VisitRecorderTests.day, into: recorder)
    try recorder.saveSnapshots(["cafe": "outside", "office": "inside"])
    let removedAt = time(86_400)

    let cafeRemoval = try database.write {
      try PlaceRepository($0).remove(id: "cafe", at: removedAt)
    }
    #expect(cafeRemoval == .init(visits: 1, events: 2, closedOpenVisit: false))
    // The office visit is open (last fix counted at 3610 s): removal closes it there.
    let officeRemoval = try database.write {
      try PlaceRepository($0).remove(id: "office", at: removedAt)
    }
    #expect(officeRemoval == .init(visits: 1, events: 1, closedOpenVisit: true))
    #expect(try database.write { try PlaceRepository($0).remove(id: "office") } == nil)

    #expect(try database.read { try PlaceRepository($0).count() } == 0)
    #expect(try database.read { try MonitorStateRepository($0).all() }.isEmpty)
    let kept = try visits(database)
    #expect(kept.map(\.visit.placeID) == ["cafe", "office"])
    #expect(kept.allSatisfy { $0.placeRemoved == removedAt })
    #expect(kept[0].place == PlaceSnapshot(Self.describedCafe))
    #expect(kept[0].visit.fixCount == 61)
    #expect(kept[1].visit.departureDate == time(3610))
    #expect(kept[1].place.name == "Office")
    let keptEvents = try events(database)
    #expect(keptEvents.count == 3)
    #expect(keptEvents.allSatisfy { $0.placeRemoved == removedAt })
    #expect(try visits(database, placeID: "cafe").count == 1)
    // Nothing is open any more, and a recorder finds nothing to resume.
    #expect(try VisitRecorder(database: database).openVisits.isEmpty)
    // A monitor that still had the place cannot save state for it (no foreign key error).
    try recorder.saveSnapshots(["cafe": "inside"])
    #expect(try database.read { try MonitorStateRepository($0).all() }.isEmpty)
    // Fixes counted by a recorder that still tracks the visit do not change the history.
    recorder.observe(fix(at: 3620, office.coordinate, accuracy: 1))
    try recorder.flush()
    #expect(try visits(database)[1].visit.fixCount == 2)
    #expect(try database.integrityCheck() == ["ok"])
  }

  @Test("a place added again with a removed one's id has a history of its own")
  func reAddedPlaceStartsAfresh() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory, [Self.describedCafe, office])
    let player = VisitRecorderTests()
    try player.play(VisitRecorderTests.day, into: try VisitRecorder(database: database))
    try database.write { _ = try PlaceRepository($0).remove(id: "cafe", at: time(7200)) }

    var successor = cafe
    successor.name = "Café Nero"
    try database.write { try PlaceRepository($0).insert(successor) }
    let fresh = try #require(try database.read { try PlaceRepository($0).place(id: "cafe") })
    #expect(fresh.visitCount == 0)
    #expect(!fresh.visited)
    // The same day replayed: the new cafe records its own visit at the very same times, where
    // the removed cafe's rows would otherwise have made it a duplicate.
    let recorder = try VisitRecorder(database: database)
    try player.play(
      VisitRecorderTests.day.prefix(while: { step in
        if case .event(let event) = step { return event.placeID != "office" }
        return true
      }), into: recorder)
    let history = try visits(database, placeID: "cafe")
    #expect(history.count == 2)
    #expect(history.map(\.visit.arrivalDate) == [time(0), time(0)])
    #expect(history.map(\.place.name) == ["Blue Bottle", "Café Nero"])
    #expect(history.map(\.placeRemoved) == [time(7200), nil])
    #expect(history.allSatisfy { $0.visit.departureDate == time(600) })
    #expect(try database.read { try PlaceRepository($0).place(id: "cafe") }?.visitCount == 1)
    let cafeEvents = try database.read { try EventRepository($0).all(placeID: "cafe") }
    #expect(cafeEvents.map(\.placeRemoved) == [time(7200), nil, time(7200), nil])
    // The recorder's look-ups see the new place's visit only.
    #expect(
      try database.read { try VisitRepository($0).entry(placeID: "cafe", arrival: time(0)) }?.id
        == history[1].id)
    #expect(try database.read { try VisitRepository($0).all(removedOnly: true) }.count == 1)
  }

  @Test("deleting history: by place, removed places only, before a time; open visits stay")
  func deleteHistory() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory, [cafe, office])
    let player = VisitRecorderTests()
    try player.play(VisitRecorderTests.day, into: try VisitRecorder(database: database))
    try database.write { _ = try PlaceRepository($0).remove(id: "cafe", at: time(7200)) }
    try database.write { try PlaceRepository($0).insert(cafe) }
    let recorder = try VisitRecorder(database: database)
    for (arrived, left) in [(10_000.0, 10_600.0), (20_000.0, 20_600.0)] {
      try recorder.record(arrival(cafe, at: arrived))
      try recorder.record(departure(cafe, at: left, arrived: arrived))
    }
    #expect(try visits(database, placeID: "cafe").count == 3)

    // The removed cafe's history only.
    let removedOnly = try database.write {
      try VisitRepository($0).delete(placeID: "cafe", removedOnly: true)
    }
    #expect(removedOnly == .init(visits: 1, events: 2, openVisitsKept: 0))
    #expect(try visits(database, placeID: "cafe").map(\.placeRemoved) == [nil, nil])
    #expect(try database.read { try PlaceRepository($0).place(id: "cafe") }?.visitCount == 2)

    // The current cafe's visits arriving before 15,000 s: one, with both its events.
    let older = try database.write {
      try VisitRepository($0).delete(placeID: "cafe", arrivingBefore: time(15_000))
    }
    #expect(older == .init(visits: 1, events: 2, openVisitsKept: 0))
    #expect(try visits(database, placeID: "cafe").map(\.visit.arrivalDate) == [time(20_000)])
    let counted = try #require(try database.read { try PlaceRepository($0).place(id: "cafe") })
    #expect(counted.visitCount == 1)
    #expect(counted.visited)

    // Everything of the office: its visit is open, so it and its arrival event stay.
    let officeDeletion = try database.write { try VisitRepository($0).delete(placeID: "office") }
    #expect(officeDeletion == .init(visits: 0, events: 0, openVisitsKept: 1))
    #expect(try visits(database, placeID: "office").count == 1)

    // All of the cafe: the visit count goes to zero and the visited flag with it.
    let rest = try database.write { try VisitRepository($0).delete(placeID: "cafe") }
    #expect(rest == .init(visits: 1, events: 2, openVisitsKept: 0))
    let cleared = try #require(try database.read { try PlaceRepository($0).place(id: "cafe") })
    #expect(cleared.visitCount == 0)
    #expect(!cleared.visited)
    #expect(try events(database).map(\.placeID) == ["office"])
  }
}
