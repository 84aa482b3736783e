import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark replay a.nmea b.nmea … --jobs N` through the real binary: a fleet of logs into one
/// store, the same store and output whatever N is and as replaying the logs one by one.
@Suite struct ReplayFleetTests {
  static let start = Timestamp.parse("2026-11-30T08:00:00.000Z")!
  static let depot = Coordinate(latitude: 48.1374, longitude: 11.5755)

  /// A directory with `count` logs (one device each: a stop at the depot, a drive to its own
  /// customer, a stop there, a drive back) and the places of the depot and the customers.
  static func fleet(_ count: Int) throws -> (directory: URL, logs: [String], places: String) {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-replay-fleet-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    var places = [
      Place(id: "depot", name: "Depot", coordinate: depot, radiusMeters: 80)
    ]
    var logs: [String] = []
    for device in 0..<count {
      let customer = depot.offset(
        by: 1_500 + 400 * Double(device), bearingDegrees: 40 + 60 * Double(device))
      places.append(
        Place(
          id: "customer-\(device)", name: "Customer \(device)", coordinate: customer,
          radiusMeters: 60))
      var route = RouteSynthesizer(
        start: start.addingTimeInterval(Double(device) * 90), origin: depot,
        seed: UInt64(30 + device))
      route.noiseMeters = 3
      route.stop(seconds: 200)
      route.drive(to: customer, speedMetersPerSecond: 11)
      route.stop(seconds: 240 + 30 * Double(device))
      route.drive(to: depot, speedMetersPerSecond: 11)
      route.stop(seconds: 150)
      let log = directory.appendingPathComponent("device-\(device).nmea").path
      try Data(NMEAWriter.log(route.fixes()).utf8).write(to: URL(fileURLWithPath: log))
      logs.append(log)
    }
    let placesPath = directory.appendingPathComponent("places.geojson").path
    try Data(PlaceCollection.encode(places)).write(to: URL(fileURLWithPath: placesPath))
    return (directory, logs, placesPath)
  }

  /// What the store holds, as its export commands print it: visits (with the stays), events
  /// and the track.
  static func export(_ store: String) throws -> String {
    var text = ""
    for arguments in [
      ["visits", "--store", store, "--format", "ndjson"],
      ["track", "export", "--store", store, "--format", "csv"],
      ["places", "list", "--store", store],
    ] {
      let run = try CommandRun.waymark(arguments)
      #expect(run.status == 0, "\(arguments): \(run.stderr)")
      // The header names the export, not the store (whose path differs between stores).
      text += "== \(arguments.prefix(2).joined(separator: " "))\n" + run.output
    }
    return text
  }

  @Test func jobsOneTwoAndThreeGiveTheStoreAndOutputOfReplayingOneByOne() throws {
    let fleet = try Self.fleet(5)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    let options = ["--places", fleet.places, "--visits", "--fixes"]

    let oneByOne = fleet.directory.appendingPathComponent("one-by-one.db").path
    var oneByOneOutput = Data()
    for log in fleet.logs {
      let run = try CommandRun.waymark(["replay", log, "--store", oneByOne] + options)
      #expect(run.status == 0, "\(run.stderr)")
      oneByOneOutput += run.stdout
    }
    let expected = try Self.export(oneByOne)
    // The comparison means something: every device's visits are there, and the track.
    for device in 0..<5 { #expect(expected.contains(#""place":"customer-\#(device)""#)) }
    #expect(expected.contains("device-4.nmea"))
    #expect(expected.split(separator: "\n").count > 15)

    for jobs in [1, 2, 3] {
      let store = fleet.directory.appendingPathComponent("jobs-\(jobs).db").path
      let run = try CommandRun.waymark(
        ["replay"] + fleet.logs + ["--store", store, "--jobs", "\(jobs)"] + options)
      #expect(run.status == 0, "\(run.stderr)")
      #expect(run.stdout == oneByOneOutput, "--jobs \(jobs): the replay's output")
      #expect(try Self.export(store) == expected, "--jobs \(jobs): the store's export")
      #expect(run.stderr.components(separatedBy: "waymark replay: ").count == 6)
    }

    // Negative control: another order is another store (the track and the events interleave
    // differently), so the comparison above can fail.
    let reversed = fleet.directory.appendingPathComponent("reversed.db").path
    let run = try CommandRun.waymark(
      ["replay"] + fleet.logs.reversed() + ["--store", reversed, "--jobs", "3"] + options)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stdout != oneByOneOutput)
  }

  @Test func aBadLogIsReportedWithFileAndLineAndTheOthersAreKept() throws {
    let fleet = try Self.fleet(3)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    // The second device's log gets a corrupt sentence as its line 100.
    // (Split on the LF bytes: a CR before it stays with its line.)
    var lines = try Data(contentsOf: URL(fileURLWithPath: fleet.logs[1]))
      .split(separator: 10, omittingEmptySubsequences: false).map { Array($0) }
    try #require(lines.count > 200)
    lines.insert(Array("$GPGGA,120001*00\r".utf8), at: 99)
    try Data(Array(lines.joined(separator: [10]))).write(to: URL(fileURLWithPath: fleet.logs[1]))
    let options = ["--places", fleet.places, "--strict"]

    let oneByOne = fleet.directory.appendingPathComponent("one-by-one.db").path
    var statuses: [Int32] = []
    for log in fleet.logs {
      statuses.append(
        try CommandRun.waymark(["replay", log, "--store", oneByOne] + options).status)
    }
    #expect(statuses == [0, 65, 0])

    let store = fleet.directory.appendingPathComponent("fleet.db").path
    let run = try CommandRun.waymark(
      ["replay"] + fleet.logs + ["--store", store, "--jobs", "2"] + options)
    #expect(run.status == 65)
    #expect(run.stderr.contains("\(fleet.logs[1]):100: checksum does not match (--strict)"))
    #expect(!run.stderr.contains("\(fleet.logs[0]):"))
    let export = try Self.export(store)
    #expect(export == (try Self.export(oneByOne)))
    #expect(export.contains(#""place":"customer-0""#))
    #expect(export.contains(#""place":"customer-2""#))

    // An unreadable log among them: named, exit 66, the others still replayed.
    let missing = fleet.directory.appendingPathComponent("missing.nmea").path
    let other = fleet.directory.appendingPathComponent("other.db").path
    let unreadable = try CommandRun.waymark(
      [
        "replay", fleet.logs[0], missing, fleet.logs[2], "--store", other, "--jobs", "2",
        "--places", fleet.places,
      ])
    #expect(unreadable.status == 66)
    #expect(unreadable.stderr.contains("cannot read '\(missing)'"))
    #expect(try Self.export(other).contains(#""place":"customer-2""#))
  }

  @Test(arguments: ["0", "-1", "two", "1.5", "", "257"])
  func jobsMustBeAPositiveWholeNumber(_ value: String) throws {
    let run = try CommandRun.waymark(["replay", "-", "--jobs", value])
    #expect(run.status == 64)
    #expect(run.stderr.contains("'--jobs' expects a whole number from 1 to 256, got '\(value)'."))
  }

  /// Positive control beside the fleet of distinct devices: two logs of one device (its drive
  /// cut while it stops at its customer), in a fleet replayed with `--jobs 2`. The second log
  /// resumes the first's state (the open visit is continued and closed by its departure), as
  /// replaying them one by one does; in the other order it does not, and the store differs.
  @Test func twoLogsOfOneDeviceCarryTheirStateInOrder() throws {
    let fleet = try Self.fleet(2)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    let customer = Self.depot.offset(by: 1_500, bearingDegrees: 40)
    var route = RouteSynthesizer(
      start: Self.start.addingTimeInterval(3_600), origin: Self.depot, seed: 77)
    route.noiseMeters = 3
    route.stop(seconds: 200)
    route.drive(to: customer, speedMetersPerSecond: 11)
    route.stop(seconds: 300)
    route.drive(to: Self.depot, speedMetersPerSecond: 11)
    route.stop(seconds: 150)
    let fixes = route.fixes()
    // The cut: 150 s into the stop at the customer (1 Hz: one fix a second).
    let cut =
      try #require(
        fixes.firstIndex { fix in
          fix.coordinate.map { $0.distance(to: customer) < 20 } ?? false
        }) + 150
    let halves = [Array(fixes[..<cut]), Array(fixes[cut...])]
    var van: [String] = []
    for (index, half) in halves.enumerated() {
      let log = fleet.directory.appendingPathComponent("van-\(index + 1).nmea").path
      try Data(NMEAWriter.log(half).utf8).write(to: URL(fileURLWithPath: log))
      van.append(log)
    }
    let logs = van + fleet.logs
    let options = ["--places", fleet.places]

    let oneByOne = fleet.directory.appendingPathComponent("one-by-one.db").path
    var resumed: [Bool] = []
    for log in logs {
      let run = try CommandRun.waymark(["replay", log, "--store", oneByOne] + options)
      #expect(run.status == 0, "\(run.stderr)")
      resumed.append(run.stderr.contains("resumed from the saved state"))
    }
    // Only the van's second log continues a saved state (the other devices' logs start before
    // the log replayed ahead of them ends: they start fresh).
    #expect(resumed == [false, true, false, false])
    let expected = try Self.export(oneByOne)
    // The visit at the customer is one visit, from the first log's arrival to the second
    // log's departure, recorded with the first log's name.
    let atCustomer = { (export: String) in
      export.split(separator: "\n").filter {
        $0.contains(#""class":"VISIT","place":"customer-0""#) && $0.contains("/van-")
      }
    }
    let visits = atCustomer(expected)
    #expect(visits.count == 1)
    #expect(visits.allSatisfy { $0.contains("van-1.nmea") && $0.contains(#""departure":"2"#) })

    let store = fleet.directory.appendingPathComponent("jobs-2.db").path
    let run = try CommandRun.waymark(
      ["replay"] + logs + ["--store", store, "--jobs", "2"] + options)
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stderr.components(separatedBy: "resumed from the saved state").count == 2)
    #expect(try Self.export(store) == expected)

    // Negative control: the van's logs the other way round are another store (the second
    // half's departure is recorded without its arrival, under van-2.nmea).
    let swapped = fleet.directory.appendingPathComponent("swapped.db").path
    let other = try CommandRun.waymark(
      ["replay", van[1], van[0]] + fleet.logs + ["--store", swapped, "--jobs", "2"] + options)
    #expect(other.status == 0, "\(other.stderr)")
    let swappedExport = try Self.export(swapped)
    #expect(swappedExport != expected)
    #expect(atCustomer(swappedExport).count == 2)
    #expect(atCustomer(swappedExport).contains { $0.contains("van-2.nmea") })
  }

  @Test func jobsTwoOnOneLogIsAPlainReplay() throws {
    let fleet = try Self.fleet(1)
    defer { try? FileManager.default.removeItem(at: fleet.directory) }
    let plain = try CommandRun.waymark(["replay", fleet.logs[0], "--fixes"])
    let jobs = try CommandRun.waymark(["replay", fleet.logs[0], "--fixes", "--jobs", "2"])
    #expect(plain.status == 0)
    #expect(jobs.status == 0)
    #expect(!plain.stdout.isEmpty)
    #expect(jobs.stdout == plain.stdout)
    #expect(jobs.stderr == plain.stderr)
  }
}
