import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark visits --towns`: the stays at no declared place named after the town they are in,
/// from the gazetteer built in, in every format; a place's visit keeps its own town.
@Suite struct VisitsTownsTests {
  /// A stay at `origin`, then a drive to `destination` and a stay there.
  static func drive(from origin: Coordinate, to destination: Coordinate) -> [Fix] {
    var route = RouteSynthesizer(
      start: Timestamp.parse("2025-06-01T09:00:00.000Z")!, origin: origin, seed: 11)
    route.noiseMeters = 3
    route.stop(seconds: 600)
    route.drive(to: destination, speedMetersPerSecond: 30)
    route.stop(seconds: 600)
    return route.fixes()
  }

  /// `waymark replay <drive> --visits --store <store>` with `places`.
  static func record(_ fixes: [Fix], places: [Place], in scratch: ScratchDirectory, as name: String)
    throws -> String
  {
    let log = scratch.path("\(name).nmea")
    try Data(NMEAWriter.log(fixes).utf8).write(to: URL(fileURLWithPath: log))
    let placesFile = scratch.path("\(name).geojson")
    try Data(PlaceCollection.encode(places)).write(to: URL(fileURLWithPath: placesFile))
    let store = scratch.path("\(name).db")
    let replay = try CommandRun.waymark([
      "replay", log, "--visits", "--places", placesFile, "--store", store,
    ])
    try #require(replay.status == 0, "\(replay.stderr)")
    return store
  }

  @Test func staysAreNamedAfterTheirTownInEveryFormat() throws {
    let scratch = try ScratchDirectory("towns")
    // A stay in Zürich, then one at the declared place "cabin" near Lucerne, whose own town is
    // Kriens.
    let cabinCentre = Coordinate(latitude: 47.0502, longitude: 8.3093)
    var cabin = Place(id: "cabin", name: "Cabin", coordinate: cabinCentre, radiusMeters: 80)
    cabin.town = "Kriens"
    let store = try Self.record(
      Self.drive(from: Coordinate(latitude: 47.3769, longitude: 8.5417), to: cabinCentre),
      places: [cabin], in: scratch, as: "switzerland")

    func visits(_ arguments: [String], store: String = store) throws -> String {
      let run = try CommandRun.waymark(["visits", "--store", store] + arguments)
      #expect(run.status == 0, "\(run.stderr)")
      return run.output
    }
    // ndjson: the stay in Zürich gains its town and country; the cabin's visit keeps "Kriens"
    // (its place's), not the gazetteer's Lucerne.
    let lines = try visits(["--towns"]).split(separator: "\n").map {
      try JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
    }
    try #require(lines.count == 2, "\(lines)")
    #expect(lines[0]["place"] is NSNull)
    #expect(lines[0]["town"] as? String == "Zürich" && lines[0]["country"] as? String == "CH")
    #expect(lines[1]["place"] as? String == "cabin" && lines[1]["town"] as? String == "Kriens")
    #expect(lines[1]["country"] == nil)
    // Control: without --towns, no town on the stay.
    let plain = try visits([]).split(separator: "\n").first.map(String.init) ?? ""
    #expect(!plain.contains("\"town\"") && plain.contains("\"place\":null"), "\(plain)")

    #expect(try visits(["--towns", "--format", "text"]).contains("near Zürich, Switzerland"))
    #expect(try visits(["--towns", "--format", "gpx"]).contains("near Zürich, Switzerland"))
    let geojson = try visits(["--towns", "--format", "geojson"])
    #expect(geojson.contains(#""town":"Zürich","country":"CH""#), "\(geojson)")
    // csv: the stay's row has its town in the town column (the 14th).
    let rows = try visits(["--towns", "--format", "csv"]).split(separator: "\r\n")
    let header = rows[0].split(separator: ",", omittingEmptySubsequences: false)
    let stay = rows[1].split(separator: ",", omittingEmptySubsequences: false)
    #expect(header.count == stay.count && header[13] == "town" && stay[13] == "Zürich")

    // Stays far from any town (mid-Atlantic, 300 m apart) get none.
    let atlantic = Coordinate(latitude: 0, longitude: -30)
    let far = try Self.record(
      Self.drive(from: atlantic, to: atlantic.offset(by: 300, bearingDegrees: 90)), places: [],
      in: scratch, as: "atlantic")
    let ocean = try visits(["--towns"], store: far)
    #expect(ocean.split(separator: "\n").count == 2 && !ocean.contains("\"town\""), "\(ocean)")
  }
}
