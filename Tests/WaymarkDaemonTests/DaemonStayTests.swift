import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// Stays anywhere in the real daemon, over a real gpsd: recorded in the store, listed by
/// `waymark visits`, and one stay, not two, across a kill -9 in the middle of it.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonStayTests {
  static let start = Timestamp.parse("2026-11-30T07:00:00.000Z")!
  static let home = Coordinate(latitude: 52.52, longitude: 13.405)
  static let depot = home.offset(by: 1_000, bearingDegrees: 90)
  static let yard = depot.offset(by: 2_000, bearingDegrees: 0)

  /// Home (declared) for 300 s, a depot (not declared) for 200 s, a yard (not declared) until
  /// the end: 1 Hz, as NMEA epochs.
  static func epochs() -> [Epoch] {
    var route = RouteSynthesizer(start: start, origin: home, seed: 31)
    route.noiseMeters = 2
    route.stop(seconds: 300)
    route.drive(to: depot, speedMetersPerSecond: 12)
    route.stop(seconds: 200)
    route.drive(to: yard, speedMetersPerSecond: 12)
    route.stop(seconds: 150)
    return route.fixes().map { Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0)) }
  }

  static func stays(_ store: String) throws -> [Stay] {
    let database = try Database(path: store, createIfMissing: false)
    return try database.read { try StayRepository($0).all() }
  }

  @Test func aStayInterruptedByKill9IsRecordedOnce() async throws {
    let rig = try await DaemonRig.start(places: [("home", "Home", Self.home)])
    defer { rig.stop() }
    let epochs = Self.epochs()
    let first = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    let killAt = Self.start.addingTimeInterval(200)
    try await rig.send(epochs.filter { $0.time <= killAt })
    try await first.waitForLine { $0 == "<6>stay: arrived, at a declared place" }
    // The open stay is saved every 5 s of fix time: wait until the save near the kill is in.
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(20)
    var before: [Stay] = []
    while clock.now < deadline {
      before = try Self.stays(rig.store)
      let database = try Database(path: rig.store, createIfMissing: false)
      let lastFix = try database.read { try StayRepository($0).open()?.lastFix }
      if let lastFix, lastFix >= killAt.addingTimeInterval(-6) { break }
      try await clock.sleep(for: .milliseconds(50))
    }
    try #require(before.count == 1)
    #expect(before[0].isOpen && before[0].placeID == "home")
    #expect(abs(before[0].arrivalDate.timeIntervalSince(Self.start)) <= 2)
    try await first.crash()

    let second = try rig.launch()
    try await rig.gpsd.waitForWatchers(2)
    try await rig.send(epochs.filter { $0.time > killAt })
    try await second.waitForCount("<6>stay: arrived, at no declared place", 2)
    second.signal(SIGTERM)
    #expect(try await second.waitForExit() == 0)
    // No second arrival at Home: the stay went on.
    #expect(!second.log.contains("<6>stay: arrived, at a declared place"))

    let stays = try Self.stays(rig.store)
    try #require(stays.count == 3, "\(stays)")
    #expect(stays[0].arrivalDate == before[0].arrivalDate)
    let homeDeparture = try #require(stays[0].departureDate)
    #expect(abs(homeDeparture.timeIntervalSince(Self.start.addingTimeInterval(300))) <= 10)
    #expect(stays.map(\.placeID) == ["home", nil, nil])
    #expect(stays[1].coordinate.distance(to: Self.depot) <= 10)
    #expect(stays[2].isOpen && stays[2].coordinate.distance(to: Self.yard) <= 10)

    // `waymark visits`: Home's visit (from the place monitor), then the two stays at no place.
    let listed = try CommandRun.waymark(["visits", "--store", rig.store])
    let lines = listed.output.split(separator: "\n")
    #expect(lines.count == 3, "\(listed.output)")
    #expect(lines.first?.contains(#""place":"home""#) == true)
    #expect(lines.dropFirst().allSatisfy { $0.contains(#""place":null,"name":null"#) })
    let csv = try CommandRun.waymark(["visits", "--store", rig.store, "--format", "csv"])
    #expect(csv.output.split(separator: "\r\n").count == 4)
    #expect(
      csv.output.split(separator: "\r\n").allSatisfy {
        $0.split(separator: ",", omittingEmptySubsequences: false).count == 18
      })
  }
}
