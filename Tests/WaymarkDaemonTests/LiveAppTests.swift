import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// The example's executable, where `swift build --package-path Examples/LiveApp` puts it.
private let liveApp = Products.packageRoot
  .appendingPathComponent("Examples/LiveApp/.build/debug/live-app").path

/// `Examples/LiveApp`: iOS 17 code (`CLLocationUpdate.liveUpdates()`, a `CLMonitor` with two
/// circles, Home and 1 km east of it) whose only change is its import. Run as a program of its
/// own, against a log (`WAYMARK_SIMULATED_LOG`) and against a real waymarkd following a real
/// gpsd (`WAYMARK_SOCKET`), each time stopped in the middle and started again: the second run
/// starts from the records the first one left, and the two print the events of one run.
///
/// `Scripts/test.sh` builds the example before `swift test`; without that build these tests are
/// skipped.
@Suite(
  .serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: liveApp),
    "Examples/LiveApp is not built: run swift build --package-path Examples/LiveApp"))
struct LiveAppTests {
  /// The Commute drive: Home 60 s, Office 60 s, then 400 m beyond.
  static let fixes = Commute.fixes(homeStay: 60, officeStay: 60)
  /// The first fix at Office plus 45 s (of its 60): the first run stops there.
  static let cut: Int = {
    let office = fixes.firstIndex { $0.coordinate!.distance(to: Commute.office) < 20 }!
    return office + 45
  }()

  static func environment(state: String, _ extra: [String: String]) -> [String: String] {
    ["PATH": "/usr/bin:/bin", "HOME": state, "XDG_STATE_HOME": state].merging(extra) { $1 }
  }

  /// The lines of `output` that start with `prefix`, without it.
  static func lines(_ output: String, _ prefix: String) -> [String] {
    output.split(separator: "\n").filter { $0.hasPrefix(prefix + " ") }
      .map { String($0.dropFirst(prefix.count + 1)) }
  }

  /// Event lines without their dates.
  static func states(_ events: [String]) -> [String] {
    events.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
  }

  @Test func aLogRunStoppedAtTheOfficeResumesWhereItStopped() throws {
    let state = try TemporaryDirectory()
    let first = try state.write(
      "first.nmea", Self.fixes.prefix(Self.cut).flatMap { NMEAWriter.sentences(for: $0) }.joined())
    let whole = try state.write(
      "whole.nmea", Self.fixes.flatMap { NMEAWriter.sentences(for: $0) }.joined())
    let grant = try CommandRun.waymark(
      ["auth", "grant", "live-app", "whenInUse", "--state-dir", state.file("waymark")])
    #expect(grant.status == 0, "\(grant.stderr)")

    let one = try CommandRun.run(
      liveApp, [],
      environment: Self.environment(state: state.path, ["WAYMARK_SIMULATED_LOG": first]))
    #expect(one.status == 0, "\(one.stderr)")
    #expect(Self.lines(one.output, "record") == ["home unsatisfied", "office unsatisfied"])
    let oneEvents = Self.lines(one.output, "event")
    #expect(Self.states(oneEvents) == ["home satisfied", "home unsatisfied", "office satisfied"])
    #expect(Self.lines(one.output, "stationary").map { $0.prefix(4) } == ["true", "fals", "true"])
    #expect(Self.lines(one.output, "locations") == ["\(Self.cut)"], "\(one.output)")

    // The whole log again: what the first run saw is not seen twice.
    let two = try CommandRun.run(
      liveApp, [],
      environment: Self.environment(state: state.path, ["WAYMARK_SIMULATED_LOG": whole]))
    #expect(two.status == 0, "\(two.stderr)")
    #expect(Self.lines(two.output, "record") == ["home unsatisfied", "office satisfied"])
    #expect(Self.states(Self.lines(two.output, "event")) == ["office unsatisfied"])

    // The dates are fix times: Home entered during its stay, left after it.
    let homeArrival = Commute.start.addingTimeInterval(30)
    let firstDate = try #require(oneEvents.first?.split(separator: " ").last)
    let entered = try #require(ISO8601DateFormatter().date(from: String(firstDate)))
    #expect(abs(entered.timeIntervalSince(homeArrival)) < 15, "\(oneEvents)")

    // Control: a fresh state directory over the whole log prints all four at once.
    let fresh = try TemporaryDirectory()
    let grantFresh = try CommandRun.waymark(
      ["auth", "grant", "live-app", "whenInUse", "--state-dir", fresh.file("waymark")])
    #expect(grantFresh.status == 0)
    let all = try CommandRun.run(
      liveApp, [],
      environment: Self.environment(state: fresh.path, ["WAYMARK_SIMULATED_LOG": whole]))
    #expect(
      Self.lines(all.output, "event") == oneEvents + Self.lines(two.output, "event"),
      "\(all.output)")
  }

  @Test func againstARealDaemonStoppedAtTheOfficeResumesWhereItStopped() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let app = String(cString: realpath(liveApp, nil))
    try grant("root:" + app, "whenInUse", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let state = try TemporaryDirectory()
    let environment = Self.environment(state: state.path, ["WAYMARK_SOCKET": socketPath])
    func start() throws -> DaemonProcess {
      try DaemonProcess(
        executable: "/bin/sh", arguments: ["-c", "exec '\(app)' 1>&2"], environment: environment)
    }
    let epochs = Self.fixes.map { Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0)) }

    // First run: live updates and the monitor's own session, two watchers; to the office.
    let first = try start()
    try await waitForDaemonWatchers(2, socketPath: socketPath)
    try await rig.send(epochs.prefix(Self.cut))
    try await first.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("event office satisfied") }
    #expect(Self.lines(first.logText, "record") == ["home unsatisfied", "office unsatisfied"])
    #expect(
      Self.states(Self.lines(first.logText, "event"))
        == ["home satisfied", "home unsatisfied", "office satisfied"], "\(first.logText)")
    #expect(
      Self.lines(first.logText, "stationary").map { $0.prefix(4) }.starts(with: ["true", "fals"]))
    first.signal(SIGTERM)
    _ = try await first.waitForExit()

    // Second run: the records the first left; the rest of the drive gives the office's exit.
    let second = try start()
    try await second.waitForLine { $0.hasPrefix("record office") }
    #expect(Self.lines(second.logText, "record") == ["home unsatisfied", "office satisfied"])
    try await waitForDaemonWatchers(2, socketPath: socketPath)
    try await rig.send(epochs.dropFirst(Self.cut))
    try await second.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("event office unsatisfied") }
    #expect(Self.states(Self.lines(second.logText, "event")) == ["office unsatisfied"])
    second.signal(SIGTERM)
    _ = try await second.waitForExit()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}

