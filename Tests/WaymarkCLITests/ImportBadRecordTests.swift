import Foundation
import Testing
import WaymarkTesting

/// `waymark import` of files with bad records and of hostile files, through the real binary:
/// each bad record named by file and position on stderr, the rest imported, exit 65; nothing
/// traps.
@Suite struct ImportBadRecordTests {
  /// Imports `text` written to `name` into a fresh store.
  static func importing(
    _ text: String, as name: String, _ arguments: [String] = []
  ) throws -> (run: CommandRun, path: String) {
    let scratch = try ScratchDirectory("import")
    let path = scratch.path(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    let run = try CommandRun.waymark(
      ["import", path, "--store", scratch.path("store.db")] + arguments)
    return (run, path)
  }

  @Test func badTakeoutRecordsAreNamedByLineAndJSONPathAndTheRestImported() throws {
    // One record a line: record i is on line i + 2.
    let records = [
      #"{"latitudeE7": 481372000, "longitudeE7": 115756000, "timestamp": "2024-03-05T08:00:00Z"}"#,
      #"{"latitudeE7": 910000000, "longitudeE7": 115756000, "timestamp": "2024-03-05T08:01:00Z"}"#,
      #"{"latitudeE7": 481372000, "longitudeE7": 115756000}"#,
      #"42"#,
      #"{"latitudeE7": 481372000,, "longitudeE7": 1}"#,
      #"{"latitudeE7": "NaN", "longitudeE7": 115756000, "timestampMs": "1709625840000"}"#,
      #"{"latitudeE7": 481372000, "longitudeE7": 115756000, "timestampMs": "1e300"}"#,
      // A longitude written unsigned (2^32 - 1,000,000 = -0.1°), as some exports have them.
      #"{"latitudeE7": 481372000, "longitudeE7": 4293967296, "timestamp": "2024-03-05T08:02:00Z"}"#,
      #"{"latitudeE7": 481372000, "longitudeE7": 115756000, "timestamp": "2024-03-05T08:03:00Z"}"#,
    ]
    let text = "{\"locations\": [\n" + records.joined(separator: ",\n") + "\n]}\n"
    let (run, path) = try Self.importing(text, as: "Records.json")
    #expect(run.status == 65)
    for (line, location, reason) in [
      (3, "locations[1]", "position out of range"),
      (4, "locations[2]", "no time"),
      (5, "locations[3]", "not an object"),
      (6, "locations[4]", "not JSON"),
      (7, "locations[5]", "position out of range"),
      (8, "locations[6]", "no time"),
    ] {
      #expect(
        run.stderr.contains("waymark import: \(path):\(line): \(location): \(reason)"),
        "\(run.stderr)")
    }
    #expect(run.stderr.contains("points: 3; bad records: 6"), "\(run.stderr)")
    #expect(run.stderr.contains("track: 3 new point(s)"), "\(run.stderr)")
  }

  @Test func badGPXPointsAndCSVRowsAreNamedByLineAndTheRestImported() throws {
    let gpx = """
      <?xml version="1.0"?>
      <gpx version="1.1"><trk><trkseg>
      <trkpt lat="48.1" lon="11.5"><time>2024-03-05T08:00:00Z</time></trkpt>
      <trkpt lat="nan" lon="11.5"><time>2024-03-05T08:00:01Z</time></trkpt>
      <trkpt lat="48.1" lon="11.5"></trkpt>
      <trkpt lat="48.1" lon="11.5"><ele>500</ele><time>2024-03-05T08:00:03Z</time></trkpt>
      </trkseg></trk></gpx>
      """
    let (gpxRun, gpxPath) = try Self.importing(gpx, as: "t.gpx")
    #expect(gpxRun.status == 65)
    #expect(gpxRun.stderr.contains("\(gpxPath):4: trkpt 2: position out of range"))
    #expect(gpxRun.stderr.contains("\(gpxPath):5: trkpt 3: no time"), "\(gpxRun.stderr)")
    #expect(gpxRun.stderr.contains("points: 2; bad records: 2"), "\(gpxRun.stderr)")

    let csv = """
      timestamp,lat,lng,elevation
      2024-03-05T08:00:00Z,48.1,11.5,500
      2024-03-05T08:00:01Z,91,11.5,500
      1709625602,48.1,11.5,inf

      2024-03-05T08:00:03Z,48.1
      """
    let (csvRun, csvPath) = try Self.importing(csv, as: "t.csv")
    #expect(csvRun.status == 65)
    #expect(csvRun.stderr.contains("\(csvPath):3: position out of range"), "\(csvRun.stderr)")
    #expect(csvRun.stderr.contains("\(csvPath):6: 2 field(s)"), "\(csvRun.stderr)")
    // The row with an infinite altitude is kept without it.
    #expect(csvRun.stderr.contains("points: 2; bad records: 2"), "\(csvRun.stderr)")
  }

