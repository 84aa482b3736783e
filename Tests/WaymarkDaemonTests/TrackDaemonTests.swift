import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct TrackDaemonTests {
  static let start = Timestamp.parse("2026-11-29T08:00:00.000Z")!

  /// East at 6 m/s for 60.5 s (fixes at 0...60 s), a fix loss of 20 s, 70 s standing still
  /// (81...150 s) and a last fix (151 s). The default rule (10 m or 30 s from the last kept
  /// point, a new segment after more than 10 s without a fix) keeps 0, 2, …, 60 s in segment 1
  /// and 81, 111, 141 s in segment 2: 34 points.
  static func drive() -> [Fix] {
    let origin = Coordinate(latitude: 52.52, longitude: 13.405)
    var route = RouteSynthesizer(start: start, origin: origin, seed: 9)
    route.drive(to: origin.offset(by: 363, bearingDegrees: 90), speedMetersPerSecond: 6)
    route.gap(seconds: 20)
    route.stop(seconds: 70)
    return route.fixes()
  }

  static let expected =
    stride(from: 0, through: 60, by: 2).map { "\($0) 1" } + ["81 2", "111 2", "141 2"]

  /// The CSV export of `store` as "seconds segment" per point, and the coordinates.
  static func exported(_ store: String) throws -> (points: [String], coordinates: [Coordinate]) {
    let run = try CommandRun.waymark(["track", "export", "--store", store, "--format", "csv"])
    guard run.status == 0 else {
      throw TestFailure(description: "waymark track export: \(run.status) \(run.stderr)")
    }
    var points: [String] = []
    var coordinates: [Coordinate] = []
    for line in run.output.components(separatedBy: "\r\n").dropFirst() where !line.isEmpty {
      let fields = line.split(separator: ",", omittingEmptySubsequences: false)
      guard fields.count == 8, let time = Timestamp.parse(String(fields[0])),
        let latitude = Double(fields[2]), let longitude = Double(fields[3])
      else { throw TestFailure(description: "bad CSV line: \(line)") }
      let seconds = time.timeIntervalSince(start)
      points.append(
        "\(seconds == seconds.rounded() ? String(Int(seconds)) : "\(seconds)") \(fields[1])")
      coordinates.append(Coordinate(latitude: latitude, longitude: longitude))
    }
    return (points, coordinates)
  }

  /// A drive with a fix loss goes through a real gpsd on a pseudo-terminal into waymarkd: after
  /// it stops, `waymark track export` of its store has the two segments and the points the rule
  /// keeps, and `waymark replay --store` of the same log records the same points.
  @Test func daemonRecordsTheThinnedTrackAsReplayDoes() async throws {
    let rig = try await DaemonRig.start(places: [], extraConfig: "log-level = debug\n")
    defer { rig.stop() }
    let fixes = Self.drive()
    let epochs = fixes.map { Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0)) }
    let daemon = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(epochs)
    let last = Timestamp.format(fixes.last!.time!)
    try await daemon.waitForLine { $0.hasPrefix("<7>fix \(last) ") }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    #expect(daemon.log.contains("<6>track: 34 new point(s) recorded"), "\(daemon.logText)")

    let live = try Self.exported(rig.store)
    #expect(live.points == Self.expected)
    let gpx = try CommandRun.waymark(["track", "export", "--store", rig.store])
    #expect(gpx.status == 0)
    #expect(gpx.output.components(separatedBy: "<trkseg>").count == 3)

    let log = rig.directory.file("drive.nmea")
    try Data(epochs.flatMap(\.lines).map { $0 + "\r\n" }.joined().utf8)
      .write(to: URL(fileURLWithPath: log))
    let replayStore = rig.directory.file("replay.db")
    let replay = try CommandRun.waymark(["replay", log, "--store", replayStore])
    #expect(replay.status == 0, "\(replay.stderr)")
    let replayed = try Self.exported(replayStore)
    #expect(replayed.points == live.points)
    #expect(replayed.coordinates.count == live.coordinates.count)
    for (a, b) in zip(replayed.coordinates, live.coordinates) {
      #expect(a.distance(to: b) < 0.05, "\(a) vs \(b)")
    }
  }

  /// Points wait for their batch (nothing is written per fix); `track = off` on SIGHUP writes
  /// the waiting ones and records nothing after.
  @Test func pointsWaitForTheirBatchAndTrackOffOnReloadWritesThem() async throws {
    let rig = try await DaemonRig.start(places: [], extraConfig: "log-level = debug\n")
    defer { rig.stop() }
    let epochs = Self.drive().map { Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0)) }
    let daemon = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    // 0...20 s: 11 points kept, fewer than track-batch (100) and within track-batch-interval.
    let first = epochs.filter { $0.time <= Self.start.addingTimeInterval(20) }
    try await rig.send(first)
    try await daemon.waitForLine { $0.hasPrefix("<7>fix \(Timestamp.format(first.last!.time)) ") }
    #expect(try Self.exported(rig.store).points.isEmpty)

    let text = try String(contentsOfFile: rig.config, encoding: .utf8)
    try Data((text + "track = off\n").utf8).write(to: URL(fileURLWithPath: rig.config))
    daemon.signal(SIGHUP)
    try await daemon.waitForLine { $0 == "<5>track recording off" }
    let written = try Self.exported(rig.store).points
    #expect(written == Array(Self.expected.prefix(11)))

    try await rig.send(epochs.dropFirst(first.count))
    let last = Timestamp.format(epochs.last!.time)
    try await daemon.waitForLine { $0.hasPrefix("<7>fix \(last) ") }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    #expect(try Self.exported(rig.store).points == written)
    #expect(!daemon.log.contains { $0.contains("<3>") }, "\(daemon.logText)")
  }
}
