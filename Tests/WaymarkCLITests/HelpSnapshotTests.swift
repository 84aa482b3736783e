import Foundation
import Testing
import WaymarkTesting

/// The full `--help` of commands that scripts depend on, as the built `waymark` prints it (stdout,
/// exit 0), against the snapshots in `Tests/Snapshots/waymark-<command>-help.txt`: a change to a
/// help text is made there too, on purpose. `WAYMARK_RECORD_SNAPSHOTS=1` rewrites them.
@Suite struct HelpSnapshotTests {
  static func snapshot(_ command: String) -> URL {
    Products.packageRoot.appendingPathComponent("Tests/Snapshots/waymark-\(command)-help.txt")
  }

  @Test(arguments: ["places", "visits", "stamp", "track", "map", "import"])
  func helpIsTheSnapshot(command: String) throws {
    let run = try CommandRun.waymark([command, "--help"])
    #expect(run.status == 0)
    #expect(run.stderr.isEmpty)
    if ProcessInfo.processInfo.environment["WAYMARK_RECORD_SNAPSHOTS"] == "1" {
      try run.stdout.write(to: Self.snapshot(command))
    }
    let expected = try String(contentsOf: Self.snapshot(command), encoding: .utf8)
    #expect(run.output == expected)
    // `waymark help <command>` prints the same text.
    #expect(try CommandRun.waymark(["help", command]).output == run.output)
  }

  @Test func theCommandListSaysVisitsDeletes() throws {
    let run = try CommandRun.waymark(["--help"])
    #expect(run.status == 0)
    #expect(
      run.output.contains(
        "  visits      Print, record and delete visits (ndjson, geojson, gpx, csv, text).\n"))
  }
}
