import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

@Suite struct ReplayCommandTests {
  static var demoLog: String { Products.packageRoot.appendingPathComponent("Demo/drive.nmea").path }

  static func temporaryFile(_ contents: String, name: String = "log.nmea") throws -> String {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-tests-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let url = directory.appendingPathComponent(name)
    try Data(contents.utf8).write(to: url)
    return url.path
  }

  @Test func fixesAreTPVLinesAndByteIdenticalAcrossRuns() throws {
    let first = try CommandRun.waymark(["replay", Self.demoLog, "--fixes"])
    let second = try CommandRun.waymark(["replay", Self.demoLog, "--fixes"])
    #expect(first.status == 0)
    #expect(first.stdout == second.stdout)
    let lines = first.output.split(separator: "\n")
    let decoded = try NMEALog.decodeFile(atPath: Self.demoLog)
    #expect(lines.count == decoded.fixes.count)
    let object = try JSONSerialization.jsonObject(with: Data(lines[0].utf8)) as? [String: Any]
    #expect(object?["class"] as? String == "TPV")
    #expect(object?["mode"] as? Int == 3)
    #expect(object?["time"] as? String == "2026-11-29T07:50:00.000Z")
    #expect(first.stderr.contains("epochs: \(decoded.fixes.count)"))
    #expect(first.stderr.contains("GGA \(decoded.statistics.sentencesByType["GGA"]!)"))
  }

  @Test func summaryCountsBadLinesByKind() throws {
    let path = try Self.temporaryFile(
      NMEAWriter.checksummed("GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
        + "junk\n$GPGGA,120001*00\n")
    let run = try CommandRun.waymark(["replay", path])
    #expect(run.status == 0)
    #expect(run.stdout.isEmpty)
    #expect(run.stderr.contains("bad lines: 2 (bad-checksum 1, junk 1)"))
  }

  @Test func strictExitsWith65NamingFileAndLine() throws {
    let path = try Self.temporaryFile(
      NMEAWriter.checksummed("GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
        + "$GPGGA,120001*00\n")
    let run = try CommandRun.waymark(["replay", path, "--strict"])
    #expect(run.status == 65)
    #expect(run.stderr.contains("\(path):2: checksum does not match"))
  }

  @Test func unreadableFileExits66NamingThePath() throws {
    let run = try CommandRun.waymark(["replay", "/nonexistent/drive.nmea"])
    #expect(run.status == 66)
    #expect(run.stderr.contains("/nonexistent/drive.nmea"))
  }

  @Test(arguments: [
    ["replay"], ["replay", "a", "--bogus"], ["replay", "a", "--speed", "fast"],
    ["replay", "a", "-"], ["replay", "a", "--speed"], ["no-such-command"],
  ])
  func usageErrorsExit64(arguments: [String]) throws {
    let run = try CommandRun.waymark(arguments)
    #expect(run.status == 64)
    #expect(run.stderr.contains("Error:") || run.stderr.contains("USAGE"))
  }

  @Test func helpGoesToStdoutWithExit0() throws {
    let run = try CommandRun.waymark(["replay", "--help"])
    #expect(run.status == 0)
    #expect(run.output.hasPrefix("USAGE: waymark replay <log>"))
    let top = try CommandRun.waymark(["--help"])
    #expect(top.status == 0)
    #expect(top.output.contains("replay"))
  }

  @Test func speedFactorPacesByLogTime() throws {
    // 3 epochs one second apart at 100x: the output is the same as at max speed.
    var text = ""
    for second in 0..<3 {
      text += NMEAWriter.checksummed(
        "GPRMC,12000\(second),A,4807.038,N,01131.000,E,0.0,,230394,,,A")
    }
    let path = try Self.temporaryFile(text)
    let paced = try CommandRun.waymark(["replay", path, "--fixes", "--speed", "100"])
    let fast = try CommandRun.waymark(["replay", path, "--fixes", "--speed=max"])
    #expect(paced.status == 0)
    #expect(paced.stdout == fast.stdout)
    #expect(paced.output.split(separator: "\n").count == 3)
  }

  @Test func standardInputAndDateOption() throws {
    let input = NMEAWriter.checksummed(
      "GPGGA,101010,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    let run = try CommandRun.waymark(
      ["replay", "-", "--fixes", "--date", "2026-02-03"], input: Data(input.utf8))
    #expect(run.status == 0)
    #expect(run.output.contains("\"time\":\"2026-02-03T10:10:10.000Z\""))
  }

  @Test func demoLogIsWhatTheSynthesizerMakesFromTheRoute() throws {
    let route = Products.packageRoot.appendingPathComponent("Demo/drive.route").path
    let run = try CommandRun.waymark(["synthesize", route])
    #expect(run.status == 0)
    #expect(run.stdout == (try Data(contentsOf: URL(fileURLWithPath: Self.demoLog))))
  }

  @Test func synthesizeReportsRouteErrorsWithLine() throws {
    let path = try Self.temporaryFile(
      "start 2026-01-01T00:00:00Z 10 10\ndrive 10.1 abc 5\n", name: "bad.route")
    let run = try CommandRun.waymark(["synthesize", path])
    #expect(run.status == 65)
    #expect(run.stderr.contains("bad.route:2:"))
  }
}
