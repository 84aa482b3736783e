import Foundation
import Testing
import Waymark
import WaymarkTesting

/// The example's executable, where `swift build --package-path Examples/MonitorApp` puts it.
private let monitorApp = Products.packageRoot
  .appendingPathComponent("Examples/MonitorApp/.build/debug/monitor-app").path

/// `Examples/MonitorApp`, an iOS-17-style program on `Monitor` (two circles, added on the
/// first run only), run over the drive of `MonitorTests` written as NMEA logs: once over the
/// whole log, and in another state directory twice, over each half in turn. The second run
/// starts from the records the first left and the two runs print the events of the one run.
///
/// `Scripts/test.sh` builds the example (`swift build --package-path Examples/MonitorApp`)
/// before `swift test`; without that build these tests are skipped.
@Suite(
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: monitorApp),
    "Examples/MonitorApp is not built: run swift build --package-path Examples/MonitorApp"))
struct MonitorAppTests {
  /// Runs the example over `log` with its state in `state`.
  private func run(_ log: URL, state: URL) throws -> (records: [String], events: [String]) {
    let app = try CommandRun.run(
      monitorApp, [log.path],
      environment: ["XDG_STATE_HOME": state.path, "HOME": state.path, "PATH": "/usr/bin:/bin"])
    #expect(app.status == 0, "\(app.stderr)")
    let lines = app.output.split(separator: "\n").map(String.init)
    return (
      lines.filter { $0.hasPrefix("record ") }.map { String($0.dropFirst(7)) },
      lines.filter { $0.hasPrefix("event ") }.map { String($0.dropFirst(6)) }
    )
  }

  @Test func aSecondRunResumesWhereTheFirstStopped() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let fixes = MonitorDrive.fixes
    let half = fixes.count / 2
    var logs: [URL] = []
    for (name, part) in [
      ("whole", fixes[...]), ("first", fixes[..<half]), ("second", fixes[half...]),
    ] {
      let log = directory.appendingPathComponent("\(name).nmea")
      try Data(NMEAWriter.log(Array(part)).utf8).write(to: log)
      logs.append(log)
    }

    // One run over the whole drive: both circles entered and left, from assumed states.
    let once = directory.appendingPathComponent("once")
    let whole = try run(logs[0], state: once)
    #expect(whole.records == ["home unsatisfied -", "office unsatisfied -"])
    #expect(
      whole.events.map { $0.split(separator: " ").prefix(2).joined(separator: " ") }
        == MonitorDrive.expected.map { "\($0.0) \($0.1)" })

    // Two runs, one per half: the second starts from the first's last events.
    let twice = directory.appendingPathComponent("twice")
    let first = try run(logs[1], state: twice)
    #expect(first.records == whole.records)
    #expect(!first.events.isEmpty && first.events.count < whole.events.count)
    let second = try run(logs[2], state: twice)
    let lastEvents = ["home", "office"].map { identifier in
      first.events.last { $0.hasPrefix("\(identifier) ") } ?? "\(identifier) unsatisfied -"
    }
    #expect(second.records == lastEvents)
    #expect(first.events + second.events == whole.events)

    // The whole log once more: nothing new, from the final states.
    let third = try run(logs[0], state: twice)
    #expect(third.events.isEmpty, "\(third.events)")
    #expect(
      third.records
        == ["home", "office"].map { identifier in
          whole.events.last { $0.hasPrefix("\(identifier) ") } ?? ""
        })
    let saved = twice.appendingPathComponent("waymark/monitors/monitor-app.json")
    #expect(FileManager.default.fileExists(atPath: saved.path))
  }

  @Test func usageErrorsExit64AndAnUnreadableLog66() throws {
    let bare = try CommandRun.run(monitorApp, [])
    #expect(bare.status == 64)
    #expect(bare.stderr.hasPrefix("Error: "))
    let help = try CommandRun.run(monitorApp, ["--help"])
    #expect(help.status == 0)
    #expect(help.output.hasPrefix("Usage: monitor-app"))
    let missing = try CommandRun.run(monitorApp, ["/nonexistent/drive.nmea"])
    #expect(missing.status == 66)
    #expect(missing.stderr.contains("cannot read"))
  }
}
