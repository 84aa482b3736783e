import Foundation
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkDaemonConfiguration
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

/// A location `where-am-i` printed: its position and the time of day (UTC) of its fix.
private struct PrintedLocation {
  var latitude: Double
  var longitude: Double
  /// Seconds since midnight: GeoClue dates an NMEA fix today, at the sentence's time.
  var timeOfDay: Int
}

/// The locations `where-am-i` printed (`Latitude:`, `Longitude:`, then `Timestamp:`).
private func positions(_ lines: [String]) -> [PrintedLocation] {
  func value(_ line: String) -> Double? {
    // `Latitude:    52.519995°` (the degree sign is `?` in the C locale).
    let text = line.drop { $0 != ":" }.dropFirst().drop { $0 == " " }
    return Double(String(text.prefix { $0.isNumber || $0 == "-" || $0 == "." }))
  }
  var result: [PrintedLocation] = []
  var latitude: Double?
  var longitude: Double?
  for line in lines {
    if line.hasPrefix("Latitude:") { latitude = value(line) }
    if line.hasPrefix("Longitude:") { longitude = value(line) }
    // `Timestamp:   Tue Dec  1 08:01:58 2026 (1796112118 seconds since the Epoch)`
    if line.hasPrefix("Timestamp:"), let lat = latitude, let lon = longitude,
      let seconds = Int(line.drop { $0 != "(" }.dropFirst().prefix { $0.isNumber })
    {
      result.append(PrintedLocation(latitude: lat, longitude: lon, timeOfDay: seconds % 86_400))
      latitude = nil
      longitude = nil
    }
  }
  return result
}

/// The time of day (UTC) of `fix`, in seconds.
private func timeOfDay(_ fix: Fix) -> Int {
  Int(fix.time!.timeIntervalSince1970.rounded(.down)) % 86_400
}

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "needs root: grants root's reader, runs GeoClue as its own user"),
  .enabled(
    if: geoclueInstalled,
    "needs Debian's geoclue-2.0, geoclue-2-demo and dbus (Scripts/install-deps.sh)"))
