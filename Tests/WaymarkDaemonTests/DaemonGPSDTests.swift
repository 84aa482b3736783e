import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// One epoch of the fake receiver: its fix time and its NMEA sentences.
struct Epoch {
  var time: Date
  var lines: [String]
}

/// A scripted day: Home, then Office 1 km east, synthesized at 1 Hz and written as NMEA.
struct Commute {
  static let start = Timestamp.parse("2026-11-29T08:00:00.000Z")!
  static let home = Coordinate(latitude: 52.520_000, longitude: 13.405_000)
  static let office = home.offset(by: 1000, bearingDegrees: 90)

  /// West of Home → Home (stay `homeStay` s) → Office (stay `officeStay` s) → 400 m beyond.
  static func epochs(homeStay: Double, officeStay: Double) -> [Epoch] {
    fixes(homeStay: homeStay, officeStay: officeStay).map { fix in
      Epoch(time: fix.time!, lines: NMEAWriter.sentences(for: fix))
    }
  }

  /// The synthesized fixes behind ``epochs(homeStay:officeStay:)`` (each with a time).
  static func fixes(homeStay: Double, officeStay: Double) -> [Fix] {
    var route = RouteSynthesizer(
      start: start, origin: home.offset(by: 300, bearingDegrees: 270), seed: 11)
    route.noiseMeters = 1
    route.drive(to: home, speedMetersPerSecond: 10)
    route.stop(seconds: homeStay)
    route.drive(to: office, speedMetersPerSecond: 15)
    route.stop(seconds: officeStay)
    route.drive(to: office.offset(by: 400, bearingDegrees: 90), speedMetersPerSecond: 15)
    return route.fixes().filter { $0.time != nil }
  }
}

/// A gpsd on a pseudo-terminal, a state directory with places and a grant, and a config.
struct DaemonRig {
  let receiver: FakeReceiver
  let gpsd: GPSDHarness
  let directory: TemporaryDirectory
  let config: String
  var store: String { directory.file("waymark.db") }

  static func start(places: [(String, String, Coordinate)], extraConfig: String = "") async throws
    -> DaemonRig
  {
    // The daemon's user and group exist before it starts, as the package makes them at
    // install: waymarkd looks group `waymark` up once, at start.
    if getuid() == 0 { _ = try daemonUser() }
    let receiver = try FakeReceiver()
    let gpsd = try await GPSDHarness(devices: [receiver.path])
    try await receiver.warmUp(gpsd: gpsd)
    let directory = try TemporaryDirectory()
    for (id, name, coordinate) in places {
      try addPlace(
        store: directory.file("waymark.db"), id: id, name: name, at: coordinate, radius: 50)
    }
    try grantAlways(directory: directory.path)
    let config = try directory.write(
      "waymark.conf", "gpsd = 127.0.0.1:\(gpsd.port)\nsave-interval = 3600\n" + extraConfig)
    return DaemonRig(receiver: receiver, gpsd: gpsd, directory: directory, config: config)
  }

  func launch(notify: NotifySocket? = nil) throws -> DaemonProcess {
    var extra: [String: String] = [:]
    if let notify { extra["NOTIFY_SOCKET"] = notify.address }
    return try DaemonProcess(
      arguments: ["--config", config],
      environment: daemonEnvironment(state: directory.path, extra: extra))
  }

  /// Writes `epochs` to the receiver's terminal, 5 ms apart: 200 epochs a second, each still
  /// read and reported by gpsd on its own (waymarkd's inbox waits rather than drops, so the pace
  /// only bounds how long a drive takes).
  func send(_ epochs: some Collection<Epoch>) async throws {
    try await receiver.send(epochs: epochs.map(\.lines), interval: .milliseconds(5))
  }

