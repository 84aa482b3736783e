import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark places suggest` end to end: stays recorded by `replay --store --visits`, the
/// suggestion imported by `places import`, the stays re-labelled.
@Suite struct PlacesSuggestTests {
  static let depot = Coordinate(latitude: 51.05, longitude: 3.72)

  @Test func aRecurringStayBecomesAPlaceThatImportRelabels() throws {
    // Four stays of 4 minutes at the depot, an errand 2 km away between them.
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-30T06:00:00.000Z")!, origin: Self.depot, seed: 41)
    route.noiseMeters = 3
    let errand = Self.depot.offset(by: 2_000, bearingDegrees: 200)
    for round in 0..<4 {
      route.stop(seconds: 240)
      let away = Self.depot.offset(by: 1_200, bearingDegrees: Double(round) * 90)
      route.drive(to: round == 1 ? errand : away, speedMetersPerSecond: 12)
      if round == 1 { route.stop(seconds: 300) }
      route.drive(to: Self.depot, speedMetersPerSecond: 12)
    }
    route.drive(to: errand, speedMetersPerSecond: 12)
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-suggest-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    func path(_ name: String) -> String { directory.appendingPathComponent(name).path }
    try Data(NMEAWriter.log(route.fixes()).utf8).write(to: URL(fileURLWithPath: path("log")))

    let replay = try CommandRun.waymark(
      ["replay", path("log"), "--visits", "--store", path("db")])
    #expect(replay.status == 0, "\(replay.stderr)")
    #expect(replay.stderr.contains("store: 5 new stay(s)"))
    // Replaying again records nothing twice.
    let again = try CommandRun.waymark(["replay", path("log"), "--visits", "--store", path("db")])
    #expect(again.stdout == replay.stdout)
    #expect(again.stderr.contains("store: 0 new stay(s)"))

    let suggest = try CommandRun.waymark(["places", "suggest", "--store", path("db")])
    #expect(suggest.status == 0, "\(suggest.stderr)")
    let places = try PlaceCollection.decode(suggest.stdout)
    try #require(places.count == 1, "\(suggest.output)")
    #expect(places[0].coordinate.distance(to: Self.depot) <= 10)
    #expect(places[0].detail?.hasPrefix("4 stays") == true)
    // Control: asking for five visits proposes nothing.
    let five = try CommandRun.waymark(
      ["places", "suggest", "--store", path("db"), "--min-visits", "5"])
    #expect(try PlaceCollection.decode(five.stdout).isEmpty)

    try suggest.stdout.write(to: URL(fileURLWithPath: path("suggested.geojson")))
    let imported = try CommandRun.waymark(
      ["places", "import", path("suggested.geojson"), "--store", path("db")])
    #expect(imported.status == 0, "\(imported.stderr)")
    // The depot's stays are now the place's; the errand is still a stay at no place.
    let visits = try CommandRun.waymark(["visits", "--store", path("db")])
    let lines = visits.output.split(separator: "\n")
    #expect(lines.count == 1, "\(visits.output)")
    #expect(lines.first?.contains(#""place":null"#) == true)
    let after = try CommandRun.waymark(["places", "suggest", "--store", path("db")])
    #expect(try PlaceCollection.decode(after.stdout).isEmpty)
  }
}
