import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

let gpsbabel = "/usr/bin/gpsbabel"
let xmllint = "/usr/bin/xmllint"
let ogrinfo = "/usr/bin/ogrinfo"

func installed(_ tool: String) -> Bool { FileManager.default.isExecutableFile(atPath: tool) }

/// `waymark replay --store` records a drive's track; `waymark track` exports it, and real
/// consumers (gpsbabel, xmllint, GDAL's ogrinfo) read what it writes.
@Suite struct TrackCommandTests {
  /// East at 6 m/s for 60.5 s (a fix every second, 0...60 s), a fix loss of 20 s, then 70 s
  /// standing still (81...150 s) and a last fix (151 s): by the default rule (10 m or 30 s, a
  /// gap over 10 s) the first segment keeps every other fix, 0...60 s (31 points), the second
  /// its first fix (81 s), 111 s and 141 s (3 points).
  static func drive() -> [Fix] {
    let origin = Coordinate(latitude: 45.76, longitude: 4.835)
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T08:00:00.000Z")!, origin: origin, seed: 3)
    route.drive(to: origin.offset(by: 363, bearingDegrees: 90), speedMetersPerSecond: 6)
    route.gap(seconds: 20)
    route.stop(seconds: 70)
    return route.fixes()
  }

  static let expectedTimes =
    stride(from: 0, through: 60, by: 2).map { $0 } + [81, 111, 141]

  final class Recorded {
    let directory: URL
    let store: String
    let log: String

    init() throws {
      directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("waymark-track-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      store = directory.appendingPathComponent("track.db").path
      log = directory.appendingPathComponent("drive.nmea").path
      try Data(NMEAWriter.log(TrackCommandTests.drive()).utf8).write(
        to: URL(fileURLWithPath: log))
    }

    deinit { try? FileManager.default.removeItem(at: directory) }

    func file(_ name: String) -> String { directory.appendingPathComponent(name).path }

    /// Runs `waymark replay <log> --store <store>`.
    @discardableResult
    func replay() throws -> CommandRun {
      let run = try CommandRun.waymark(["replay", log, "--store", store])
      guard run.status == 0 else {
        throw TestFailure("waymark replay failed (\(run.status)): \(run.stderr)")
      }
      return run
    }

    /// `waymark track export` in `format`, written to a file; returns its path.
    func export(_ format: String, _ extra: [String] = []) throws -> String {
      let run = try CommandRun.waymark(
        ["track", "export", "--store", store, "--format", format] + extra)
      guard run.status == 0, run.stderr.isEmpty else {
        throw TestFailure("waymark track export failed (\(run.status)): \(run.stderr)")
      }
      let path = file("track.\(format)")
      try run.stdout.write(to: URL(fileURLWithPath: path))
      return path
    }
  }

  struct TestFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
  }

  static func secondsAfterStart(_ text: Substring) -> Int? {
    Timestamp.parse(String(text)).map {
      Int($0.timeIntervalSince(Timestamp.parse("2026-11-29T08:00:00.000Z")!))
    }
  }

  @Test("replay --store keeps the rule's points once: a second replay adds none")
  func replayRecordsTheThinnedTrackOnce() throws {
    let recorded = try Recorded()
    let first = try recorded.replay()
    #expect(first.stderr.contains("track: 34 new point(s) of 34 kept"), "\(first.stderr)")
    let again = try recorded.replay()
    #expect(again.stderr.contains("track: 0 new point(s) of 34 kept"), "\(again.stderr)")
    let points = try Database(path: recorded.store, createIfMissing: false).read {
      try TrackRepository($0).all()
    }
    let start = Timestamp.parse("2026-11-29T08:00:00.000Z")!
    #expect(points.map { Int($0.timestamp.timeIntervalSince(start)) } == Self.expectedTimes)
    #expect(points.map(\.segment) == Array(repeating: 1, count: 31) + [2, 2, 2])
    let stats = try CommandRun.waymark(["track", "stats", "--store", recorded.store])
    #expect(stats.status == 0)
    #expect(
      stats.output.hasPrefix(
        #"{"class":"TRACK","points":34,"segments":2,"first":"2026-11-29T08:00:00.000Z","#
          + #""last":"2026-11-29T08:02:21.000Z","distance":"#), "\(stats.output)")
    // The distance, from the route alone: the first segment runs east at 6 m/s from 0 to 60 s
    // (360 m, no noise), the second stands still (0 m); the 3 m the car went on before the fix
    // loss lie between the segments and do not count. Printed to 0.1 m, and the points are
    // exact to the NMEA's 1e-6 minute (2 mm): within 0.1 m (measured: 360.0 m).
    let distance = try #require(Self.field("distance", of: stats.output))
    #expect(abs(distance - 6 * 60) <= 0.1, "\(stats.output)")
  }

  /// The number after `"name":` in a one-line JSON object.
  static func field(_ name: String, of line: String) -> Double? {
    guard let range = line.range(of: "\"\(name)\":") else { return nil }
    return Double(line[range.upperBound...].prefix { "0123456789.-".contains($0) })
  }

  @Test("GPX: one trk, a trkseg per segment, each point with its time")
  func gpxStructure() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let text = try String(contentsOfFile: try recorded.export("gpx"), encoding: .utf8)
    #expect(text.hasPrefix("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<gpx version=\"1.1\""))
    #expect(text.components(separatedBy: "<trk>").count == 2)
    #expect(text.components(separatedBy: "<trkseg>").count == 3)
    let times = text.split(separator: "\n").filter { $0.contains("<trkpt ") }.compactMap { line in
      line.range(of: "<time>").flatMap { open in
        line.range(of: "</time>").map {
          Self.secondsAfterStart(line[open.upperBound..<$0.lowerBound])
        }
      } ?? nil
    }
    #expect(times == Self.expectedTimes)
    #expect(text.contains("<ele>50.00</ele><time>2026-11-29T08:00:00.000Z</time>"))
  }