  @Test func aSemanticVisitOfCenturiesIsBadNotAMillionPoints() throws {
    let visit = """
      {"timelineObjects": [
      {"placeVisit": {"location": {"latitudeE7": 481372000, "longitudeE7": 115756000},
        "duration": {"startTimestamp": "1990-01-01T00:00:00Z", "endTimestamp": "2190-01-01T00:00:00Z"}}},
      {"placeVisit": {"location": {"latitudeE7": 481372000, "longitudeE7": 115756000},
        "duration": {"startTimestamp": "2024-01-01T08:00:00Z", "endTimestamp": "2024-01-01T08:10:00Z"}}}
      ]}
      """
    let (run, path) = try Self.importing(visit, as: "2024_JANUARY.json")
    #expect(run.status == 65)
    #expect(
      run.stderr.contains(
        "\(path):2: timelineObjects[0].placeVisit: a visit longer than 31 days"), "\(run.stderr)")
    // The ten minutes of the second: a point a minute and one at its end.
    #expect(run.stderr.contains("points: 11; bad records: 1"), "\(run.stderr)")
  }

  @Test func aFileWithNoGoodRecordImportsNothingAndSaysSo() throws {
    let (run, path) = try Self.importing(#"{"locations": []}"#, as: "Records.json")
    #expect(run.status == 65)
    #expect(run.stderr.contains("Error: \(path): no point to import"), "\(run.stderr)")
  }

  @Test func anEmptyFileImportsNothingAndSaysSo() throws {
    let (run, path) = try Self.importing("", as: "Records.json")
    #expect(run.status == 65)
    #expect(run.stderr.contains("Error: \(path): the file is empty"), "\(run.stderr)")
  }

  @Test func anUnknownFormatAsksForFormat() throws {
    let (run, _) = try Self.importing(#"{"something": [1, 2]}"#, as: "x.json")
    #expect(run.status == 65)
    #expect(run.stderr.contains("cannot tell the format; give --format"), "\(run.stderr)")
    let forced = try Self.importing(
      #"{"locations": [{"latitudeE7": 1, "longitudeE7": 1, "timestamp": "2024-01-01T00:00:00Z"}]}"#,
      as: "x.txt", ["--format", "records"])
    #expect(forced.run.status == 0, "\(forced.run.stderr)")
  }

  /// Hostile and broken files: each ends with a report and exit 65, never a trap (a crash
  /// would end with a signal, 128 + n, and no summary).
  @Test(arguments: [
    ("empty.json", ""),
    ("empty.gpx", ""),
    ("empty.csv", ""),
    ("brace.json", "{"),
    ("truncated.json", #"{"locations": [{"latitudeE7": 481372000, "longitudeE7": 1157"#),
    ("cut.json", #"{"locations": [{"latitudeE7": 1, "longitudeE7": 1, "timestamp": "2024-0"#),
    (
      "huge.json",
      #"{"locations": [{"latitudeE7": 1e400, "longitudeE7": -1e400, "timestampMs": "9999999999999999999999"}]}"#
    ),
    (
      "overflow.json",
      #"{"locations": [{"latitudeE7": 9223372036854775807, "longitudeE7": 18446744073709551616, "timestamp": "2024-03-05T08:00:00Z"}]}"#
    ),
    (
      "time.json",
      #"{"locations": [{"latitudeE7": 1, "longitudeE7": 1, "timestamp": "9999-99-99T99:99:99+99:99"}]}"#
    ),
    ("deep.json", "{\"locations\": [" + String(repeating: "[", count: 100_000)),
    ("nan.gpx", #"<gpx><trk><trkseg><trkpt lat="NaN" lon="inf"><time>x</time></trkpt>"#),
    ("cut.gpx", #"<gpx><trk><trkseg><trkpt lat="48.1" lon="11.5"><time>2024-03-05T08:00"#),
    ("nan.csv", "time,lat,lon\nnan,nan,nan\n-1e308,1e308,-inf\n"),
    (
      "timeline.json",
      #"{"semanticSegments": [{"startTime": "2024-01-01T00:00:00Z", "endTime": "1970-01-01T00:00:00Z", "visit": {"topCandidate": {"placeLocation": {"latLng": "91°, 181°"}}}}, {"timelinePath": [{"point": "°,°", "time": 1e999}]}]}"#
    ),
    (
      "semantic.json",
      #"{"timelineObjects": [{"placeVisit": {"location": {"latitudeE7": 1, "longitudeE7": 1}, "duration": {"startTimestamp": "2024-01-01T00:00:00Z", "endTimestamp": "2199-12-31T00:00:00Z"}}}, {"activitySegment": {"waypointPath": {"waypoints": [{"latE7": 1, "lngE7": 1}]}}}]}"#
    ),
  ])
  func extremeValuesNeverTrap(name: String, text: String) throws {
    let (run, _) = try Self.importing(text, as: name)
    #expect(run.status == 65, "\(name): \(run.status) \(run.stderr)")
    #expect(run.stderr.contains("waymark import: ") || run.stderr.contains("Error: "))
  }
}
