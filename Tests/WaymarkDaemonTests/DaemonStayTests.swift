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

/// Stays through the location socket across a kill -9, and the stay keys on SIGHUP, with a
/// real daemon over a real gpsd.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonStayRestartTests {
  static let start = Timestamp.parse("2026-11-30T09:00:00.000Z")!
  static let origin = Coordinate(latitude: 52.50, longitude: 13.30)

  /// Fix times and positions of a route at 1 Hz, as NMEA epochs, with where each stop was.
  struct Drive {
    var route: RouteSynthesizer
    var position = DaemonStayRestartTests.origin
    var stops: [(start: Date, end: Date, at: Coordinate)] = []
    private var elapsed = 0.0

    init(seed: UInt64) {
      route = RouteSynthesizer(start: DaemonStayRestartTests.start, origin: position, seed: seed)
      route.noiseMeters = 2
    }

    /// Drives 2.5 km east at 12 m/s (208 s: a stay left is closed 120 s after its last fix
    /// inside, unless the device comes back), then stops for `seconds`.
    mutating func stop(_ seconds: Double) {
      leave()
      let arrival = route.start.addingTimeInterval(elapsed)
      route.stop(seconds: seconds)
      elapsed += seconds
      stops.append((arrival, route.start.addingTimeInterval(elapsed), position))
    }

    /// Drives 2.5 km east, away from the last stop.
    mutating func leave() {
      position = position.offset(by: 2_500, bearingDegrees: 90)
      route.drive(to: position, speedMetersPerSecond: 12)
      elapsed += 2_500 / 12
    }

    /// The epochs, with the receiver's noise at rest.
    var epochs: [Epoch] {
      StandstillNoise(seed: route.seed).apply(to: route.fixes()).map {
        Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0))
      }
    }
  }

  static func visitLines(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix(#"{"class":"VISIT""#) }
  }

  static func field(_ line: String, _ name: String) -> String? {
    guard let data = line.data(using: .utf8),
      let object = try? JSONSerialization.jsonObject(with: data) as? [String: Any]
    else { return nil }
    return object[name] as? String
  }

  /// A stay of 300 s, another of 200 s, through a socket client watching visits; with
  /// `restart`, waymarkd is killed (-9) 200 s into the first stay and started again, and the
  /// client connects again. Returns the VISIT lines each connection received and the store's
  /// stays.
  func run(restart: Bool) async throws -> (before: [String], after: [String], stays: [Stay]) {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let ourselves = String(cString: realpath("/proc/self/exe", nil))
    try grant("root:" + ourselves, "always", store: rig.store)
    var drive = Drive(seed: 41)
    drive.stop(300)
    drive.leave()
    drive.stop(200)
    drive.leave()
    let epochs = drive.epochs
    let visitsWatch = #"{"class":"WATCH","visits":true}"#

    let first = try rig.launch()
    try await first.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let client = try Listener(path: socketPath, watch: visitsWatch)
    try await client.wait { $0.contains { $0.contains(#""visits":true"#) } }
    guard restart else {
      try await rig.send(epochs)
      try await client.wait { Self.visitLines($0).count >= 4 }
      first.signal(SIGTERM)
      #expect(try await first.waitForExit() == 0)
      return (Self.visitLines(client.received), [], try DaemonStayTests.stays(rig.store))
    }
    let killAt = drive.stops[0].start.addingTimeInterval(200)
    try await rig.send(epochs.filter { $0.time <= killAt })
    try await client.wait { Self.visitLines($0).count >= 1 }
    // The open stay is saved every 5 s of fix time: wait for the save near the kill.
    try await eventually("the open stay saved near the kill") {
      guard let database = try? Database(path: rig.store, createIfMissing: false),
        let open = try? database.read({ try StayRepository($0).open() })
      else { return false }
      return open.lastFix >= killAt.addingTimeInterval(-6)
    }
    try await first.crash()
    try await client.wait { _ in client.hasEnded }

    let second = try rig.launch()
    try await second.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(2)
    let again = try Listener(path: socketPath, watch: visitsWatch)
    try await again.wait { $0.contains { $0.contains(#""visits":true"#) } }
    try await rig.send(epochs.filter { $0.time > killAt })
    try await again.wait { Self.visitLines($0).count >= 3 }
    second.signal(SIGTERM)
    #expect(try await second.waitForExit() == 0)
    let stays = try DaemonStayTests.stays(rig.store)
    return (Self.visitLines(client.received), Self.visitLines(again.received), stays)
  }

  /// kill -9 in the middle of a stay: the store holds it once, and the client that connects
  /// again gets exactly one VISIT for it, when it closes, with the arrival the first
  /// connection was told; the next stay gives its own VISITs. Control: the same drive without
  /// the restart gives the same stays.
  @Test(.enabled(if: isRoot, "needs root: the client's grant is root's"))
  func aRestartMidStayGivesOneStayAndOneClosingVISIT() async throws {
    let plain = try await run(restart: false)
    let restarted = try await run(restart: true)
    var drive = Drive(seed: 41)
    drive.stop(300)
    drive.leave()
    drive.stop(200)

    // Control: opened and closed, each stay; two stays in the store.
    try #require(plain.before.count == 4, "\(plain.before)")
    #expect(plain.before.map { Self.field($0, "departure") == nil } == [true, false, true, false])
    try #require(plain.stays.count == 2, "\(plain.stays)")

    // Restarted: the first connection was told of the arrival only.
    try #require(restarted.before.count == 1, "\(restarted.before)")
    #expect(Self.field(restarted.before[0], "departure") == nil)
    let arrival = try #require(Self.field(restarted.before[0], "arrival"))
    // The second connection: the first stay closed once (same arrival), then the second
    // stay opened and closed.
    try #require(restarted.after.count == 3, "\(restarted.after)")
    let arrivals = restarted.after.map { Self.field($0, "arrival") }
    #expect(arrivals.filter { $0 == arrival }.count == 1)
    #expect(arrivals[0] == arrival)
    #expect(Self.field(restarted.after[0], "departure") != nil)
    #expect(arrivals[1] != arrival && arrivals[1] == arrivals[2])
    #expect(restarted.after.map { Self.field($0, "departure") == nil } == [false, true, false])
    // The store: one row for the first stay, as without the restart.
    try #require(restarted.stays.count == 2, "\(restarted.stays)")
    #expect(restarted.stays.allSatisfy { !$0.isOpen })
    #expect(Timestamp.format(restarted.stays[0].arrivalDate) == arrival)
    #expect(restarted.stays[0].arrivalDate == plain.stays[0].arrivalDate)
    for (stay, control) in zip(restarted.stays, plain.stays) {
      #expect(abs(stay.arrivalDate.timeIntervalSince(control.arrivalDate)) <= 2)
      let departure = try #require(stay.departureDate)
      let controlDeparture = try #require(control.departureDate)
      #expect(abs(departure.timeIntervalSince(controlDeparture)) <= 10)
    }
    for (stay, truth) in zip(restarted.stays, drive.stops) {
      #expect(stay.coordinate.distance(to: truth.at) <= 10)
      #expect(abs(stay.arrivalDate.timeIntervalSince(truth.start)) <= 10)
    }
  }

  /// SIGHUP applies `visit-min-duration` and `stays`: a 200 s stop is a stay at the default
  /// 120 s, not at 300 s; an invalid value keeps 300 s and logs an error; `stays = off`
  /// records nothing; `stays = on` again records.
  @Test func sighupReloadsTheStaySettings() async throws {
    let rig = try await DaemonRig.start(places: [])
    defer { rig.stop() }
    var drive = Drive(seed: 43)
    drive.stop(200)  // A: a stay (120 s)
    drive.stop(200)  // B: none (300 s)
    drive.stop(200)  // C: none (300 s kept, the new value was invalid)
    drive.stop(400)  // D: a stay (300 s)
    drive.stop(400)  // E: none (stays = off)
    drive.stop(200)  // F: a stay (stays = on, 120 s)
    drive.leave()
    let epochs = drive.epochs
    let stops = drive.stops
    let base = try String(contentsOfFile: rig.config, encoding: .utf8)
    let daemon = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    func send(through index: Int) async throws {
      // Through 150 s after the stop: a stay is closed 120 s after its last fix inside.
      let after = index == 0 ? Date.distantPast : stops[index - 1].end.addingTimeInterval(150)
      let until = stops[index].end.addingTimeInterval(150)
      try await rig.send(epochs.filter { $0.time > after && $0.time <= until })
    }
    func reload(_ extra: String, until line: String) async throws {
      try Data((base + extra).utf8).write(to: URL(fileURLWithPath: rig.config))
      let count = daemon.log.filter { $0.contains(line) }.count
      daemon.signal(SIGHUP)
      try await daemon.waitForCount(line, count + 1)
    }
    let left = "<6>stay: left after "

    try await send(through: 0)
    try await daemon.waitForCount(left, 1)
    try await reload(
      "visit-min-duration = 300\n", until: "<5>stay recording on: stays of 300 s or more")
    try await send(through: 1)
    try await reload(
      "visit-min-duration = soon\n",
      until: "<3>configuration error, keeping the running configuration: ")
    #expect(daemon.log.contains { $0.contains("visit-min-duration: expected a number") })
    try await send(through: 2)
    try await send(through: 3)
    try await daemon.waitForCount(left, 2)
    // A and D only: B and C (sent before D) were too short for 300 s.
    var stays = try DaemonStayTests.stays(rig.store)
    #expect(stays.count == 2, "\(stays)")
    try await reload("stays = off\n", until: "<5>stay recording off")
    try await send(through: 4)
    try await reload("stays = on\n", until: "<5>stay recording on: stays of 120 s or more")
    try await send(through: 5)
    try await daemon.waitForCount(left, 3)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    stays = try DaemonStayTests.stays(rig.store)
    try #require(stays.count == 3, "\(stays)")
    for (stay, index) in zip(stays, [0, 3, 5]) {
      #expect(stay.coordinate.distance(to: stops[index].at) <= 10)
      #expect(abs(stay.arrivalDate.timeIntervalSince(stops[index].start)) <= 10)
    }
  }
}
