import Foundation
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkService
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

private let geoclue = "/usr/libexec/geoclue"
private let geoclueAgent = "/usr/libexec/geoclue-2.0/demos/agent"
private let whereAmI = "/usr/libexec/geoclue-2.0/demos/where-am-i"
private let geoclueInstalled = [geoclue, geoclueAgent, whereAmI, dbusDaemon].allSatisfy {
  FileManager.default.isExecutableFile(atPath: $0)
}

/// Runs `executable` with its standard output joined to the collected standard error.
private func collect(_ executable: String, _ arguments: [String], bus: String) throws
  -> DaemonProcess
{
  let quoted = ([executable] + arguments).map { "'\($0)'" }.joined(separator: " ")
  return try DaemonProcess(
    executable: "/bin/sh", arguments: ["-c", "exec \(quoted) 1>&2"],
    environment: [
      "PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": bus, "G_MESSAGES_DEBUG": "all",
      "HOME": "/",
    ])
}

/// The `Latitude:`/`Longitude:` pairs `where-am-i` printed.
private func positions(_ lines: [String]) -> [(Double, Double)] {
  func value(_ line: String) -> Double? {
    // `Latitude:    52.519995°` (the degree sign is `?` in the C locale).
    let text = line.drop { $0 != ":" }.dropFirst().drop { $0 == " " }
    return Double(String(text.prefix { $0.isNumber || $0 == "-" || $0 == "." }))
  }
  var result: [(Double, Double)] = []
  var latitude: Double?
  for line in lines {
    if line.hasPrefix("Latitude:") { latitude = value(line) }
    if line.hasPrefix("Longitude:"), let lat = latitude, let lon = value(line) {
      result.append((lat, lon))
      latitude = nil
    }
  }
  return result
}

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: geoclueInstalled,
    "needs Debian's geoclue-2.0, geoclue-2-demo and dbus (Scripts/install-deps.sh)"))
struct GeoClueTests {
  /// The whole desktop path for real: gpsd on a pty → waymarkd's NMEA socket → GeoClue
  /// (`--nmea-socket`) on a private system bus → its demo client `where-am-i`. Without an agent
  /// GeoClue keeps the client waiting; without a grant waymarkd closes GeoClue's connection and
  /// `where-am-i` prints none of our positions; with a grant it prints the drive's.
  @Test func whereAmIPrintsTheDrivesPositionsOnlyWithAGrant() async throws {
    let nmeaSocket = try TemporaryDirectory.socketDirectory() + "/nmea.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "nmea-socket = \(nmeaSocket)\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>NMEA socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let (bus, address) = try startPrivateSystemBus(in: rig.directory)
    defer { bus.signal(SIGTERM) }
    func startGeoClue() async throws -> DaemonProcess {
      let service = try collect(geoclue, ["--nmea-socket=\(nmeaSocket)", "-t", "0"], bus: address)
      try await service.waitForLine { $0.contains("Available accuracy level from GClueNMEASource") }
      return service
    }
    var service = try await startGeoClue()
    defer { service.signal(SIGTERM) }
    let geoclueClient = PeerIdentity.userName(getuid()) + ":" + geoclue
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let third = epochs.count / 3

    // 1. No agent: the client waits.
    let waiting = try collect(whereAmI, ["-t", "4", "-a", "8"], bus: address)
    try await service.waitForLine { $0.contains("waiting for agent") }
    _ = try await waiting.waitForExit(timeout: .seconds(15))
    #expect(positions(waiting.log).isEmpty)

    // 2. An agent, no grant: GeoClue connects, waymarkd closes it; no position of ours.
    let agent = try collect(geoclueAgent, [], bus: address)
    defer { agent.signal(SIGTERM) }
    try await Task.sleep(for: .milliseconds(500))
    let refused = try collect(whereAmI, ["-t", "5", "-a", "8"], bus: address)
    try await daemon.waitForLine {
      $0.contains("refused NMEA client \(geoclueClient)") && $0.contains("notDetermined")
    }
    try await rig.send(epochs[..<third])
    _ = try await refused.waitForExit(timeout: .seconds(15))
    #expect(positions(refused.log).isEmpty, "\(refused.logText)")

    // 3. Granted: where-am-i prints the drive's positions. GeoClue 2.6 does not reconnect to an
    // NMEA socket that closed on it, so it is restarted after the grant (as install.sh does).
    try grant(geoclueClient, "whenInUse", store: rig.store)
    service.signal(SIGTERM)
    _ = try await service.waitForExit()
    service = try await startGeoClue()
    let granted = try collect(whereAmI, ["-t", "15", "-a", "8"], bus: address)
    try await daemon.waitForLine {
      $0.contains("NMEA client \(geoclueClient)") && $0.contains("connected: authorizedWhenInUse")
    }
    try await rig.send(epochs[third...])
    try await granted.waitForCount("Longitude:", 3)
    let printed = positions(granted.log)
    let sent = Commute.fixes(homeStay: 20, officeStay: 20)[third...].map { $0.coordinate! }
    for (latitude, longitude) in printed {
      // where-am-i prints 6 decimals; our sentences carry 1e-6 minute.
      #expect(
        sent.contains {
          abs($0.latitude - latitude) < 1e-6 && abs($0.longitude - longitude) < 1e-6
        },
        "\(latitude), \(longitude) is not a position of the drive")
    }

    // 4. Revoked while GeoClue reads: waymarkd closes its connection within a refresh.
    let revoke = try CommandRun.waymark(["auth", "revoke", geoclueClient, "--store", rig.store])
    #expect(revoke.status == 0)
    try await daemon.waitForLine(timeout: .seconds(3)) {
      $0.contains("NMEA client \(geoclueClient)") && $0.hasSuffix("notDetermined; closed")
    }
    granted.signal(SIGTERM)
  }
}

@Suite struct GeoClueInstallTests {
  /// `install.sh --geoclue` writes GeoClue's drop-in, turns the NMEA socket on in the
  /// configuration (once, however often it runs) and grants GeoClue's identity in the store.
  @Test func installWritesTheDropInTheSocketAndTheGrant() throws {
    let destination = try TemporaryDirectory()
    let arguments = [
      packageFile("Scripts/install.sh"), "--destdir", destination.path, "--build-dir",
      Products.buildDirectory.path, "--geoclue",
    ]
    for _ in 0..<2 {
      let run = try CommandRun.run("/bin/bash", arguments)
      #expect(run.status == 0, "\(run.stderr)")
    }
    let dropIn = try String(
      contentsOfFile: destination.file("etc/systemd/system/geoclue.service.d/waymark.conf"),
      encoding: .utf8)
    #expect(
      dropIn.contains(
        "\nExecStart=\nExecStart=/usr/libexec/geoclue --nmea-socket=/run/waymark/nmea.sock\n"))
    let configPath = destination.file("etc/waymark/waymark.conf")
    let config = try DaemonConfiguration.load(path: configPath, environment: [:])
    #expect(config.nmeaSocketPath == "/run/waymark/nmea.sock")
    let text = try String(contentsOfFile: configPath, encoding: .utf8)
    #expect(text.components(separatedBy: "\nnmea-socket =").count == 2)
    let grants = try DatabaseGrantStore(
      database: Database(path: destination.file("var/lib/waymark/waymark.db"))
    ).allGrants()
    #expect(grants.map(\.clientID) == ["geoclue:/usr/libexec/geoclue"])
    #expect(grants.first?.level == .whenInUse)
  }
}
