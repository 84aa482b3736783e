import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// `waymark replay --places/--store` through the real binary and real SQLite files.
@Suite struct ReplayPlacesTests {
  /// A synthetic tour: `count` places on a ring, a stop of 90 s at each, 12 m/s between them.
  static func tour(count: Int, seed: UInt64 = 5) -> (log: String, places: [Place], fixes: [Fix]) {
    let center = Coordinate(latitude: 59.33, longitude: 18.06)
    var places: [Place] = []
    for index in 0..<count {
      let coordinate = center.offset(by: 2_000, bearingDegrees: Double(index) * 360 / Double(count))
      places.append(
        Place(id: "stop-\(index)", name: "Stop \(index)", coordinate: coordinate, radiusMeters: 40))
    }
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T23:48:20.000Z")!, origin: center, seed: seed)
    route.noiseMeters = 3
    for place in places {
      route.drive(to: place.coordinate, speedMetersPerSecond: 12)
      route.stop(seconds: 90)
    }
    route.drive(to: center, speedMetersPerSecond: 12)
    let fixes = route.fixes()
    return (NMEAWriter.log(fixes), places, fixes)
  }

  struct Files {
    let directory: URL
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
  }

  static func files(_ tour: (log: String, places: [Place], fixes: [Fix])) throws -> Files {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-replay-places-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    try Data(tour.log.utf8).write(to: directory.appendingPathComponent("tour.nmea"))
    try Data(PlaceCollection.encode(tour.places)).write(
      to: directory.appendingPathComponent("places.geojson"))
    return Files(directory: directory)
  }

  /// Visit rows as "place arrival departure fixCount", sorted.
  static func visits(_ store: String) throws -> [String] {
    let database = try Database(path: store, createIfMissing: false)
    return try database.read { connection in
      var rows: [String] = []
      try connection.query(
        "SELECT place_id, arrival, departure FROM visit ORDER BY place_id, arrival"
      ) {
        rows.append("\($0.text(0)) \($0.int64(1)) \($0.isNull(2) ? "open" : String($0.int64(2)))")
      }
      return rows
    }
  }

  @Test func eventsAreByteIdenticalAndVisitsIdenticalAcrossRuns() throws {
    let tour = Self.tour(count: 6)
    let files = try Self.files(tour)
    defer { try? FileManager.default.removeItem(at: files.directory) }
    let first = try CommandRun.waymark(
      [
        "replay", files.path("tour.nmea"), "--places", files.path("places.geojson"), "--store",
        files.path("a.db"),
      ])
    let second = try CommandRun.waymark(
      [
        "replay", files.path("tour.nmea"), "--places", files.path("places.geojson"), "--store",
        files.path("b.db"),
      ])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout == second.stdout)
    let lines = first.output.split(separator: "\n")
    #expect(lines.filter { $0.hasPrefix(#"{"class":"ARRIVAL""#) }.count == 6)
    #expect(lines.filter { $0.hasPrefix(#"{"class":"DEPARTURE""#) }.count == 6)
    let visitsA = try Self.visits(files.path("a.db"))
    #expect(visitsA.count == 6)
    #expect(visitsA == (try Self.visits(files.path("b.db"))))
    // The tour crosses UTC midnight during the third stop: that visit starts on 29 November and
    // ends on 30 November.
    let text = try CommandRun.waymark(["visits", "--store", files.path("a.db")]).output
    let acrossMidnight = text.split(separator: "\n").filter {
      $0.contains(#""arrival":"2026-11-29T23:"#) && $0.contains(#""departure":"2026-11-30T00:"#)
    }
    #expect(acrossMidnight.count == 1, "\(text)")
  }

  @Test func storeOnlyReplayUsesTheStoredPlacesAndRecordsNothingTwice() throws {
    let tour = Self.tour(count: 4)
    let files = try Self.files(tour)
    defer { try? FileManager.default.removeItem(at: files.directory) }
    let store = files.path("s.db")
    let first = try CommandRun.waymark(
      [
        "replay", files.path("tour.nmea"), "--places", files.path("places.geojson"), "--store",
        store,
      ])
    let again = try CommandRun.waymark(["replay", files.path("tour.nmea"), "--store", store])
    #expect(first.status == 0 && again.status == 0)
    #expect(first.stdout == again.stdout)
    #expect(again.stderr.contains("store: 0 new transitions"))
    #expect(try Self.visits(store).count == 4)
  }

