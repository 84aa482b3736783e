import Foundation
import NMEA
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// Attacks on `nmea-tcp`, whose peers the kernel does not name: each attacker a system user of
/// its own, against the real waymarkd following a real gpsd.
@Suite(
  .serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: getuid() == 0, "runs attackers as other users (root only)"))
struct NMEATCPAttackTests {
  /// A program that makes a socket, forks, and runs a granted file (`/usr/bin/sleep`) in the
  /// parent while the child connects the inherited socket is not served under the granted
  /// file's name: two programs hold the socket, so which one speaks cannot be told. The
  /// control, the same script connecting alone for a user whose Python is granted, reads the
  /// drive's sentences.
  @Test func aChildOfAGrantedFileIsNotServedUnderItsName() async throws {
    let port = try GPSDHarness.freePort()
    let rig = try await DaemonRig.start(places: [], extraConfig: "nmea-tcp = 127.0.0.1:\(port)\n")
    defer { rig.stop() }
    let sleep = String(cString: realpath("/usr/bin/sleep", nil))
    try grant("wmtest-i:\(sleep)", "always", store: rig.store)
    try grant(pythonClient("wmtest-j"), "always", store: rig.store)
    let script = try attackerScript()
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>NMEA on TCP 127.0.0.1:\(port)") }
    try await rig.gpsd.waitForWatchers(1)
    let forked = try attack("wmtest-i", script, ["tcpinherit", "\(port)", "fork", "20"])
    let alone = try attack("wmtest-j", script, ["tcpinherit", "\(port)", "alone", "20"])
    try await forked.waitForLine { $0 == "connected" }
    try await alone.waitForLine { $0 == "connected" }
    try await daemon.waitForLine { $0.contains("NMEA client \(pythonClient("wmtest-j"))") }
    let drive = longDrive(minutes: 1).prefix(20)
    try await rig.send(drive)
    let lastClock = String(Timestamp.format(drive.last!.time).dropFirst(11).prefix(8))
      .replacingOccurrences(of: ":", with: "")
    try await alone.waitForLine { $0.hasPrefix("$GPGGA,\(lastClock)") }
    // Closed by the daemon (bounded: it read on until the end of its 20 s if it was served).
    _ = try? await forked.waitForLine(timeout: .seconds(5)) { $0.hasPrefix("tcpinherit ") }
    let leaked = forked.log.filter { $0.hasPrefix("$") }
    print("forked child: \(leaked.count) sentences, \(forked.log.last ?? "")")
    #expect(leaked.count == 0, "the forked child read \(leaked.count) sentences")
    #expect(forked.log.last == "tcpinherit closed", "\(forked.log.last ?? "no output")")
    #expect(
      daemon.log.contains {
        $0.contains("refused an NMEA TCP connection") && $0.contains("different programs")
      })
    #expect(alone.log.filter { $0.hasPrefix("$GPGGA") }.count >= drive.count - 1)
    #expect(!daemon.log.contains { $0.contains("NMEA client wmtest-i:") })
    alone.signal(SIGTERM)
    forked.signal(SIGTERM)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// A user holding every descriptor its hard limit allows and connecting to `nmea-tcp` as fast
  /// as it can (each connection a long search of its descriptors) does not hold up the other
  /// clients: a granted watcher of the location socket keeps at least 90 % of its calm fix rate
  /// with no gap over 2 s, while the storm is shown to be on (its connections counted, the
  /// daemon's refusals logged).
  @Test func aConnectStormDoesNotStallTheWatchers() async throws {
    let port = try GPSDHarness.freePort()
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "socket = \(socketPath)\nnmea-tcp = 127.0.0.1:\(port)\n")
    defer { rig.stop() }
    try grantOurselves(store: rig.store)
    let script = try attackerScript()
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>NMEA on TCP 127.0.0.1:\(port)") }
    try await rig.gpsd.waitForWatchers(1)
    let watcher = try TimedListener(path: socketPath)
    let drive = longDrive(minutes: 3)
    let calm = Array(drive[0..<70])
    let stormed = Array(drive[70..<140])
    try await Task.sleep(for: .milliseconds(300))  // the WATCH reaches the daemon

    try await rig.receiver.send(epochs: calm.map(\.lines), interval: .milliseconds(100))
    try await watcher.wait { watcher.has(calm.last!.time) }
    let storm = try attack("wmtest-k", script, ["tcpstorm", "\(port)", "12"])
    let holding = try await storm.waitForLine(timeout: .seconds(30)) {
      $0.hasPrefix("holding ")
    }
    try await storm.waitForLine(timeout: .seconds(30)) { $0 == "storm on" }
    let stormStart = ContinuousClock.now
    try await rig.receiver.send(epochs: stormed.map(\.lines), interval: .milliseconds(100))
    try? await watcher.wait(timeout: .seconds(10)) { watcher.has(stormed.last!.time) }
    let (calmCount, stormCount, gap) = watcher.received(
      calm: calm, loaded: stormed, loadStart: stormStart)
    let ended = try await storm.waitForLine(timeout: .seconds(20)) {
      $0.hasPrefix("tcpstorm ended after ")
    }
    let connections = Int(ended.split(separator: " ")[3]) ?? 0
    print(
      "tcp storm (\(holding)): calm \(calmCount)/\(calm.count), stormed "
        + "\(stormCount)/\(stormed.count), largest gap \(gap), \(connections) connections")
    #expect(calmCount >= calm.count - 2)
    #expect(Double(stormCount) >= 0.9 * Double(calmCount))
    #expect(gap <= .seconds(2))
    // The storm was on: many connections in its 12 s, most refused at accept by the limit of
    // connections waiting to be identified (8 per address), before any read of /proc.
    #expect(connections >= 100, "\(ended)")
    #expect(
      daemon.log.contains {
        $0.contains("NMEA TCP connection(s): too many waiting to be identified")
      })
    storm.signal(SIGKILL)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
