import Foundation
import GPSD
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// `waymark watch`, `status` and `simulate`, through the built binary, against real gpsd.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct GPSDCommandTests {
  let waymark = Products.executable("waymark")

  @Test func statusExits69WhenGPSDIsUnreachable() throws {
    let port = try GPSDHarness.freePort()
    let run = try CommandRun.run(
      waymark, ["status", "127.0.0.1:\(port)", "--socket", "/nonexistent/waymark.sock"])
    #expect(run.status == 69)
    #expect(run.stderr.hasPrefix("Error: gpsd is not reachable at 127.0.0.1:\(port)"))
    // The daemon's part is still printed: the first thing an operator looks at.
    #expect(run.output.hasPrefix("waymarkd  not running (no answer on /nonexistent/waymark.sock)"))
  }

  @Test func watchRejectsABadEndpoint() throws {
    let run = try CommandRun.run(waymark, ["watch", "host:notaport"])
    #expect(run.status == 64)
    #expect(run.stderr.contains("Error: 'host:notaport' is not <host>[:<port>[:<device>]]."))
    #expect(run.stderr.contains("USAGE: waymark watch"))
  }

  @Test func simulateRejectsRateWithSpeedAndAMissingLog() throws {
    let both = try CommandRun.run(waymark, ["simulate", "x.nmea", "--rate", "5", "--speed", "2"])
    #expect(both.status == 64)
    let missing = try CommandRun.run(waymark, ["simulate", "/nonexistent/log.nmea"])
    #expect(missing.status == 66)
    #expect(missing.stderr.contains("/nonexistent/log.nmea"))
  }

  @Test func watchJSONAndStatusReportALiveReceiver() async throws {
    let rig = try await LiveRig.start()
    defer { rig.stop() }
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T12:00:00.000Z")!,
      origin: Coordinate(latitude: 52.52, longitude: 13.405), seed: 1)
    route.rateHz = 2
    route.drive(to: route.origin.offset(by: 200, bearingDegrees: 90), speedMetersPerSecond: 10)
    let fixes = route.fixes()
    let epochs = fixes.map { NMEAWriter.sentences(for: $0) }
    let endpoint = rig.gpsd.endpoint
    let watcher = Task.detached { [waymark] in
      try CommandRun.run(waymark, ["watch", endpoint, "--json", "--count", "5"])
    }
    try await rig.gpsd.waitForWatchers(1)
    let feeder = Task {
      try await rig.receiver.send(epochs: epochs, interval: .milliseconds(50))
    }
    let run = try await watcher.value
    #expect(run.status == 0, "\(run.stderr)")
    let lines = run.output.split(separator: "\n")
    #expect(lines.count == 5)
    #expect(lines.allSatisfy { $0.hasPrefix("{\"class\":\"TPV\",\"mode\":") })
    #expect(lines.allSatisfy { $0.hasSuffix(",\"device\":\"\(rig.receiver.path)\"}") })
    #expect(run.stderr.contains("gpsd \(endpoint): reachable; device \(rig.receiver.path) present"))

    let status = try CommandRun.run(waymark, ["status", endpoint, "--json"])
    _ = try? await feeder.value
    #expect(status.status == 0)
    let first = try #require(status.output.split(separator: "\n").first)
    #expect(
      first.hasPrefix(
        "{\"class\":\"STATUS\",\"gpsd\":\"\(endpoint)\",\"release\":\"3.22\",\"reachable\":true,"
          + "\"devices\":[\"\(rig.receiver.path)\"],\"mode\":3"))
  }

  @Test func simulateDrivesItsOwnGPSD() async throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-simulate-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T08:00:00.000Z")!,
      origin: Coordinate(latitude: 45.0, longitude: 7.0), seed: 2)
    route.drive(to: route.origin.offset(by: 100, bearingDegrees: 0), speedMetersPerSecond: 10)
    let log = directory.appendingPathComponent("drive.nmea")
    try NMEAWriter.log(route.fixes()).write(to: log, atomically: true, encoding: .utf8)
    let expected = NMEALog.decode(Array(try Data(contentsOf: log)), path: log.path).fixes
      .filter(\.isUsable)

    // simulate prints its gpsd address first, then waits for a client's WATCH.
    let process = Process()
    process.executableURL = URL(fileURLWithPath: waymark)
    process.arguments = ["simulate", log.path, "--gpsd", "--rate", "20"]
    let output = Pipe()
    process.standardOutput = output
    process.standardError = FileHandle.nullDevice
    try process.run()
    let firstLine = output.fileHandleForReading.availableLine()
    let announcement = try #require(
      try JSONSerialization.jsonObject(with: Data(firstLine.utf8)) as? [String: Any])
    let address = try #require(announcement["gpsd"] as? String)
    let endpoint = try #require(GPSDEndpoint(parsing: address))
    let source = GPSDSource(configuration: GPSDConfiguration(endpoint: endpoint))
    let received = Collector(source.fixes())
    #expect(await received.wait { $0.contains { $0.sameTimeAndPosition(as: expected.last!) } })
    for fix in expected {
      #expect(received.all.contains { $0.sameTimeAndPosition(as: fix) })
    }
    received.cancel()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
  }
}

extension FileHandle {
  /// Reads up to the first newline (blocking), without the newline.
  fileprivate func availableLine() -> String {
    var bytes: [UInt8] = []
    while true {
      let chunk = readData(ofLength: 1)
      guard let byte = chunk.first, byte != 10 else { break }
      bytes.append(byte)
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
