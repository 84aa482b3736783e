import Foundation
import Testing
import WaymarkTesting

@testable import WaymarkCLI

@Suite struct ReplayProgressTests {
  @Test func lineShowsBarPercentageSizesEpochsAndEvents() {
    let line = ReplayProgress.line(bytes: 500_000, totalBytes: 2_000_000, epochs: 42, events: 3)
    #expect(line == "[#######-----------------------]  25% 0.5/2.0 MB, 42 epochs, 3 events")
    let done = ReplayProgress.line(bytes: 2_000_000, totalBytes: 2_000_000, epochs: 7, events: nil)
    #expect(done.hasPrefix("[" + String(repeating: "#", count: 30) + "] 100%"))
    #expect(!done.contains("events"))
  }

  @Test func noProgressWhenStderrIsNotATerminal() throws {
    let run = try CommandRun.waymark([
      "replay", Products.packageRoot.appendingPathComponent("Demo/drive.nmea").path,
    ])
    #expect(run.status == 0)
    #expect(!run.stderr.contains("%"))
    #expect(!run.stderr.contains("\r"))
  }

  // util-linux's `script` runs the command on a pseudo-terminal, as a person's shell would.
  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/script"),
      "/usr/bin/script (bsdutils) is absent"))
  func progressOnATerminal() throws {
    let log = Products.packageRoot.appendingPathComponent("Demo/drive.nmea").path
    let command = "'\(Products.executable("waymark"))' replay '\(log)'"
    let run = try CommandRun.run("/usr/bin/script", ["-qec", command, "/dev/null"])
    #expect(run.status == 0)
    #expect(run.output.contains("\r[##############################] 100% "))
    #expect(run.output.contains("3904 epochs"))
    #expect(run.output.contains("waymark replay: "))  // the summary follows the bar
  }
}
