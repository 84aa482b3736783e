import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// A fix dated decades ahead, from a hostile gpsd stream (an impostor on gpsd's port,
/// `Tests/Fixtures/hostile/fake-gpsd.py`), in the middle of a drive the daemon records.
@Suite(
  .serialized,
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
    "the gpsd impostor is a python3 script"))
struct FutureFixTests {
  /// 60 fixes a second apart moving east, one dated 2079 (between the 30th and the 31st), then
  /// the rest: gpsd's JSON as the impostor sends it.
  static func lines() -> [String] {
    let start = Timestamp.parse("2026-11-29T08:00:00.000Z")!
    let home = Coordinate(latitude: 52.52, longitude: 13.405)
    func tpv(_ time: Date, _ coordinate: Coordinate) -> String {
      #"{"class":"TPV","device":"/dev/hostile","mode":3,"time":"\#(Timestamp.format(time))","#
        + #""lat":\#(coordinate.latitude),"lon":\#(coordinate.longitude),"altMSL":40.0,"#
        + #""speed":10.0,"track":90.0,"epx":3.0,"epy":3.0,"epv":5.0}"#
    }
    var lines: [String] = []
    for second in 0..<60 {
      let time = start.addingTimeInterval(Double(second))
      lines.append(tpv(time, home.offset(by: Double(second) * 10, bearingDegrees: 90)))
      if second == 29 {
        lines.append(tpv(Timestamp.parse("2079-06-01T12:00:00.000Z")!, home))
      }
    }
    return lines
  }

  /// Runs waymarkd against the impostor with `tolerance` (`fix-time-tolerance`), stops it once
  /// the last fix is in, and returns its log and the stored track's times.
  func run(tolerance: String) async throws -> (log: String, times: [Date]) {
    let directory = try TemporaryDirectory()
    let file = try directory.write("lines", Self.lines().joined(separator: "\n") + "\n")
    let script = Products.packageRoot
      .appendingPathComponent("Tests/Fixtures/hostile/fake-gpsd.py").path
    let impostor = try DaemonProcess(
      executable: "/usr/bin/python3", arguments: [script, file],
      environment: ["PATH": "/usr/bin:/bin"])
    defer { impostor.signal(SIGKILL) }
    try await impostor.waitForLine { !$0.isEmpty }
    let port = try #require(impostor.log.first.flatMap { UInt16($0) })
    try grantAlways(directory: directory.path)
    let config = try directory.write(
      "waymark.conf",
      "gpsd = 127.0.0.1:\(port)\nsave-interval = 3600\nfix-time-tolerance = \(tolerance)\n")
    let daemon = try DaemonProcess(
      arguments: ["--config", config],
      environment: daemonEnvironment(state: directory.path))
    // The last fix has reached the pipeline when the status says so and the log shows the
    // end of the stream: the impostor sends everything at once, so give the loop a moment.
    try await daemon.waitForLine { $0.contains("connected to gpsd") }
    try await Task.sleep(for: .seconds(2))
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0, "\(daemon.logText)")
    let points = try Database(path: directory.file("waymark.db")).read {
      try TrackRepository($0).all()
    }
    return (daemon.logText, points.map(\.timestamp))
  }

  /// The 2079 fix is logged and ignored: the track keeps the drive's first and last minutes
  /// (before: retention counted 30 days back from 2079 and deleted every point before it), and
  /// the fixes after it are recorded. With the tolerance set beyond 2079 (the control: the
  /// check is what keeps the fix out), the fix reaches the track, and the second defence holds:
  /// retention counts back from the system clock, not from the fix, and deletes nothing.
  @Test func aFixDatedDecadesAheadDeletesNothing() async throws {
    let start = Timestamp.parse("2026-11-29T08:00:00.000Z")!
    let guarded = try await run(tolerance: "86400")
    #expect(guarded.log.contains("ignored a fix dated 2079-06-01T12:00:00.000Z"), "\(guarded.log)")
    #expect(guarded.times.contains { $0 < start.addingTimeInterval(30) }, "\(guarded.times)")
    #expect(guarded.times.contains { $0 >= start.addingTimeInterval(50) }, "\(guarded.times)")
    #expect(!guarded.times.contains { $0 > start.addingTimeInterval(3600) })

    let open = try await run(tolerance: "10000000000")
    #expect(!open.log.contains("ignored a fix dated"))
    #expect(open.times.contains { $0 > start.addingTimeInterval(3600) }, "\(open.times)")
    #expect(open.times.contains { $0 < start.addingTimeInterval(30) }, "\(open.times)")
  }
}
