import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// Routes from the project's `RouteSynthesizer`, written as NMEA and decoded again, through the
/// monitor: the same path `waymark replay --places` takes.
@Suite struct PlaceMonitorReplayTests {
  static let start = Timestamp.parse("2026-11-29T23:40:00.000Z")!
  static let home = Coordinate(latitude: 52.52, longitude: 13.405)
  static let bakery = home.offset(by: 1500, bearingDegrees: 60)
  static let bridge = bakery.offset(by: 1200, bearingDegrees: 150)
  static let office = bakery.offset(by: 3000, bearingDegrees: 150)

  static let places = [
    Place(id: "bakery", name: "Bäckerei \"Korn\"", coordinate: bakery, radiusMeters: 80),
    Place(id: "bridge", name: "Bridge", coordinate: bridge, radiusMeters: 40),
    Place(id: "office", name: "Office", coordinate: office, radiusMeters: 120),
  ]

  /// Drive to the bakery, a 10-minute stop with a fix loss and poor-accuracy outliers in it
  /// (across midnight), then at one fix every 8 s over a small bridge, to the office.
  static func replayedLocations() -> [Location] {
    var route = RouteSynthesizer(start: start, origin: home, seed: 2026)
    route.noiseMeters = 4
    route.drive(to: bakery, speedMetersPerSecond: 12)
    route.stop(seconds: 240)
    route.outlier(offsetMeters: 900, bearingDegrees: 10, accuracyMeters: 180)
    route.outlier(offsetMeters: 950, bearingDegrees: 12, accuracyMeters: 200)
    route.outlier(offsetMeters: 990, bearingDegrees: 11, accuracyMeters: 220)
    route.gap(seconds: 600)
    route.stop(seconds: 240)
    route.drive(to: office, speedMetersPerSecond: 14)
    route.stop(seconds: 120)
    let log = NMEAWriter.log(route.fixes())
    let decoded = NMEALog.decode(Array(log.utf8), path: "synthetic.nmea")
    return decoded.fixes.compactMap(Location.init)
  }

  @Test func synthesizedRouteThroughNMEAGivesTheVisits() {
    let locations = Self.replayedLocations()
    #expect(locations.count == 944)  // the synthesizer's count for this route
    let monitor = PlaceMonitor(places: Self.places)
    let events = locations.flatMap { monitor.process($0) }
    let summary = events.map { "\($0.className) \($0.placeID) \($0.reason.rule)" }
    #expect(
      summary == [
        "ARRIVAL bakery inside", "DEPARTURE bakery outside", "ARRIVAL bridge inside",
        "DEPARTURE bridge outside", "ARRIVAL office inside",
      ])
    if case .departure(let departure) = events[1] {
      #expect(departure.durationSeconds > 1000)  // the 10-minute fix loss did not end it
      #expect(Timestamp.format(departure.arrival).hasPrefix("2026-11-29T23:4"))
      #expect(Timestamp.format(departure.time).hasPrefix("2026-11-30T00:"))
    }
    #expect(monitor.openVisits().map(\.placeID) == ["office"])
  }

  /// One fix every 8 s at 14 m/s: 112 m between fixes, and the 40 m bridge falls between two.
  @Test func sparseFixesStillSeeTheBridge() {
    var route = RouteSynthesizer(start: Self.start, origin: Self.bakery, seed: 3)
    route.rateHz = 1.0 / 8
    route.drive(to: Self.office, speedMetersPerSecond: 14)
    let fixes = NMEALog.decode(Array(NMEAWriter.log(route.fixes()).utf8), path: "sparse.nmea")
      .fixes
    let locations = fixes.compactMap(Location.init)
    let monitor = PlaceMonitor(places: Self.places)
    let events = locations.flatMap { monitor.process($0) }.filter { $0.placeID == "bridge" }
    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(events.allSatisfy { $0.reason.rule == "pass-through" })
    if case .departure(let departure) = events.last {
      // 80 m of chord at 14 m/s.
      #expect(abs(departure.durationSeconds - 80.0 / 14) < 1)
    }
  }

  @Test func replayingTwiceGivesByteIdenticalNDJSON() {
    func run() -> [UInt8] {
      let monitor = PlaceMonitor(places: Self.places)
      return Fixture.ndjson(Self.replayedLocations().flatMap { monitor.process($0) })
    }
    let first = run()
    #expect(!first.isEmpty)
    #expect(first == run())
    let text = String(decoding: first, as: UTF8.self)
    #expect(text.contains(#""name":"Bäckerei \"Korn\"""#))
  }
}
