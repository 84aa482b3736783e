import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark replay --visits` through the real binary: stays found without places, named when
/// they lie in a declared place, byte-identical across runs.
@Suite struct ReplayVisitsTests {
  static let start = Timestamp.parse("2026-11-30T08:00:00.000Z")!
  static let home = Coordinate(latitude: 52.52, longitude: 13.405)

  /// Home (declared) for 5 min, a red light of 60 s, a depot (not declared) for 6 min, a café
  /// (declared) until the log ends.
  static func day() -> (log: String, places: [Place]) {
    let depot = home.offset(by: 3_000, bearingDegrees: 70)
    let light = home.offset(by: 1_500, bearingDegrees: 70)
    let cafe = depot.offset(by: 2_000, bearingDegrees: 160)
    var route = RouteSynthesizer(start: start, origin: home, seed: 21)
    route.noiseMeters = 3
    route.stop(seconds: 300)
    route.drive(to: light, speedMetersPerSecond: 12)
    route.stop(seconds: 60)
    route.drive(to: depot, speedMetersPerSecond: 12)
    route.stop(seconds: 360)
    route.drive(to: cafe, speedMetersPerSecond: 12)
    route.stop(seconds: 400)
    let places = [
      Place(id: "home", name: "Home", coordinate: home, radiusMeters: 60, town: "Berlin"),
      Place(id: "cafe", name: "Café", coordinate: cafe, radiusMeters: 50),
    ]
    return (NMEAWriter.log(route.fixes()), places)
  }

  @Test func staysArePrintedOnceEachNamedWhereAPlaceIsDeclared() throws {
    let day = Self.day()
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-replay-visits-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let log = directory.appendingPathComponent("day.nmea").path
    let places = directory.appendingPathComponent("places.geojson").path
    try Data(day.log.utf8).write(to: URL(fileURLWithPath: log))
    try Data(PlaceCollection.encode(day.places)).write(to: URL(fileURLWithPath: places))

    let first = try CommandRun.waymark(["replay", log, "--visits", "--places", places])
    let second = try CommandRun.waymark(["replay", log, "--visits", "--places", places])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(first.stdout == second.stdout)
    let visits = first.output.split(separator: "\n").filter { $0.hasPrefix(#"{"class":"VISIT""#) }
    try #require(visits.count == 3, "\(first.output)")
    #expect(visits[0].contains(#""place":"home","name":"Home","arrival":"2026-11-30T08:00:00"#))
    #expect(visits[0].contains(#""town":"Berlin""#))
    #expect(visits[1].contains(#""place":null,"name":null"#))
    #expect(visits[1].contains(#""duration":35"#) || visits[1].contains(#""duration":36"#))
    #expect(visits[2].contains(#""place":"cafe""#))
    #expect(visits[2].contains(#""departure":null,"duration":null"#))
    #expect(first.stderr.contains("visits: 3"))

    // Without places (the decoder's fast path) the same stays, none named.
    let bare = try CommandRun.waymark(["replay", log, "--visits"])
    let bareVisits = bare.output.split(separator: "\n")
    #expect(bareVisits.count == 3)
    #expect(bareVisits.allSatisfy { $0.contains(#""place":null"#) })
    #expect(
      bareVisits.map { $0.split(separator: ",")[3] } == visits.map { $0.split(separator: ",")[3] })

    // A minimum duration below the red light's makes it a stay too.
    let short = try CommandRun.waymark(["replay", log, "--visits", "--visit-min-duration", "45"])
    #expect(short.output.split(separator: "\n").count == 4)
  }

  @Test func theMinimumDurationNeedsVisits() throws {
    let run = try CommandRun.waymark(["replay", "-", "--visit-min-duration", "60"])
    #expect(run.status == 64)
    #expect(run.stderr.contains("'--visit-min-duration' needs '--visits'"))
    let good = try CommandRun.waymark(["replay", "-", "--visits"], input: Data())
    #expect(good.status == 0, "\(good.stderr)")
  }
}