  func stop() {
    gpsd.stop()
    receiver.terminal.close()
  }
}

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonGPSDTests {
  /// The daemon follows a real gpsd, records Home's visit, picks up a place added while it runs
  /// and a hook added to its configuration on SIGHUP, stops cleanly on SIGTERM with the Office
  /// visit open, and closes that same visit after the next start.
  @Test func followsGPSDReloadsOnSIGHUPAndResumesAfterSIGTERM() async throws {
    let rig = try await DaemonRig.start(places: [("home", "Home", Commute.home)])
    defer { rig.stop() }
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let notify = try NotifySocket(directory: nil)
    let daemon = try rig.launch(notify: notify)
    try await notify.wait { $0 == "READY=1" }
    try await rig.gpsd.waitForWatchers(1)

    // To Home and some way towards the Office.
    let atHomeEnd = Commute.start.addingTimeInterval(30 + 20)
    try await rig.send(epochs.filter { $0.time <= atHomeEnd })
    try await daemon.waitForLine { $0.hasPrefix("<5>ARRIVAL at Home (home) at ") }
    // The status line says how the service is, never where the device is.
    try await notify.wait { $0 == "STATUS=3D fix, 1 place(s) monitored" }
    #expect(!notify.assignments.contains { $0.contains("Home") || $0.contains("inside") })
    #expect(try storedVisits(rig.store).map(\.visit.placeID) == ["home"])
    #expect(try storedVisits(rig.store).first?.visit.departureDate == nil)
    // No coordinates at the default log level.
    #expect(!daemon.logText.contains("52.52"))

    // A new place and a hook, picked up on SIGHUP.
    try addPlace(
      store: rig.store, id: "office", name: "Office", at: Commute.office, radius: 50)
    let hookOutput = rig.directory.file("hook")
    let text = try String(contentsOfFile: rig.config, encoding: .utf8)
    try Data(
      (text + "arrival-hook = cat > \(hookOutput).$WAYMARK_PLACE_ID.json\n").utf8
    ).write(to: URL(fileURLWithPath: rig.config))
    daemon.signal(SIGHUP)
    try await daemon.waitForLine { $0 == "<5>2 place(s) loaded" }

    // On to the Office and stay there.
    let officeEnd = atHomeEnd.addingTimeInterval(70 + 15)
    try await rig.send(epochs.filter { $0.time > atHomeEnd && $0.time <= officeEnd })
    try await daemon.waitForLine { $0.hasPrefix("<5>ARRIVAL at Office (office)") }
    try await daemon.waitForLine { $0.hasPrefix("<6>ARRIVAL hook for place 'office' succeeded") }
    let hookJSON = try String(contentsOfFile: hookOutput + ".office.json", encoding: .utf8)
    #expect(hookJSON.hasPrefix("{\"class\":\"ARRIVAL\",\"time\":\""))
    #expect(hookJSON.contains("\"place\":\"office\",\"name\":\"Office\""))
    #expect(daemon.log.contains { $0.hasPrefix("<5>DEPARTURE from Home (home)") })

    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    #expect(daemon.log.last == "<5>stopped; 1 visit(s) left open: Office")
    var visits = try storedVisits(rig.store)
    #expect(visits.map(\.visit.placeID) == ["home", "office"])
    #expect(visits[0].visit.departureDate != nil)
    #expect(visits[1].visit.departureDate == nil)
    let officeArrival = try #require(visits.last?.visit.arrivalDate)

    // Next start: the open visit is resumed, then closed by the departure.
    let again = try rig.launch(notify: notify)
    try await again.waitForLine { $0.contains("1 open visit(s)") }
    try await rig.gpsd.waitForWatchers(2)
    try await rig.send(epochs.filter { $0.time > officeEnd })
    try await again.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office (office)") }
    again.signal(SIGTERM)
    #expect(try await again.waitForExit() == 0)
    #expect(!again.log.contains { $0.contains("ARRIVAL at Office") })
    visits = try storedVisits(rig.store)
    #expect(visits.count == 2)
    #expect(visits[1].visit.arrivalDate == officeArrival)
    #expect(visits[1].visit.departureDate != nil)
    #expect(visits.allSatisfy { $0.visit.departureDate != nil })
  }

  /// kill -9 in the middle of the Home visit, restart: the visit is resumed (same arrival),
  /// closed once, and the Office visit after it is recorded once.
  @Test func sigkillMidVisitLosesAndDuplicatesNothing() async throws {
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home), ("office", "Office", Commute.office)])
    defer { rig.stop() }
    let epochs = Commute.epochs(homeStay: 40, officeStay: 20)
    let first = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    let killAt = Commute.start.addingTimeInterval(30 + 15)
    try await rig.send(epochs.filter { $0.time <= killAt })
    try await first.waitForLine { $0.hasPrefix("<5>ARRIVAL at Home (home)") }
    let before = try storedVisits(rig.store)
    #expect(before.count == 1)
    #expect(before.first?.visit.departureDate == nil)
    try await first.crash()

    let second = try rig.launch()
    try await second.waitForLine { $0.contains("1 open visit(s)") }
    try await rig.gpsd.waitForWatchers(2)
    try await rig.send(epochs.filter { $0.time > killAt })
    try await second.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office (office)") }
    second.signal(SIGTERM)
    #expect(try await second.waitForExit() == 0)
    #expect(!second.log.contains { $0.contains("ARRIVAL at Home") })
    #expect(second.log.filter { $0.contains("DEPARTURE from Home") }.count == 1)

    let visits = try storedVisits(rig.store)
    #expect(visits.map(\.visit.placeID) == ["home", "office"])
    #expect(visits[0].visit.arrivalDate == before[0].visit.arrivalDate)
    #expect(visits.allSatisfy { $0.visit.departureDate != nil })
    let stay = try #require(visits[0].visit.durationSeconds)
    #expect(stay >= 40 && stay < 60, "Home visit of \(stay) s")
    let database = try Database(path: rig.store, createIfMissing: false)
    #expect(try database.integrityCheck() == ["ok"])
    let events = try database.read { try EventRepository($0).all() }
    #expect(
      events.map { "\($0.className) \($0.placeID)" } == [
        "ARRIVAL home", "DEPARTURE home", "ARRIVAL office", "DEPARTURE office",
      ])
  }

  /// Unplugging the receiver mid-visit: the daemon keeps running, says so, and the visit stays
  /// open.
  @Test func anUnpluggedReceiverIsReportedAndTheVisitStaysOpen() async throws {
    let rig = try await DaemonRig.start(places: [("home", "Home", Commute.home)])
    defer { rig.stop() }
    let epochs = Commute.epochs(homeStay: 30, officeStay: 0)
    let notify = try NotifySocket(directory: nil)
    let daemon = try rig.launch(notify: notify)
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(epochs.filter { $0.time <= Commute.start.addingTimeInterval(40) })
    try await daemon.waitForLine { $0.hasPrefix("<5>ARRIVAL at Home (home) at ") }
    try await notify.wait { $0 == "STATUS=3D fix, 1 place(s) monitored" }
    try rig.receiver.unplug(from: rig.gpsd)
    try await notify.wait { $0 == "STATUS=waiting for a receiver (gpsd has no device)" }
    try await daemon.waitForLine { $0 == "<4>gpsd reports no receiver" }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    #expect(daemon.log.last == "<5>stopped; 1 visit(s) left open: Home")
    #expect(try storedVisits(rig.store).map(\.visit.isOpen) == [true])
  }
}
