import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// Programs written as Apple's documentation writes them (`Tests/Fixtures/corelocation`, each
/// with `import CoreLocation`), compiled with that line, and only it, replaced by
/// `import WaymarkCoreLocation` (warnings as errors), then run against an NMEA log replayed
/// through Waymark (`WAYMARK_SIMULATED_LOG`); their output is what iOS defines for the same
/// moves: the same callbacks in the same order, −1 for invalid values, `distantFuture` for a
/// visit that goes on.
@Suite(
  .serialized,
  .enabled(if: CoreLocationProgram.isBuilt, "WaymarkCoreLocation is not built"))
struct CoreLocationProgramTests {
  typealias Scratch = ScratchDirectory

  /// Compiles the fixture `name` with its import line, and only it, replaced.
  static func compile(_ name: String, in scratch: Scratch) throws -> String {
    try CoreLocationProgram.compile(name, into: scratch.url.path)
  }

  /// A drive: 300 m west of Home → Home, 3 minutes → 1 km east → 1 minute → 400 m on.
  static func writeDrive(in scratch: Scratch) throws -> String {
    let home = Coordinate(latitude: 52.52, longitude: 13.405)
    let office = home.offset(by: 1000, bearingDegrees: 90)
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T08:00:00.000Z")!,
      origin: home.offset(by: 300, bearingDegrees: 270), seed: 11)
    route.noiseMeters = 1
    route.drive(to: home, speedMetersPerSecond: 10)
    route.stop(seconds: 180)
    route.drive(to: office, speedMetersPerSecond: 15)
    route.stop(seconds: 60)
    route.drive(to: office.offset(by: 400, bearingDegrees: 90), speedMetersPerSecond: 15)
    let text = route.fixes().filter { $0.time != nil }
      .flatMap { NMEAWriter.sentences(for: $0) }.joined()
    let path = scratch.path("drive.nmea")
    try writeText(path, text)
    return path
  }

  /// Runs `executable` against `log` with the state directory `state`, after granting it
  /// `level`.
  static func run(_ executable: String, log: String, state: String, level: String) throws
    -> CommandRun
  {
    let name = URL(fileURLWithPath: executable).lastPathComponent
    let grant = try CommandRun.waymark(
      ["auth", "grant", name, level, "--state-dir", state + "/waymark"])
    #expect(grant.status == 0, "\(grant.stderr)")
    return try CommandRun.run(
      executable, [],
      environment: [
        "PATH": "/usr/bin:/bin", "HOME": state, "XDG_STATE_HOME": state,
        "WAYMARK_SIMULATED_LOG": log,
      ], timeout: .seconds(120))
  }

  static func lines(_ run: CommandRun) -> [String] {
    run.output.split(separator: "\n").map(String.init)
  }

  @Test func aDelegateAppGetsIOSCallbacksInIOSOrder() throws {
    let scratch = try Scratch("corelocation")
    let app = try Self.compile("DelegateApp", in: scratch)
    let log = try Self.writeDrive(in: scratch)
    let run = try Self.run(app, log: log, state: scratch.path("state"), level: "whenInUse")
    #expect(run.status == 0, "\(run.stderr)")
    let lines = Self.lines(run)
    // Capabilities as on an iPhone without a magnetometer nor beacons; then authorization
    // first, the region's start and state before any location, the region's crossings with
    // enter before its state, the visit open (distantFuture) then closed after 3 minutes, and
    // the end of the log as locationUnknown.
    #expect(
      Array(lines.prefix(14)) == [
        "heading false", "ranging false", "circles true", "authorization authorizedWhenInUse",
        "monitoring home", "state home unknown",
        "first accuracy true speedValid true simulated true", "enter home", "state home inside",
        "visit arrived", "exit home", "state home outside", "visit departed 179",
        "failure locationUnknown",
      ], "\(run.output)")
    // Every fix of the drive was delivered (no distance filter), none a heading.
    let updates = lines.last.flatMap { Int($0.split(separator: " ").last ?? "") } ?? 0
    #expect(updates > 300, "\(run.output)")
    #expect(!lines.contains("heading update"))

    // Control: the same program denied gets the denial and no location.
    let denied = try Self.run(app, log: log, state: scratch.path("denied"), level: "never")
    #expect(Self.lines(denied).suffix(2) == ["authorization denied", "denied"], "\(denied.output)")
    #expect(!denied.output.contains("first accuracy"))
  }

  @Test func liveUpdatesAMonitorAndASessionAsIOS18WritesThem() throws {
    let scratch = try Scratch("corelocation")
    let app = try Self.compile("LiveUpdates", in: scratch)
    let log = try Self.writeDrive(in: scratch)
    let run = try Self.run(app, log: log, state: scratch.path("state"), level: "whenInUse")
    #expect(run.status == 0, "\(run.stderr)")
    let lines = Self.lines(run)
    #expect(
      Array(lines.prefix(4)) == [
        "session denied=false", "event beacon unmonitored unsupported=true persistence=false",
        "diagnosis beacon", "event home satisfied",
      ]
        || Array(lines.prefix(3)) == [
          "session denied=false", "event beacon unmonitored unsupported=true persistence=false",
          "event home satisfied",
        ], "\(run.output)")
    #expect(lines.contains("event home unsatisfied"))
    // Accuracies and speeds of a receiver's fixes are valid (not −1), and within 30 m
    // (fitness).
    let summary = try #require(lines.last)
    let numbers = summary.split(separator: " ").compactMap { Int($0) }
    #expect(numbers.count == 3 && numbers[0] > 100 && numbers[1] == numbers[0] && numbers[2] == 0)

    // A name that cannot be opened (its file is a directory) is an event, not a crash.
    let broken = scratch.path("broken")
    try FileManager.default.createDirectory(
      atPath: broken + "/waymark/monitors/corelocation-fixture.json",
      withIntermediateDirectories: true)
    let refused = try Self.run(app, log: log, state: broken, level: "whenInUse")
    #expect(refused.status == 0, "\(refused.stderr)")
    #expect(
      refused.output.contains("event home unmonitored unsupported=false persistence=true"),
      "\(refused.output)")
    #expect(!refused.output.contains("event home satisfied"))
  }

  @Test func geocodingAnswersFromTheBundledTownsOnTheMainQueue() throws {
    let scratch = try Scratch("corelocation")
    let app = try Self.compile("Geocoding", in: scratch)
    let log = try Self.writeDrive(in: scratch)
    let run = try Self.run(app, log: log, state: scratch.path("state"), level: "whenInUse")
    #expect(run.status == 0, "\(run.stderr)")
    // The drive is in Berlin: its town, country and zone, with Mitte (which GeoNames lists as a
    // town of its own) as the district; the handler after the call returned (isGeocoding
    // true until it ran), on the main queue (dispatchPrecondition traps elsewhere); an address
    // to its town's centre; nothing in mid-Atlantic; a cancelled request; the async variant
    // in New York.
    #expect(
      Self.lines(run) == [
        "geocoding false", "geocoding true", "current Berlin Mitte DE Germany Europe/Berlin",
        "address Zürich 47.37 8.55", "ocean geocodeFoundNoResult true", "cancelled true",
        "async New York City NY",
      ], "\(run.output)")

    // Control: denied, the program never gets a location to geocode.
    let denied = try Self.run(app, log: log, state: scratch.path("denied"), level: "never")
    #expect(Self.lines(denied) == ["denied"], "\(denied.output)")
  }

  @Test func beaconsAndPushesAnswerAsOnADeviceWithoutThem() throws {
    let scratch = try Scratch("corelocation")
    let app = try Self.compile("BeaconsAndPushes", in: scratch)
    let log = try Self.writeDrive(in: scratch)
    let run = try Self.run(app, log: log, state: scratch.path("state"), level: "whenInUse")
    #expect(run.status == 0, "\(run.stderr)")
    // What the calls return at once, then the three answers, each once, on the main queue
    // (three subsystems: iOS defines no order between them): the beacon region cannot be
    // monitored, the constraint cannot be ranged, pushes are unsupported; no beacon ever.
    let lines = Self.lines(run)
    #expect(Array(lines.prefix(3)) == ["monitoring false", "region true 1 2", "ranged 0"])
    #expect(
      Set(lines.dropFirst(3).dropLast()) == [
        "monitoring failed lobby true", "ranging failed 1 true", "pushes unsupportedPlatform true",
      ] && lines.count == 7 && lines.last == "done", "\(run.output)")
  }

  @Test func locationArithmeticFollowsCLLocation() throws {
    let scratch = try Scratch("corelocation")
    let app = try Self.compile("LocationArithmetic", in: scratch)
    let run = try CommandRun.run(app, [], environment: ["PATH": "/usr/bin:/bin"])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(
      Self.lines(run) == [
        "distance 877", "horizontal 0.0 vertical -1.0", "speed -1.0 course -1.0",
        "altitudeValid false", "floor true", "measured 12.0 90.0 -1.0", "valid true",
        "invalid false", "timestamp 1800000000", "measurement true", "caught denied",
      ], "\(run.output)")
  }
}

/// Writes `text` to `path`.
private func writeText(_ path: String, _ text: String) throws {
  try Data(text.utf8).write(to: URL(fileURLWithPath: path))
}
