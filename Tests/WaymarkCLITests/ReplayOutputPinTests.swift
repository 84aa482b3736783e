import Foundation
import Testing
import WaymarkTesting

/// The replay's output, pinned: the demo drive and a 10 Hz drive replayed with every output
/// (fixes, place events, stays, store) give the very bytes the replay gave before it was moved
/// onto `NMEAReplay` (hashes captured with the earlier binary). Replayed by a relative name in
/// a temporary directory, so that no path of this machine is in the output.
@Suite struct ReplayOutputPinTests {
  /// FNV-1a, 64 bits: enough to tell two outputs apart, and written here in four lines.
  static func fnv1a(_ bytes: some Sequence<UInt8>) -> String {
    var hash: UInt64 = 0xcbf2_9ce4_8422_2325
    for byte in bytes { hash = (hash ^ UInt64(byte)) &* 0x100_0000_01b3 }
    return String(hash, radix: 16)
  }

  static let tenHertzRoute = """
    # 10 Hz, about 25 minutes: stops, drives, a fix-loss gap and an outlier
    start 2026-11-30T07:00:00Z 48.1374 11.5755
    rate 10
    noise 3
    seed 7
    stop 180
    drive 48.1500 11.5400 14
    stop 300
    outlier 200 90 80
    drive 48.1600 11.5600 18
    gap 30
    stop 240
    drive 48.1374 11.5755 12
    stop 120

    """

  static let tenHertzPlaces = """
    {"type":"FeatureCollection","features":[
    {"type":"Feature","id":"start","geometry":{"type":"Point","coordinates":[11.5755,48.1374]},
     "properties":{"name":"Start","radius":80}},
    {"type":"Feature","id":"west","geometry":{"type":"Point","coordinates":[11.5400,48.1500]},
     "properties":{"name":"West","radius":60}},
    {"type":"Feature","id":"north","geometry":{"type":"Point","coordinates":[11.5600,48.1600]},
     "properties":{"name":"North","radius":70}}]}

    """

  /// Replays `log` (as `drive.nmea`) with every output; `(stdout hash, stderr hash)`.
  static func replay(_ log: Data, places: String, speed: String? = nil) throws -> (
    String, String
  ) {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-replay-pin-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = directory.appendingPathComponent("pin.db").path
    try log.write(to: directory.appendingPathComponent("drive.nmea"))
    let run = try CommandRun.run(
      Products.executable("waymark"),
      ["replay", "drive.nmea", "--fixes", "--visits", "--places", places, "--store", store]
        + (speed.map { ["--speed", $0] } ?? []),
      currentDirectory: directory)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout.count > 10_000)
    return (fnv1a(run.stdout), fnv1a(Array(run.stderr.utf8)))
  }

  @Test func theDemoDriveReplaysToThePinnedBytes() throws {
    let root = Products.packageRoot
    let log = try Data(contentsOf: root.appendingPathComponent("Demo/drive.nmea"))
    let places = root.appendingPathComponent("Demo/places.geojson").path
    let (stdout, stderr) = try Self.replay(log, places: places)
    #expect(stdout == "19ac7bc13f61f370")
    #expect(stderr == "1a6b4fc7b7093dfc")
  }

  @Test func aTenHertzDriveReplaysToThePinnedBytes() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-replay-pin-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let route = directory.appendingPathComponent("drive.route")
    let places = directory.appendingPathComponent("places.geojson")
    try Data(Self.tenHertzRoute.utf8).write(to: route)
    try Data(Self.tenHertzPlaces.utf8).write(to: places)
    let synthesized = try CommandRun.waymark(["synthesize", route.path])
    #expect(synthesized.status == 0, "\(synthesized.stderr)")
    #expect(synthesized.stdout.count > 3_000_000)  // its header names the route file
    let (stdout, stderr) = try Self.replay(synthesized.stdout, places: places.path)
    // Re-pinned 2026-12-06 for a change of the stay detector, not of the replay: the stay at
    // West counts 3,070 fixes (was 3,066; arrival and departure the same), fixes inside a stop
    // not yet a stay now joining the ones held beyond it when nearer them than its centre.
    #expect(stdout == "7fab7d579ec33f0a")
    #expect(stderr == "f6c285b14d7bba66")
    // Paced (fast enough to take a moment): the same bytes.
    let paced = try Self.replay(synthesized.stdout, places: places.path, speed: "1000000")
    #expect(paced.0 == stdout)
  }
}
