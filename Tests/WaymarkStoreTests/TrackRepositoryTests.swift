import Foundation
import Testing
import WaymarkCore

@testable import WaymarkStore

@Suite("Track repository")
struct TrackRepositoryTests {
  static let start = Timestamp.date(milliseconds: 1_795_939_200_000)

  static func point(_ seconds: Double, segment: Int = 1, altitude: Double? = 34.5) -> TrackPoint {
    TrackPoint(
      timestamp: start.addingTimeInterval(seconds),
      coordinate: Coordinate(latitude: 52.52 + seconds * 1e-5, longitude: 13.405),
      altitude: altitude, speed: altitude == nil ? nil : 4.25, course: altitude == nil ? nil : 90,
      horizontalAccuracy: altitude == nil ? nil : 6, segment: segment)
  }

  @Test("a version-4 store migrates to 5 with an empty track, keeping its places")
  func migratesVersion4() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("v4.db")
    do {
      let old = try Database(path: path, migrations: Array(Schema.migrations.prefix(4)))
      #expect(old.schemaVersion == 4)
      try old.write { try insertPlacesBeforeGroups($0, [cafe]) }
      #expect(throws: StoreError.self) { try old.read { try TrackRepository($0).count() } }
    }
    let database = try Database(path: path)
    #expect(database.schemaVersion == Schema.migrations.last?.version)
    #expect(try database.integrityCheck() == ["ok"])
    #expect(try database.read { try PlaceRepository($0).all().map(\.id) } == [cafe.id])
    #expect(try database.read { try TrackRepository($0).count() } == 0)
  }

  @Test("points come back in time order with their values, unknown ones as nil")
  func roundTrip() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("t.db"))
    let points = [Self.point(2, segment: 2, altitude: nil), Self.point(0), Self.point(1)]
    #expect(try database.write { try TrackRepository($0).insert(points) } == 3)
    let stored = try database.read { try TrackRepository($0).all() }
    #expect(stored == [points[1], points[2], points[0]])
    #expect(stored[2].altitude == nil && stored[2].speed == nil && stored[2].course == nil)
    #expect(stored[2].horizontalAccuracy == nil)
    #expect(try database.read { try TrackRepository($0).last() } == points[0])
  }

  @Test("a point whose time is stored is skipped: recording a track again adds nothing")
  func uniqueOnTime() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("t.db"))
    let points = (0..<10).map { Self.point(Double($0)) }
    #expect(try database.write { try TrackRepository($0).insert(points) } == 10)
    #expect(try database.write { try TrackRepository($0).insert(points) } == 0)
    var moved = Self.point(3, segment: 7)
    moved.coordinate.latitude = 10
    let more = [moved, Self.point(10)]
    #expect(try database.write { try TrackRepository($0).insert(more) } == 1)
    let stored = try database.read { try TrackRepository($0).all() }
    #expect(stored.count == 11)
    #expect(stored[3] == points[3])  // the first recording is kept
  }

  @Test("a batch with a bad point is rolled back whole")
  func batchIsOneTransaction() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("t.db"))
    var bad = Self.point(5)
    bad.coordinate.latitude = 91
    #expect(throws: StoreError.self) {
      try database.write { try TrackRepository($0).insert([Self.point(0), Self.point(1), bad]) }
    }
    #expect(try database.read { try TrackRepository($0).count() } == 0)
  }

  @Test("ranges are since-inclusive, until-exclusive; retention deletes before a cut-off")
  func rangesAndRetention() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("t.db"))
    try database.write {
      _ = try TrackRepository($0).insert((0..<10).map { Self.point(Double($0)) })
    }
    let since = Self.start.addingTimeInterval(3)
    let until = Self.start.addingTimeInterval(7)
    let range = try database.read { try TrackRepository($0).all(since: since, until: until) }
    #expect(range.map { $0.timestamp.timeIntervalSince(Self.start) } == [3, 4, 5, 6])
    #expect(try database.read { try TrackRepository($0).count(since: since) } == 7)
    #expect(try database.write { try TrackRepository($0).delete(before: since) } == 3)
    #expect(try database.read { try TrackRepository($0).all().first } == Self.point(3))
  }
}