/// The README's claim that `Examples/LiveApp` is iOS code with only its import changed: the
/// program's code (comments aside) imports Foundation and `WaymarkCoreLocation` and names no
/// type by Waymark's own names, only CoreLocation's; the README shows that import as the diff.
struct LiveAppSourceTests {
  static let waymarkNamePattern =
    #"\b(Monitor|LocationUpdate|Location|Coordinate|LiveSource|Stay|Waymark[A-Za-z]*)\b"#

  /// The code lines of a Swift file: no comments, no blank lines.
  static func code(_ path: String) throws -> [String] {
    try String(
      contentsOfFile: Products.packageRoot.appendingPathComponent(path).path, encoding: .utf8
    )
    .split(separator: "\n")
    .map { line in line.range(of: "//").map { String(line[..<$0.lowerBound]) } ?? String(line) }
    .map { $0.trimmingCharacters(in: .whitespaces) }
    .filter { !$0.isEmpty }
  }

  /// The Waymark-only names a file's code uses (its import lines aside).
  static func waymarkNames(in lines: [String]) throws -> [String] {
    let waymarkNames = try Regex(waymarkNamePattern)
    return lines.filter { !$0.hasPrefix("import ") }.flatMap { line in
      line.matches(of: waymarkNames).map { String(line[$0.range]) }
    }
  }

  @Test func theExampleDiffersFromItsIOSSourceOnlyInItsImport() throws {
    let live = try Self.code("Examples/LiveApp/Sources/live-app/LiveApp.swift")
    #expect(
      live.filter { $0.hasPrefix("import ") } == [
        "import Foundation", "import WaymarkCoreLocation",
      ])
    let found = try Self.waymarkNames(in: live)
    #expect(found == [])
    // Control: the Monitor example is written with Waymark's names, and the check sees them.
    let monitor = try Self.code("Examples/MonitorApp/Sources/monitor-app/MonitorApp.swift")
    let control = Set(try Self.waymarkNames(in: monitor))
    #expect(control.isSuperset(of: ["Monitor", "Coordinate", "Location"]), "\(control)")
    let readme = try String(
      contentsOfFile: Products.packageRoot.appendingPathComponent("README.md").path, encoding: .utf8
    )
    #expect(readme.contains("```diff\n-import CoreLocation\n+import WaymarkCoreLocation"))
  }
}