struct GeoClueTests {
  /// The whole desktop path for real: gpsd on a pty → waymarkd's NMEA socket → GeoClue
  /// (`--nmea-socket`) on a private system bus → its demo client `where-am-i`. Each step sends
  /// fixes, and a granted reader of the same NMEA socket (this process, as root) shows they went
  /// out: with a grant but no agent GeoClue keeps the client waiting and it prints nothing;
  /// without a grant waymarkd refuses GeoClue and the client prints none of our positions; with
  /// both it prints the drive's; after a revocation it prints none of the fixes sent after it.
  @Test func whereAmIPrintsTheDrivesPositionsOnlyWithAGrant() async throws {
    let nmeaSocket = try TemporaryDirectory.socketDirectory() + "/nmea.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "nmea-socket = \(nmeaSocket)\n")
    defer { rig.stop() }
    let geoclueClient = PeerIdentity.userName(getuid()) + ":" + geoclue
    try grant(geoclueClient, "whenInUse", store: rig.store)
    let ourselves = "root:" + String(cString: realpath("/proc/self/exe", nil))
    try grant(ourselves, "always", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>NMEA socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let (bus, address) = try startPrivateSystemBus(in: rig.directory)
    defer { bus.signal(SIGTERM) }
    let connected = "NMEA client \(geoclueClient)"
    /// Waits until waymarkd has let GeoClue in `count` times.
    func waitForGeoClueConnections(_ count: Int) async throws {
      try await eventually("GeoClue connected \(count) times; log:\n\(daemon.logText)") {
        daemon.log.filter {
          $0.contains(connected) && $0.contains("connected: authorizedWhenInUse")
        }.count >= count
      }
    }
    func startGeoClue() async throws -> DaemonProcess {
      let service = try collect(geoclue, ["--nmea-socket=\(nmeaSocket)", "-t", "0"], bus: address)
      try await service.waitForLine { $0.contains("Available accuracy level from GClueNMEASource") }
      return service
    }
    let control = try Listener(path: nmeaSocket, watch: nil)
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let drive = Commute.fixes(homeStay: 20, officeStay: 20)
    let quarter = epochs.count / 4
    let parts = (0..<4).map { part in
      (part * quarter)..<(part == 3 ? epochs.count : (part + 1) * quarter)
    }
    /// Sends part `index` of the drive and waits until the control has read its last GGA.
    func send(_ index: Int) async throws {
      try await rig.send(epochs[parts[index]])
      let clock = Timestamp.format(epochs[parts[index].last!].time).dropFirst(11).prefix(8)
      let gga = "$GPGGA," + clock.replacingOccurrences(of: ":", with: "")
      try await control.wait { $0.contains { $0.hasPrefix(gga) } }
    }
    /// The locations among `lines` of a fix of part `index` of the drive (by time of day).
    func printed(_ lines: [String], of index: Int) -> [PrintedLocation] {
      let times = Set(drive[parts[index]].map(timeOfDay))
      return positions(lines).filter { times.contains($0.timeOfDay) }
    }

    // 1. Granted, but no agent: GeoClue keeps the client waiting (it does not even open the
    // NMEA socket); while the fixes go out, the client prints nothing.
    var service = try await startGeoClue()
    defer { service.signal(SIGTERM) }
    let waiting = try collect(whereAmI, ["-t", "6", "-a", "8"], bus: address)
    try await service.waitForLine { $0.contains("waiting for agent") }
    try await send(0)
    #expect(waiting.isRunning, "where-am-i ended before the fixes went out")
    _ = try await waiting.waitForExit(timeout: .seconds(15))
    #expect(positions(waiting.log).isEmpty, "\(waiting.logText)")

    // 2. An agent, no grant: GeoClue connects (so it got past the agent) and waymarkd refuses
    // it; while the fixes go out, the client prints none of our positions.
    let agent = try collect(geoclueAgent, [], bus: address)
    defer { agent.signal(SIGTERM) }
    var revoke = try CommandRun.waymark(["auth", "revoke", geoclueClient, "--store", rig.store])
    #expect(revoke.status == 0)
    let refused = try collect(whereAmI, ["-t", "5", "-a", "8"], bus: address)
    try await daemon.waitForLine {
      $0.contains("refused " + connected) && $0.contains("notDetermined")
    }
    try await send(1)
    #expect(refused.isRunning, "where-am-i ended before the fixes went out")
    _ = try await refused.waitForExit(timeout: .seconds(15))
    #expect(positions(refused.log).isEmpty, "\(refused.logText)")

    // 3. Granted, with an agent (the positive control of 1 and 2): where-am-i prints the
    // drive's positions. GeoClue 2.6 does not reconnect to an NMEA socket that closed on it, so
    // it is restarted after the grant (as install.sh does).
    try grant(geoclueClient, "whenInUse", store: rig.store)
    service.signal(SIGTERM)
    _ = try await service.waitForExit()
    service = try await startGeoClue()
    let granted = try collect(whereAmI, ["-t", "15", "-a", "8"], bus: address)
    try await waitForGeoClueConnections(1)
    try await send(2)
    try await granted.waitForCount("Longitude:", 3)
    // Each the position of the fix of its time (where-am-i prints 6 decimals; our sentences
    // carry 1e-6 minute).
    let shown = positions(granted.log)
    // The parser reads what where-am-i printed: without this, a changed output format would
    // make every "prints none of our positions" above pass while GeoClue got the fixes.
    #expect(shown.count >= 3, "where-am-i printed 3 locations, parsed \(shown.count)")
    for location in shown {
      let fix = drive[parts[2]].first { timeOfDay($0) == location.timeOfDay }
      #expect(
        fix.map {
          abs($0.coordinate!.latitude - location.latitude) < 1e-6
            && abs($0.coordinate!.longitude - location.longitude) < 1e-6
        } == true, "\(location) is not a position of the drive's third part")
    }

    // 4. Revoked while GeoClue reads: waymarkd closes its connection; of the fixes sent after
    // that, which the control reads, where-am-i prints none. It still runs when they have gone
    // out, and listens until its own -t 15 ends it, about 10 s later; with a grant it printed
    // its first location 0.63 s after the first fix of a part was sent (measured, twice).
    revoke = try CommandRun.waymark(["auth", "revoke", geoclueClient, "--store", rig.store])
    #expect(revoke.status == 0)
    try await daemon.waitForLine {
      $0.contains(connected) && $0.hasSuffix("notDetermined; closed")
    }
    try await send(3)
    #expect(granted.isRunning, "where-am-i ended before the fixes went out")
    _ = try await granted.waitForExit(timeout: .seconds(25))
    #expect(printed(granted.log, of: 3).isEmpty, "\(granted.logText)")
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
