import Foundation
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// An NMEA sentence with its checksum.
private func sentence(_ body: String) -> String {
  let checksum = body.utf8.reduce(UInt8(0), ^)
  let hex = String(checksum, radix: 16, uppercase: true)
  return "$\(body)*\(hex.count == 1 ? "0" + hex : hex)"
}

/// Numbers no receiver or sane broker sends, fed where they enter (an MQTT command through a
/// real mosquitto, a store an older version or a hand edit left, a places file, an NMEA log
/// replayed with `--mqtt`): refused or dropped with a reason, never a trap.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"))
struct HostileNumberTests {
  static let topic = "owntracks/hostile/dev"

  /// `setWaypoints` with a radius of 1e19 (it used to be stored, then trap in every start's
  /// waypoints message: a crash loop), a name with a newline, and 1,001 waypoints: each is
  /// refused and logged, the daemon keeps running, and a sane command after them is imported
  /// (the positive control).
  @Test func hostileWaypointCommandsAreRefusedAndTheDaemonRuns() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let rig = try await DaemonRig.start(
      places: [],
      extraConfig:
        "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\nmqtt-interval = 3600\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    func publish(_ payload: String) throws {
      try WaymarkDaemonTests.publish(
        payload, topic: Self.topic + "/cmd", port: broker.port, in: directory)
    }
    func waypoint(_ desc: String, rad: String, rid: String) -> String {
      #"{"_type":"waypoint","desc":"\#(desc)","lat":45.1,"lon":4.8,"rad":\#(rad),"rid":"\#(rid)"}"#
    }
    func command(_ waypoints: [String]) -> String {
      #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":["#
        + waypoints.joined(separator: ",") + "]}}"
    }
    try publish(command([waypoint("Huge", rad: "1e19", rid: "huge")]))
    try await daemon.waitForLine {
      $0.contains("MQTT: ignored a command") && $0.contains("waypoint 0: rad")
    }
    try publish(command([waypoint(#"Ho\nme"#, rad: "50", rid: "home")]))
    try await daemon.waitForLine {
      $0.contains("MQTT: ignored a command") && $0.contains("desc contains a control character")
    }
    try publish(command((0...1_000).map { waypoint("P\($0)", rad: "50", rid: "p\($0)") }))
    try await daemon.waitForLine {
      $0.contains("MQTT: ignored a command") && $0.contains("1001 waypoints: at most 1000")
    }
    try publish(command([waypoint("Office", rad: "50", rid: "office")]))
    try await daemon.waitForLine { $0.contains("1 place(s) from setWaypoints; 1 in all") }
    #expect(daemon.isRunning)
    let places = try Database(path: rig.store).read { try PlaceRepository($0).all() }
    #expect(places.map(\.id) == ["office"], "\(places.map(\.id))")
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    try await broker.stop()
  }

  /// A store whose place has a radius of 1e19 (written by an older version, or by hand): the
  /// daemon with MQTT on starts, publishes its waypoints (the radius saturated, not a trap)
  /// and stays up; before, it trapped at every start.
  @Test func aStoredHugeRadiusDoesNotCrashTheStart() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let rig = try await DaemonRig.start(
      places: [("wide", "Wide", Commute.home)],
      extraConfig:
        "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\nmqtt-interval = 3600\n")
    defer { rig.stop() }
    let edit = try CommandRun.run(
      "/usr/bin/sqlite3", [rig.store, "UPDATE place SET radius = 1e19 WHERE id = 'wide'"])
    #expect(edit.status == 0, "\(edit.stderr)")
    let subscriber = try subscribe(
      port: broker.port, topic: Self.topic + "/waypoints", id: "sub-wide")
    try await broker.process.waitForLine { $0.contains("sub-wide") }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    try await subscriber.waitForLine { $0.contains(#""desc":"Wide""#) }
    try await rig.gpsd.waitForWatchers(1)
    #expect(daemon.isRunning)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// `waymark places import` of a file with a radius of 1e19 is refused (exit 65, the feature
  /// and the reason), and the store is left without the place; a radius of 100 km passes.
  @Test func aPlacesFileWithAHugeRadiusIsRefused() throws {
    let directory = try TemporaryDirectory()
    let store = directory.file("waymark.db")
    func file(_ radius: String) throws -> String {
      try directory.write(
        "places-\(radius).geojson",
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"wide","#
          + #""geometry":{"type":"Point","coordinates":[4.8,45.1]},"#
          + #""properties":{"name":"Wide","radius":\#(radius)}}]}"#)
    }
    let refused = try CommandRun.waymark(["places", "import", try file("1e19"), "--store", store])
    #expect(refused.status == 65, "\(refused.status) \(refused.stderr)")
    #expect(refused.stderr.contains("feature 0"), "\(refused.stderr)")
    #expect(refused.stderr.contains("properties.radius is not a number of metres above 0"))
    let accepted = try CommandRun.waymark(
      ["places", "import", try file("100000"), "--store", store])
    #expect(accepted.status == 0, "\(accepted.stderr)")
    let places = try Database(path: store).read { try PlaceRepository($0).all() }
    #expect(places.map(\.radiusMeters) == [100_000])
  }

  /// `waymark replay --mqtt` of a log whose first epoch says HDOP 999999999999999999 and a
  /// speed of 10^23 knots (it used to trap while the location message was built): exit 0; that
  /// location is published without `acc` and `vel`, and the sane epochs after it with them.
  @Test func replayWithHostileNumbersPublishesWithoutTrapping() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let subscriber = try subscribe(port: broker.port, topic: "hostile/#", id: "sub-hostile")
    try await broker.process.waitForLine { $0.contains("sub-hostile") }
    var lines: [String] = []
    for second in 0..<5 {
      let clock = String(format: "0750%02d.000", second)
      let hdop = second == 0 ? "999999999999999999" : "1.2"
      let knots = second == 0 ? "99999999999999999999999" : "2.0"
      lines.append(
        sentence("GPGGA,\(clock),4545.623118,N,00450.154228,E,1,09,\(hdop),172.0,M,47.0,M,,"))
      lines.append(
        sentence("GPRMC,\(clock),A,4545.623118,N,00450.154228,E,\(knots),45.0,051226,,,A"))
    }
    let log = try directory.write("hostile.nmea", lines.joined(separator: "\r\n") + "\r\n")
    let replay = try CommandRun.waymark([
      "replay", log, "--mqtt", "127.0.0.1:\(broker.port)", "--mqtt-topic", "hostile/car",
      "--mqtt-interval", "1",
    ])
    #expect(replay.status == 0, "\(replay.status): \(replay.stderr)")
    try await subscriber.waitForCount(#""_type":"location""#, 5, timeout: .seconds(20))
    let locations = objects(subscriber.log, topic: "hostile/car")
    let first = try #require(locations.first { ($0["tst"] as? Int).map { $0 % 60 == 0 } == true })
    #expect(first["acc"] == nil && first["vel"] == nil, "\(first)")
    let sane = locations.filter { $0["acc"] != nil && $0["vel"] != nil }
    #expect(sane.count >= 4, "\(locations)")
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }
}
