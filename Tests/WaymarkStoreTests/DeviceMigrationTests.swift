import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

@testable import WaymarkStore

/// Schema 13 keeps devices apart: a store written by version 12 keeps every row, under the
/// `local` device, and two devices' histories no longer act on each other.
@Suite("Device migration")
struct DeviceMigrationTests {
  private let depot = Place(
    id: "depot", name: "Depot", coordinate: Coordinate(latitude: 52.5, longitude: 13.4),
    radiusMeters: 100)

  /// A version-12 store with one row in each table that carries a device's state, written
  /// with the SQL of version 12 (the repositories speak version 13).
  private func version12Store(_ path: String) throws {
    /// `time(seconds)` in the store's milliseconds.
    func ms(_ seconds: Int64) -> Int64 { 1_795_953_600_000 + seconds * 1000 }
    let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(12)))
    #expect(old.schemaVersion == 12)
    try old.write { connection in
      try connection.executeScript(
        """
        INSERT INTO place (id, name, latitude, longitude, radius)
          VALUES ('depot', 'Depot', 52.5, 13.4, 100);
        INSERT INTO visit (place_id, arrival, departure, fix_count, best_accuracy, last_fix,
          source, name, latitude, longitude)
          VALUES ('depot', \(ms(1)), \(ms(5)), 4, 3.5, \(ms(5)), 'a.nmea', 'Depot', 52.5, 13.4),
                 ('depot', \(ms(9)), NULL, 2, 4.0, \(ms(9) + 500), 'a.nmea', 'Depot', 52.5, 13.4);
        INSERT INTO event (class, time, place_id, latitude, longitude, arrival, reason)
          VALUES ('ARRIVAL', \(ms(9)), 'depot', 52.5, 13.4, NULL, '{}');
        INSERT INTO monitor_state (place_id, snapshot, last_fix_time)
          VALUES ('depot', 'inside', \(ms(9) + 500));
        INSERT INTO last_fix (id, time, latitude, longitude, accuracy, source)
          VALUES (1, \(ms(9) + 500), 52.5, 13.4, 4.0, 'a.nmea');
        INSERT INTO track_point (time, segment, latitude, longitude)
          VALUES (\(ms(1)), 1, 52.5, 13.4), (\(ms(2)), 1, 52.5001, 13.4), (\(ms(9)), 2, 52.5, 13.4);
        INSERT INTO stay (arrival, departure, latitude, longitude, accuracy, fix_count, last_fix,
          place_id, source, observed_departure)
          VALUES (\(ms(1)), \(ms(5)), 52.5, 13.4, 2.0, 4, \(ms(5)), 'depot', 'a.nmea', \(ms(4))),
                 (\(ms(9)), NULL, 52.5, 13.4, 2.5, 2, \(ms(9) + 500), NULL, 'a.nmea', NULL);
        """)
    }
  }

  @Test("a version-12 store keeps every row, each the local device's")
  func upgradesVersion12() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("v12.db")
    try version12Store(path)
    let upgraded = try Database(path: path)
    #expect(upgraded.schemaVersion == 13)
    #expect(try upgraded.integrityCheck() == ["ok"])
    try upgraded.read { (connection) throws -> Void in
      let visits = try VisitRepository(connection).all()
      #expect(visits.map(\.visit.arrivalDate) == [time(1), time(9)])
      #expect(visits.map(\.device) == ["local", "local"])
      #expect(visits.first?.visit.fixCount == 4)
      #expect(try VisitRepository(connection).openEntries()["depot"]?.fixCount == 2)
      // Another device has none of local's state.
      #expect(try VisitRepository(connection, device: "van-1").openEntries().isEmpty)
      #expect(try EventRepository(connection).all().count == 1)
      let state = MonitorStateRepository(connection)
      #expect(try state.all()["depot"]?.snapshot == "inside")
      #expect(try state.lastFix()?.source == "a.nmea")
      #expect(try MonitorStateRepository(connection, device: "van-1").all().isEmpty)
      #expect(try MonitorStateRepository(connection, device: "van-1").lastFix() == nil)
      let track = TrackRepository(connection)
      #expect(try track.all().map(\.segment) == [1, 1, 2])
      #expect(try track.last()?.timestamp == time(9))
      #expect(try TrackRepository(connection, device: "van-1").count() == 0)
      let stays = StayRepository(connection)
      #expect(try stays.all().map(\.observedDepartureDate) == [time(4), nil])
      #expect(try stays.open()?.stay.arrivalDate == time(9))
      #expect(try StayRepository(connection, device: "van-1").open() == nil)
      let rows = try connection.queryFirst(
        """
        SELECT (SELECT count(*) FROM visit WHERE device = 'local')
          + (SELECT count(*) FROM event WHERE device = 'local')
          + (SELECT count(*) FROM monitor_state WHERE device = 'local')
          + (SELECT count(*) FROM last_fix WHERE device = 'local')
          + (SELECT count(*) FROM track_point)
          + (SELECT count(*) FROM stay WHERE device = 'local')
        """
      ) { $0.int(0) }
      #expect(rows == 2 + 1 + 1 + 1 + 3 + 2)
    }
  }

  @Test("two devices' visits, stays, tracks and last fixes do not act on each other")
  func devicesApart() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("v12.db")
    try version12Store(path)
    let database = try Database(path: path)
    // van-1 arrives at the depot while local's visit there is open.
    let van = try VisitRecorder(database: database, source: "van-1.nmea", device: "van-1")
    #expect(van.openVisits.isEmpty)
    try van.record(arrival(depot, at: 12))
    try database.write { (connection) throws -> Void in
      let point = TrackPoint(
        timestamp: time(2), coordinate: Coordinate(latitude: 52.6, longitude: 13.5), segment: 1)
      // The same millisecond as one of local's points: van-1's own point.
      #expect(try TrackRepository(connection, device: "van-1").insert([point]) == 1)
      #expect(try TrackRepository(connection).insert([point]) == 0)
      let stay = Stay(
        arrivalDate: time(9), coordinate: Coordinate(latitude: 52.6, longitude: 13.5),
        horizontalAccuracy: 3, fixCount: 1, source: "van-1.nmea")
      #expect(try StayRepository(connection, device: "van-1").record(stay, lastFix: time(10)))
    }
    try database.read { (connection) throws -> Void in
      let local = try VisitRepository(connection).openEntries()
      #expect(local["depot"]?.arrival == time(9))  // not closed by van-1's arrival
      let vans = try VisitRepository(connection, device: "van-1").openEntries()
      #expect(vans["depot"]?.arrival == time(12))
      #expect(try VisitRepository(connection).all().map(\.device) == ["local", "local", "van-1"])
      #expect(try TrackRepository(connection).count() == 3)
      #expect(try TrackRepository(connection, device: "van-1").count() == 1)
      #expect(try StayRepository(connection).open()?.stay.coordinate.latitude == 52.5)
      #expect(try StayRepository(connection, device: "van-1").open()?.stay.arrivalDate == time(9))
      #expect(try StayRepository(connection).all().count == 3)
    }
    // Local's recorder still resumes its own open visit, and closes it.
    let local = try VisitRecorder(database: database, source: "b.nmea")
    #expect(local.openVisits == ["depot": time(9)])
    try local.record(departure(depot, at: 20, arrived: 9))
    try database.read { (connection) throws -> Void in
      #expect(try VisitRepository(connection).openEntries().isEmpty)
      #expect(try VisitRepository(connection, device: "van-1").openEntries().count == 1)
    }
    #expect(try database.integrityCheck() == ["ok"])
  }

  @Test("device names: letters, digits, '.', '_' and '-', 1 to 64, starting alphanumeric")
  func names() {
    for good in ["local", "van-3", "Truck_07.b", "7", String(repeating: "a", count: 64)] {
      #expect(StoreDevice.problem(good) == nil, "\(good)")
    }
    for bad in ["", "-van", ".hidden", "van 3", "vän", "a/b", String(repeating: "a", count: 65)] {
      #expect(StoreDevice.problem(bad) != nil, "\(bad)")
    }
  }
}
