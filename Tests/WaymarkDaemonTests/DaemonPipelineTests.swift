import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// The daemon's place path loses no fix: a real gpsd feeds waymarkd at 10 Hz while it monitors
/// 10,000 places and two busy loops take both cores, and every fix sent reaches the pipeline
/// (the monitor and the track see the fixes the debug log lists, one line per fix).
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonPipelineTests {
  static let start = Timestamp.parse("2026-11-30T08:00:00.000Z")!
  static let home = Coordinate(latitude: 52.52, longitude: 13.405)

  /// 30 s at 10 Hz: a drive to Home, 12 s there, and on (300 fixes, each with its own time).
  static func drive() -> [Fix] {
    var route = RouteSynthesizer(
      start: start, origin: home.offset(by: 120, bearingDegrees: 270), seed: 21)
    route.rateHz = 10
    route.drive(to: home, speedMetersPerSecond: 12)
    route.stop(seconds: 12)
    route.drive(to: home.offset(by: 120, bearingDegrees: 90), speedMetersPerSecond: 12)
    return route.fixes().filter { $0.time != nil }
  }

  /// Home, and 9,999 places on a grid 200 m apart away from the drive.
  static func places() -> [Place] {
    var places = [Place(id: "home", name: "Home", coordinate: home, radiusMeters: 40)]
    for index in 0..<9_999 {
      let (row, column) = index.quotientAndRemainder(dividingBy: 100)
      let corner = home.offset(by: 2_000, bearingDegrees: 0)
      let coordinate = corner.offset(by: Double(row) * 200, bearingDegrees: 0)
        .offset(by: Double(column) * 200, bearingDegrees: 90)
      places.append(Place(id: "p\(index)", name: "P\(index)", coordinate: coordinate))
    }
    return places
  }

  /// `count` busy loops (`sh -c 'while :; do :; done'`), stopped by `stop`.
  final class CPUHog {
    private var processes: [Process] = []

    init(count: Int) throws {
      for _ in 0..<count {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "while :; do :; done"]
        try process.run()
        processes.append(process)
      }
    }

    /// Whether every loop is still running (the hog is real while the drive is sent).
    var isRunning: Bool { !processes.isEmpty && processes.allSatisfy(\.isRunning) }

    func stop() {
      for process in processes {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
      }
      processes = []
    }

    deinit { stop() }
  }

  @Test func noFixIsLostAtTenHertzWithTenThousandPlacesUnderACPUHog() async throws {
    let rig = try await DaemonRig.start(places: [], extraConfig: "log-level = debug\ntrack = on\n")
    defer { rig.stop() }
    let places = Self.places()
    let database = try Database(path: rig.store, createIfMissing: false)
    try database.write { _ = try PlaceRepository($0).upsert(places) }
    let fixes = Self.drive()
    #expect(fixes.count >= 300)
    let epochs = fixes.map { Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0)) }

    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("10000 place(s)") }
    try await rig.gpsd.waitForWatchers(1)
    let hog = try CPUHog(count: 2)
    defer { hog.stop() }
    #expect(hog.isRunning)
    try await rig.receiver.send(epochs: epochs.map(\.lines), interval: .milliseconds(100))
    #expect(hog.isRunning)
    let last = Timestamp.format(fixes.last!.time!)
    try await daemon.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("<7>fix \(last) ") }
    hog.stop()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)

    // Every fix sent reached the pipeline, once: the debug line of each fix time.
    let sent = fixes.map { "<7>fix \(Timestamp.format($0.time!)) " }
    let logged = daemon.log.filter { $0.hasPrefix("<7>fix ") }
    let reached = sent.filter { prefix in logged.contains { $0.hasPrefix(prefix) } }
    #expect(reached.count == sent.count, "\(sent.count - reached.count) fix(es) lost")
    // The place monitor saw them: Home's arrival and departure, in the store too.
    #expect(daemon.log.contains { $0.hasPrefix("<5>ARRIVAL at Home (home)") })
    #expect(daemon.log.contains { $0.hasPrefix("<5>DEPARTURE from Home (home)") })
    let visits = try storedVisits(rig.store)
    #expect(visits.map(\.visit.placeID) == ["home"])
    // The pipeline's own count agrees: at least every fix sent (gpsd may add a fixless report).
    let summary = try #require(daemon.log.first { $0.hasPrefix("<6>pipeline: ") })
    let processed = Int(summary.dropFirst("<6>pipeline: ".count).prefix { $0.isNumber }) ?? 0
    #expect(processed >= sent.count, "\(summary)")
    // The track saw them: its thinning kept some points (the drive moves 12 m per second).
    #expect(daemon.log.contains { $0.hasPrefix("<6>track: ") && !$0.hasPrefix("<6>track: 0 ") })
  }
}
