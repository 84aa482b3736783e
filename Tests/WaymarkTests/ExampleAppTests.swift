import Foundation
import Testing
import WaymarkTesting

/// The example's executable, where `swift build --package-path Examples/LocationApp` puts it.
private let exampleApp = Products.packageRoot
  .appendingPathComponent("Examples/LocationApp/.build/debug/location-app").path

/// `Examples/LocationApp`, a package of its own that depends on Waymark by path: it builds from
/// the exported products alone, and its `LocationManager` over `NMEAReplay` gives the locations
/// of `waymark replay --fixes`.
///
/// `Scripts/test.sh` builds the example (`swift build --package-path Examples/LocationApp`,
/// about 20 s from clean) before `swift test`; without that build these tests are skipped.
@Suite(
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: exampleApp),
    "Examples/LocationApp is not built: run swift build --package-path Examples/LocationApp"))
struct ExampleAppTests {
  /// The demo drive has a time and a position in each of its 3,904 epochs, so the manager
  /// (no filters) delivers one location per `TPV` of `waymark replay --fixes`.
  @Test func replayPrintsOneLocationPerFixOfTheDemoDrive() throws {
    let log = Products.packageRoot.appendingPathComponent("Demo/drive.nmea").path
    let app = try CommandRun.run(exampleApp, ["replay", log])
    #expect(app.status == 0, "\(app.stderr)")
    let locations = app.output.split(separator: "\n").map { $0.split(separator: " ") }
    #expect(locations.count == 3904)
    #expect(locations.allSatisfy { $0.count == 4 })

    let reference = try CommandRun.waymark(["replay", log, "--fixes"])
    #expect(reference.status == 0, "\(reference.stderr)")
    let fixes = try reference.output.split(separator: "\n").map { line in
      try #require(
        JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], "\(line)")
    }
    #expect(locations.count == fixes.count)
    for (location, fix) in [(locations.first, fixes.first), (locations.last, fixes.last)] {
      let location = try #require(location)
      let fix = try #require(fix)
      #expect(location.first.map(String.init) == fix["time"] as? String)
      let latitude = try #require(Double(location[1]))
      let longitude = try #require(Double(location[2]))
      #expect(abs(latitude - (try #require(fix["lat"] as? Double))) < 1e-9)
      #expect(abs(longitude - (try #require(fix["lon"] as? Double))) < 1e-9)
    }
  }

  @Test func unreadableLogExits66() throws {
    let app = try CommandRun.run(exampleApp, ["replay", "/nonexistent/drive.nmea"])
    #expect(app.status == 66)
    #expect(app.output.isEmpty)
    #expect(app.stderr.contains("cannot read"))
  }

  /// Through the daemon, with no daemon listening: a clear error and 69 (service unavailable).
  /// (With a daemon: `DaemonLocationManagerTests` in WaymarkDaemonTests.)
  @Test func daemonWithoutADaemonExits69() throws {
    let app = try CommandRun.run(exampleApp, ["daemon", "/nonexistent/waymark.sock"])
    #expect(app.status == 69)
    #expect(app.stderr.contains("cannot connect to waymarkd at /nonexistent/waymark.sock"))
  }

  @Test func usageErrorsExit64AndHelpExits0() throws {
    let bare = try CommandRun.run(exampleApp, [])
    #expect(bare.status == 64)
    #expect(bare.stderr.hasPrefix("Error: "))
    let help = try CommandRun.run(exampleApp, ["--help"])
    #expect(help.status == 0)
    #expect(help.output.hasPrefix("Usage: location-app replay"))
  }
}