  @Test func aRestartInTheMiddleOfAVisitResumesIt() throws {
    let tour = Self.tour(count: 4)
    let files = try Self.files(tour)
    defer { try? FileManager.default.removeItem(at: files.directory) }
    // Reference: the whole log at once.
    let whole = try CommandRun.waymark(
      [
        "replay", files.path("tour.nmea"), "--places", files.path("places.geojson"), "--store",
        files.path("whole.db"),
      ])
    #expect(whole.status == 0)
    let reference = try Self.visits(files.path("whole.db"))
    // Split the log in the middle of the second stop: the device is inside stop-1 then.
    let inside = tour.fixes.firstIndex {
      $0.coordinate!.distance(to: tour.places[1].coordinate) < 10 && $0.speed == 0
    }!
    let split = inside + 30
    try Data(NMEAWriter.log(Array(tour.fixes[..<split])).utf8).write(
      to: URL(fileURLWithPath: files.path("part1.nmea")))
    try Data(NMEAWriter.log(Array(tour.fixes[split...])).utf8).write(
      to: URL(fileURLWithPath: files.path("part2.nmea")))
    let store = files.path("split.db")
    let part1 = try CommandRun.waymark(
      [
        "replay", files.path("part1.nmea"), "--places", files.path("places.geojson"), "--store",
        store,
      ])
    #expect(part1.status == 0)
    #expect(try Self.visits(store).contains { $0.hasPrefix("stop-1 ") && $0.hasSuffix(" open") })
    let part2 = try CommandRun.waymark(["replay", files.path("part2.nmea"), "--store", store])
    #expect(part2.status == 0)
    #expect(part2.stderr.contains("resumed from the saved state"))
    #expect(try Self.visits(store) == reference)
  }

  @Test func killDuringReplayStoreThenReplayAgainLosesAndDuplicatesNothing() throws {
    let tour = Self.tour(count: 60)
    let files = try Self.files(tour)
    defer { try? FileManager.default.removeItem(at: files.directory) }
    let arguments = [
      "replay", files.path("tour.nmea"), "--places", files.path("places.geojson"), "--store",
    ]
    let reference = try CommandRun.waymark(arguments + [files.path("reference.db")])
    #expect(reference.status == 0)
    let expected = try Self.visits(files.path("reference.db"))
    #expect(expected.count == 60)

    let store = files.path("killed.db")
    var killed = 0
    for round in 1...2 {
      let process = Process()
      process.executableURL = URL(fileURLWithPath: Products.executable("waymark"))
      process.arguments = arguments + [store]
      process.standardOutput = FileHandle.nullDevice
      process.standardError = FileHandle.nullDevice
      try process.run()
      let deadline = Date().addingTimeInterval(60)
      while process.isRunning && Date() < deadline {
        if FileManager.default.fileExists(atPath: store),
          let rows = try? Self.visits(store), rows.count >= 20 * round
        {
          break
        }
        usleep(1000)  // polling a real child process: no clock to inject
      }
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        killed += 1
      }
      process.waitUntilExit()
      let database = try Database(path: store, createIfMissing: false)
      #expect(try database.integrityCheck() == ["ok"])
      let rows = try Self.visits(store)
      #expect(Set(rows).count == rows.count, "duplicate visits")
      let closed = rows.filter { !$0.hasSuffix(" open") }
      #expect(Set(closed).isSubset(of: Set(expected)), "a closed visit the log does not contain")
    }
    #expect(killed > 0, "replay always finished before it could be killed")
    let final = try CommandRun.waymark(arguments + [store])
    #expect(final.status == 0)
    #expect(try Self.visits(store) == expected)
  }

  @Test func badPlacesFileIsRejectedWithFeatureIndex() throws {
    let files = try Self.files(Self.tour(count: 1))
    defer { try? FileManager.default.removeItem(at: files.directory) }
    let bad = files.path("bad.geojson")
    try Data(
      #"{"type":"FeatureCollection","features":[{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}]}"#
        .utf8
    ).write(to: URL(fileURLWithPath: bad))
    let run = try CommandRun.waymark(["replay", files.path("tour.nmea"), "--places", bad])
    #expect(run.status == 65)
    #expect(run.stderr.contains("feature 0"))
    #expect(run.stdout.isEmpty)
  }
}