  @Test(
    "xmllint finds the GPX well-formed",
    .enabled(if: installed(xmllint), "xmllint is not installed (package libxml2-utils)"))
  func gpxIsWellFormed() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let run = try CommandRun.run(xmllint, ["--noout", try recorded.export("gpx")])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.stderr.isEmpty)
    // An empty track is a well-formed GPX document too.
    let empty = try Recorded()
    _ = try Database(path: empty.store)
    let emptyRun = try CommandRun.run(xmllint, ["--noout", try empty.export("gpx")])
    #expect(emptyRun.status == 0, "\(emptyRun.stderr)")
  }

  @Test(
    "gpsbabel reads every point of the GPX, and keeps its two segments",
    .enabled(if: installed(gpsbabel), "gpsbabel is not installed (package gpsbabel)"))
  func gpsbabelReadsTheGPX() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let gpx = try recorded.export("gpx")
    let csv = try CommandRun.run(gpsbabel, ["-i", "gpx", "-f", gpx, "-o", "csv", "-F", "-"])
    #expect(csv.status == 0, "\(csv.stderr)")
    let lines = csv.output.split(separator: "\n")
    #expect(lines.count == 34, "\(csv.output)")
    // "lat, lon, name" per point; gpsbabel pads the longitude ("04.83500").
    let first = try #require(lines.first).split(separator: ",").map {
      Double($0.trimmingCharacters(in: .whitespaces))
    }
    #expect(first.count == 3)
    #expect(abs((first[0] ?? 0) - 45.76) < 1e-5 && abs((first[1] ?? 0) - 4.835) < 1e-5)
    // Through gpsbabel's own GPX writer: still two segments of 31 and 3 points, same times.
    let again = try CommandRun.run(gpsbabel, ["-i", "gpx", "-f", gpx, "-o", "gpx", "-F", "-"])
    #expect(again.status == 0, "\(again.stderr)")
    let segments = again.output.components(separatedBy: "<trkseg>").dropFirst().map {
      $0.components(separatedBy: "<trkpt ").count - 1
    }
    #expect(segments == [31, 3])
    #expect(again.output.contains("<time>2026-11-29T08:02:21Z</time>"))
  }

  @Test("GeoJSON: a LineString feature per segment with its times")
  func geojsonStructure() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let data = try Data(contentsOf: URL(fileURLWithPath: try recorded.export("geojson")))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect(root["type"] as? String == "FeatureCollection")
    let features = try #require(root["features"] as? [[String: Any]])
    #expect(features.count == 2)
    var times: [Int] = []
    for (index, feature) in features.enumerated() {
      let geometry = try #require(feature["geometry"] as? [String: Any])
      #expect(geometry["type"] as? String == "LineString")
      let coordinates = try #require(geometry["coordinates"] as? [[Double]])
      let properties = try #require(feature["properties"] as? [String: Any])
      let featureTimes = try #require(properties["times"] as? [String])
      #expect(properties["segment"] as? Int == index + 1)
      #expect(properties["points"] as? Int == coordinates.count)
      #expect(featureTimes.count == coordinates.count)
      #expect(properties["start"] as? String == featureTimes.first)
      #expect(properties["end"] as? String == featureTimes.last)
      // [lon, lat, altitude]
      #expect(coordinates.allSatisfy { $0.count == 3 && abs($0[0] - 4.835) < 0.01 && $0[2] == 50 })
      times += featureTimes.compactMap { Self.secondsAfterStart($0[...]) }
    }
    #expect(times == Self.expectedTimes)
  }

  @Test(
    "ogrinfo reads the GeoJSON: two features, line strings",
    .enabled(if: installed(ogrinfo), "ogrinfo is not installed (package gdal-bin)"))
  func ogrinfoReadsTheGeoJSON() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let run = try CommandRun.run(
      ogrinfo, ["-ro", "-al", "-so", try recorded.export("geojson")],
      environment: ["PATH": "/usr/bin:/bin"])
    #expect(run.status == 0, "\(run.stderr)")
    #expect(run.output.contains("Feature Count: 2\n"), "\(run.output)")
    #expect(run.output.contains("Geometry: 3D Line String"), "\(run.output)")
    #expect(run.output.contains("times: StringList"), "\(run.output)")
  }

  @Test("CSV: a header, then a line per point; --since and --until select a range")
  func csvAndRange() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let text = try String(contentsOfFile: try recorded.export("csv"), encoding: .utf8)
    let lines = text.components(separatedBy: "\r\n").dropLast()
    #expect(lines.first == "time,segment,lat,lon,altitude,speed,course,accuracy")
    #expect(lines.count == 35)
    #expect(lines[1].hasPrefix("2026-11-29T08:00:00.000Z,1,45.7600000,4.8350000,50.00,6.00,90.0,"))
    #expect(lines[34].hasPrefix("2026-11-29T08:02:21.000Z,2,"))
    let range = try String(
      contentsOfFile: try recorded.export(
        "csv", ["--since", "2026-11-29T08:01:00Z", "--until=2026-11-29T08:02:21.000Z"]),
      encoding: .utf8)
    let times = range.components(separatedBy: "\r\n").dropFirst().dropLast().compactMap {
      Self.secondsAfterStart($0.prefix(24))
    }
    #expect(times == [60, 81, 111])
  }

  @Test("an empty track: a TRACK of nulls, a CSV header, a FeatureCollection without features")
  func emptyTrack() throws {
    let recorded = try Recorded()
    _ = try Database(path: recorded.store)
    let stats = try CommandRun.waymark(["track", "stats", "--store", recorded.store])
    #expect(stats.status == 0)
    #expect(
      stats.output
        == #"{"class":"TRACK","points":0,"segments":0,"first":null,"last":null,"distance":0.0}"#
        + "\n")
    let csv = try String(contentsOfFile: try recorded.export("csv"), encoding: .utf8)
    #expect(csv == "time,segment,lat,lon,altitude,speed,course,accuracy\r\n")
    let data = try Data(contentsOf: URL(fileURLWithPath: try recorded.export("geojson")))
    let root = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    #expect((root["features"] as? [Any])?.isEmpty == true)
  }

  @Test(
    arguments: [
      (["export", "--format", "kml"], "'--format' must be one of gpx, geojson, csv, got 'kml'."),
      ([], "Missing subcommand: 'export' or 'stats'."),
      (["show"], "Unknown subcommand 'show'"),
      (["export", "extra"], "Unexpected argument 'extra'."),
      (["stats", "--format", "csv"], "'--format' applies only to 'track export'."),
      (["export", "--since", "yesterday"], "'--since' expects an ISO 8601 UTC time or date"),
      (
        ["export", "--since", "2026-11-29T09:00:00Z", "--until", "2026-11-29"],
        "'--until' must be later than '--since'."
      ),
      (["export", "--colour"], "Unknown option '--colour'."),
    ])
  func usageErrorsExit64(arguments: [String], message: String) throws {
    let run = try CommandRun.waymark(["track"] + arguments + ["--store", "/nonexistent/x.db"])
    #expect(run.status == 64)
    #expect(run.stderr.hasPrefix("Error: \(message)"), "\(run.stderr)")
    #expect(run.stderr.contains("USAGE: waymark track export"))
    #expect(run.stdout.isEmpty)
  }

  @Test("a missing store exits 66, a file that is no database 65")
  func storeErrors() throws {
    let recorded = try Recorded()
    let missing = try CommandRun.waymark(["track", "export", "--store", recorded.file("none.db")])
    #expect(missing.status == 66, "\(missing.stderr)")
    #expect(missing.stdout.isEmpty)
    let junk = recorded.file("junk.db")
    try Data(repeating: 0x41, count: 8192).write(to: URL(fileURLWithPath: junk))
    let corrupt = try CommandRun.waymark(["track", "stats", "--store", junk])
    #expect(corrupt.status == 65, "\(corrupt.stderr)")
    #expect(corrupt.stderr.hasPrefix("Error: "))
  }

  @Test(
    "a write error on standard output exits 74",
    .enabled(if: FileManager.default.fileExists(atPath: "/dev/full"), "no /dev/full"))
  func writeErrorExits74() throws {
    let recorded = try Recorded()
    try recorded.replay()
    let full = try #require(FileHandle(forWritingAtPath: "/dev/full"))
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Products.executable("waymark"))
    process.arguments = ["track", "export", "--store", recorded.store]
    process.standardOutput = full
    let errors = Pipe()
    process.standardError = errors
    try process.run()
    let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    process.waitUntilExit()
    #expect(process.terminationStatus == 74)
    #expect(
      message.hasPrefix("Error: cannot write the output: No space left on device"), "\(message)")
  }
}
