import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// The iOS programs of Tests/Fixtures/corelocation (compiled with only their import line
/// changed) against a real waymarkd following a real gpsd, where `CoreLocationProgramTests` runs
/// them against a log: the same callbacks in the same order, for the same drive.
@Suite(
  .serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: CoreLocationProgram.isBuilt, "WaymarkCoreLocation is not built"))
struct CoreLocationDaemonTests {
  /// A daemon on its own socket, the program compiled and granted `whenInUse` by the daemon,
  /// and the program started against it (`WAYMARK_SOCKET`), its stdout in its log (a line at a
  /// time: stdbuf).
  static func start(_ name: String, scratch: ScratchDirectory) async throws -> (
    rig: DaemonRig, daemon: DaemonProcess, program: DaemonProcess, socket: String
  ) {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    let program = try CoreLocationProgram.compile(name, into: scratch.url.path)
    try grant("root:" + String(cString: realpath(program, nil)), "whenInUse", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let environment = [
      "PATH": "/usr/bin:/bin", "HOME": scratch.path("home"),
      "XDG_STATE_HOME": scratch.path("state"), "WAYMARK_SOCKET": socketPath,
    ]
    let process = try DaemonProcess(
      executable: "/bin/sh", arguments: ["-c", "exec stdbuf -oL '\(program)' 1>&2"],
      environment: environment)
    return (rig, daemon, process, socketPath)
  }

  /// The drive of `CoreLocationProgramTests`: Home for 3 minutes, Office for 1, then beyond.
  static let epochs = Commute.epochs(homeStay: 180, officeStay: 60)

  @Test func aDelegateAppGetsTheSameCallbacksFromTheDaemonAsFromALog() async throws {
    let scratch = try ScratchDirectory("corelocation-daemon")
    let (rig, daemon, app, socket) = try await Self.start("DelegateApp", scratch: scratch)
    defer { rig.stop() }
    try await waitForDaemonWatchers(1, socketPath: socket)
    try await rig.send(Self.epochs)
    try await app.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("visit departed") }
    app.signal(SIGTERM)
    _ = try await app.waitForExit()
    // What the log run prints (CoreLocationProgramTests), but for the source: gpsd's fixes are
    // produced by an accessory, not simulated by software; the daemon's drive does not end, so
    // no locationUnknown. Every location delivered has an accuracy: gpsd 3.22 reports `eph`
    // without `epx`/`epy`, which the GPSD source once dropped (libgps's HERR_SET unset), and a
    // location with horizontalAccuracy −1 is invalid to iOS: this program then got none.
    let lines = app.log.filter { !$0.isEmpty }
    #expect(
      Array(lines.prefix(13)) == [
        "heading false", "ranging false", "circles true", "authorization authorizedWhenInUse",
        "monitoring home", "state home unknown",
        "first accuracy true speedValid true simulated false", "enter home", "state home inside",
        "visit arrived", "exit home", "state home outside", "visit departed 179",
      ], "\(app.logText)")
    #expect(!app.logText.contains("heading update") && !app.logText.contains("failure"))
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  @Test func liveUpdatesAndAMonitorFollowTheDaemonAsTheyFollowALog() async throws {
    let scratch = try ScratchDirectory("corelocation-daemon")
    let (rig, daemon, app, socket) = try await Self.start("LiveUpdates", scratch: scratch)
    defer { rig.stop() }
    // The program's live updates and its monitor's: two watchers.
    try await waitForDaemonWatchers(2, socketPath: socket)
    try await rig.send(Self.epochs)
    try await app.waitForLine(timeout: .seconds(60)) { $0 == "event home unsatisfied" }
    app.signal(SIGTERM)
    _ = try await app.waitForExit()
    // The log run's lines (CoreLocationProgramTests) up to Home's exit: the session not
    // denied, the beacon unsupported at once, Home entered then left.
    let lines = app.log.filter { !$0.isEmpty && !$0.hasPrefix("diagnosis ") }
    #expect(
      lines == [
        "session denied=false", "event beacon unmonitored unsupported=true persistence=false",
        "event home satisfied", "event home unsatisfied",
      ], "\(app.logText)")
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  @Test func geocodingTheDaemonsLocationNamesItsTown() async throws {
    let scratch = try ScratchDirectory("corelocation-daemon")
    let (rig, daemon, app, socket) = try await Self.start("Geocoding", scratch: scratch)
    defer { rig.stop() }
    try await waitForDaemonWatchers(1, socketPath: socket)
    try await rig.send(Self.epochs.prefix(20))
    #expect(try await app.waitForExit() == 0)
    #expect(
      app.log.filter { !$0.isEmpty } == [
        "geocoding false", "geocoding true", "current Berlin Mitte DE Germany Europe/Berlin",
        "address Zürich 47.37 8.55", "ocean geocodeFoundNoResult true", "cancelled true",
        "async New York City NY",
      ], "\(app.logText)")
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
