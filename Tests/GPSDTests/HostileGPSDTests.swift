import Foundation
import GPSD
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// gpsd's port answered by an impostor (a remote gpsd, anyone in its path, or a local user who
/// binds the port while gpsd does not hold it): values no receiver produces go through the real
/// libgps into the session, which drops each one where it enters instead of trapping later.
@Suite(.serialized) struct HostileGPSDTests {
  /// The impostor (`Tests/Fixtures/hostile/fake-gpsd.py`) sending `lines` after the WATCH.
  final class Impostor {
    let processID: pid_t
    let port: UInt16
    let file = NSTemporaryDirectory() + "hostile-gpsd-\(UUID().uuidString)"

    init(lines: [String]) throws {
      try (lines.joined(separator: "\n") + "\n").write(
        toFile: file, atomically: true, encoding: .utf8)
      let script = Products.packageRoot
        .appendingPathComponent("Tests/Fixtures/hostile/fake-gpsd.py").path
      let child = try ChildProcess.startWithStderrPipe(
        ["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"])
      processID = child.processID
      defer { close(child.stderr) }
      // Its first line is the port (a bounded read: the script prints it before anything else).
      var line: [UInt8] = []
      var byte: UInt8 = 0
      while read(child.stderr, &byte, 1) == 1, byte != 10, line.count < 16 { line.append(byte) }
      port = try #require(UInt16(String(decoding: line, as: UTF8.self)))
    }

    func stop() {
      kill(processID, SIGKILL)
      var status: Int32 = 0
      waitpid(processID, &status, 0)
      try? FileManager.default.removeItem(atPath: file)
    }
  }

  static func tpv(_ members: String) -> String {
    #"{"class":"TPV","device":"/dev/hostile","mode":3,"# + members + "}"
  }

  /// A time whose fraction has 30 digits, one whose fraction is `9e300` (libgps's seconds and
  /// nanoseconds then hold garbage: the session before these checks made it a fix of 1734 with a
  /// negative time of day), a time in the year 30000, a latitude of 95, and speed, altitude, course, climb and errors of ±1e300: each
  /// value is dropped (the fix keeps its other fields), nothing traps, and a sane fix after them
  /// comes through whole (the positive control: the same fields pass when they are physical).
  @Test func extremeValuesAreDroppedWhereTheyEnter() async throws {
    let impostor = try Impostor(lines: [
      Self.tpv(
        #""time":"2026-12-05T10:00:00.123456789012345678901234567890Z","lat":45.0,"lon":4.8"#),
      Self.tpv(
        #""time":"2026-12-05T10:00:01.000Z","lat":45.01,"lon":4.81,"speed":1e300,"#
          + #""altMSL":1e300,"track":1e300,"climb":-1e300,"eph":1e300,"epx":1e300,"epy":1e300,"epv":1e300,"eps":1e300"#
      ),
      Self.tpv(#""time":"30000-01-01T00:00:00.000Z","lat":45.02,"lon":4.82"#),
      Self.tpv(#""time":"2026-12-05T10:00:03.9e300Z","lat":45.03,"lon":4.83"#),
      Self.tpv(#""time":"2026-12-05T10:00:02.000Z","lat":95.0,"lon":4.83,"speed":1.0"#),
      Self.tpv(
        #""time":"2026-12-05T10:00:05.000Z","lat":45.1,"lon":4.9,"speed":3.5,"altMSL":200.0,"#
          + #""track":90.0,"climb":0.5,"eph":4.0,"epx":3.0,"epy":4.0,"epv":6.0,"eps":0.3"#),
    ])
    defer { impostor.stop() }
    let source = GPSDSource(
      configuration: GPSDConfiguration(
        endpoint: GPSDEndpoint(host: "127.0.0.1", port: impostor.port),
        receiveTimeout: .seconds(10)))
    let fixes = Collector(source.fixes())
    defer { fixes.cancel() }
    let arrived = await fixes.wait {
      $0.contains { $0.coordinate?.latitude == 45.1 }
    }
    #expect(arrived, "the sane fix after the hostile ones: \(fixes.all)")
    let all = fixes.all
    let bounds = Fix.Limits.earliestSeconds1970..<Fix.Limits.latestSeconds1970
    for fix in all {
      if let time = fix.time { #expect(bounds.contains(time.timeIntervalSince1970), "\(fix)") }
    }
    let huge = try #require(all.first { $0.coordinate?.latitude == 45.01 })
    #expect(huge.time == Timestamp.parse("2026-12-05T10:00:01.000Z"))
    #expect(huge.speed == nil && huge.altitudeMSL == nil && huge.track == nil, "\(huge)")
    #expect(huge.climb == nil && huge.horizontalError == nil && huge.verticalError == nil)
    #expect(huge.speedError == nil)
    let future = try #require(all.first { $0.coordinate?.latitude == 45.02 })
    #expect(future.time == nil, "\(future)")
    #expect(!all.contains { ($0.coordinate?.latitude ?? 0) > 90 })
    let sane = try #require(all.first { $0.coordinate?.latitude == 45.1 })
    #expect(sane.time == Timestamp.parse("2026-12-05T10:00:05.000Z"))
    #expect(sane.speed == 3.5 && sane.altitudeMSL == 200 && sane.track == 90, "\(sane)")
    #expect(sane.climb == 0.5 && sane.horizontalError == 4 && sane.verticalError == 6, "\(sane)")
    #expect(sane.speedError == 0.3)
  }
}
