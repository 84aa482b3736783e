import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// `waymark import` through the real binary, into real SQLite stores: a GPX written by the real
/// gpsbabel, Google Takeout samples (Tests/Fixtures/import), GeoJSON and CSV tracks, each
/// giving the place events and visits the replay of the same points gives.
@Suite struct ImportCommandTests {
  static let fixtures = Products.packageRoot.appendingPathComponent("Tests/Fixtures/import")
  static let gpsbabel = "/usr/bin/gpsbabel"

  /// The NDJSON objects of `output` of class `name`, each without the members in `dropping`.
  static func objects(
    _ output: String, _ name: String, dropping: Set<String> = ["source"]
  ) throws -> [[String: NSObject]] {
    try output.split(separator: "\n").compactMap { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: NSObject]
      guard object["class"] == NSString(string: name) else { return nil }
      return object.filter { !dropping.contains($0.key) }
    }
  }

  /// The values of `key` in `objects`, as text.
  static func values(_ objects: [[String: NSObject]], _ key: String) -> [String] {
    objects.map { $0[key].map { "\($0)" } ?? "nil" }
  }

  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: gpsbabel),
      "gpsbabel is not installed (Scripts/install-deps.sh installs it)"))
  func aGPXWrittenByGpsbabelGivesTheSameVisitsAsReplayingTheDrivesNMEA() throws {
    let scratch = try ScratchDirectory("import")
    let log = scratch.path("drive.nmea")
    let gpx = scratch.path("drive.gpx")
    let places = Products.packageRoot.appendingPathComponent("Demo/places.geojson").path
    let route = Products.packageRoot.appendingPathComponent("Demo/drive.route").path
    let synthesized = try CommandRun.waymark(["synthesize", route, "--output", log])
    try #require(synthesized.status == 0, "\(synthesized.stderr)")
    // GPX 1.0 keeps the speed and course gpsbabel reads from RMC; hdop, fix and sat are
    // written in either version.
    let babel = try CommandRun.run(
      Self.gpsbabel, ["-i", "nmea", "-f", log, "-o", "gpx,gpxver=1.0", "-F", gpx])
    try #require(babel.status == 0, "\(babel.stderr)")

    let replay = try CommandRun.waymark(
      ["replay", log, "--visits", "--places", places, "--store", scratch.path("replay.db")])
    let imported = try CommandRun.waymark(
      ["import", gpx, "--places", places, "--store", scratch.path("import.db")])
    #expect(replay.status == 0, "\(replay.stderr)")
    #expect(imported.status == 0, "\(imported.stderr)")
    #expect(imported.stderr.contains("points: 3904; bad records: 0"), "\(imported.stderr)")
    // The stays: identical but for their source (the file's name).
    let replayed = try Self.objects(replay.output, "VISIT")
    let visits = try Self.objects(imported.output, "VISIT")
    #expect(visits.count == 4)
    #expect(visits == replayed)
    // The place events: the same times, places and reasons. The position of a pass-through
    // (interpolated between two fixes) may differ in the ninth decimal: gpsbabel writes nine
    // decimals of a degree, NMEA carries minutes to four.
    for name in ["ARRIVAL", "DEPARTURE"] {
      let drop: Set<String> = ["source", "lat", "lon"]
      let ours = try Self.objects(imported.output, name, dropping: drop)
      #expect(ours.count == 5)
      #expect(ours == (try Self.objects(replay.output, name, dropping: drop)))
    }
    // And the store: the same visits (`waymark visits` lists them), the same track.
    let stored = try CommandRun.waymark(["visits", "--store", scratch.path("import.db")])
    let storedReplay = try CommandRun.waymark(["visits", "--store", scratch.path("replay.db")])
    #expect(!(try Self.objects(stored.output, "VISIT")).isEmpty)
    #expect(try Self.objects(stored.output, "VISIT") == Self.objects(storedReplay.output, "VISIT"))
    #expect(imported.stderr.contains("track: 444 new point(s) of 444 kept"), "\(imported.stderr)")
  }

  /// `waymark import` of the fixture `name` with the fixtures' places, into a new store.
  static func importFixture(_ name: String) throws -> CommandRun {
    let scratch = try ScratchDirectory("import")
    let run = try CommandRun.waymark([
      "import", fixtures.appendingPathComponent(name).path, "--places",
      fixtures.appendingPathComponent("places.geojson").path, "--store",
      scratch.path("store.db"),
    ])
    #expect(run.status == 0, "\(run.stderr)")
    return run
  }

  /// The place events of `run` as `CLASS place time`.
  static func placeEvents(_ run: CommandRun) throws -> Set<String> {
    let events = try objects(run.output, "ARRIVAL") + objects(run.output, "DEPARTURE")
    return Set(events.map { "\($0["class"]!) \($0["place"]!) \($0["time"]!)" })
  }

  @Test func takeoutRecordsGiveTheVisitsTheSampleWasMadeOf() throws {
    let run = try Self.importFixture("Records.json")
    #expect(run.stderr.contains("(records)\npoints: 116; bad records: 0"), "\(run.stderr)")
    // The sample (out of order, as Takeout's may be): home 08:00-08:30, a walk, the office
    // from 08:50 to the end.
    #expect(
      try Self.placeEvents(run) == [
        "ARRIVAL home 2024-03-05T08:00:00.000Z", "DEPARTURE home 2024-03-05T08:30:00.000Z",
        "ARRIVAL office 2024-03-05T08:50:00.000Z",
      ])
    let visits = try Self.objects(run.output, "VISIT")
    #expect(Self.values(visits, "place") == ["home", "office"])
    #expect(
      Self.values(visits, "arrival") == ["2024-03-05T08:00:00.000Z", "2024-03-05T08:50:00.000Z"])
    #expect(Self.values(visits, "departure_observed").first == "2024-03-05T08:30:00.000Z")
    #expect(run.stderr.contains("track: 116 new point(s)"), "\(run.stderr)")
  }

  @Test func aSemanticTimelineMonthGivesItsPlaceVisits() throws {
    let run = try Self.importFixture("2024_APRIL.json")
    #expect(run.stderr.contains("(semantic)"), "\(run.stderr)")
    // placeVisits: home 07:00-08:00, office 08:20-12:00 (in timestampMs), home from 12:30.
    #expect(
      try Self.placeEvents(run) == [
        "ARRIVAL home 2024-04-02T07:00:00.000Z", "DEPARTURE home 2024-04-02T08:00:00.000Z",
        "ARRIVAL office 2024-04-02T08:20:00.000Z", "DEPARTURE office 2024-04-02T12:00:00.000Z",
        "ARRIVAL home 2024-04-02T12:30:00.000Z",
      ])
    let visits = try Self.objects(run.output, "VISIT")
    #expect(Self.values(visits, "place") == ["home", "office", "home"])
    #expect(
      Self.values(visits, "departure_observed").prefix(2) == [
        "2024-04-02T08:00:00.000Z", "2024-04-02T12:00:00.000Z",
      ])
  }

  @Test func aTimelineExportGivesItsVisitsInUTC() throws {
    let run = try Self.importFixture("Timeline.json")
    // Two raw signals and the segments; an activity record, a Wi-Fi scan and a timeline memory
    // carry no position.
    #expect(run.stderr.contains("records without a position: 3"), "\(run.stderr)")
    // The café 10:00-11:00 and home from 11:20, at UTC+02:00.
    #expect(
      try Self.placeEvents(run) == [
        "ARRIVAL cafe 2024-05-01T08:00:00.000Z", "DEPARTURE cafe 2024-05-01T09:00:00.000Z",
        "ARRIVAL home 2024-05-01T09:20:00.000Z",
      ])
    #expect(Self.values(try Self.objects(run.output, "VISIT"), "place") == ["cafe", "home"])
  }

  @Test func anIPhoneTimelineExportGivesItsVisits() throws {
    let scratch = try ScratchDirectory("import")
    // The iPhone's export: an array of segments, "geo:lat,lng" strings, path points as minutes
    // after the segment's start.
    let text = #"""
      [
        {"startTime": "2024-05-01T10:00:00.000+02:00", "endTime": "2024-05-01T11:00:00.000+02:00",
         "visit": {"hierarchyLevel": "0", "probability": "0.9",
           "topCandidate": {"placeID": "x", "semanticType": "Unknown", "probability": "0.8",
             "placeLocation": "geo:48.142000,11.565000"}}},
        {"startTime": "2024-05-01T11:00:00.000+02:00", "endTime": "2024-05-01T11:20:00.000+02:00",
         "activity": {"start": "geo:48.142000,11.565000", "end": "geo:48.137200,11.575600",
           "distanceMeters": "1100.0", "topCandidate": {"type": "walking", "probability": "0.9"}}},
        {"startTime": "2024-05-01T11:00:00.000+02:00", "endTime": "2024-05-01T11:20:00.000+02:00",
         "timelinePath": [
           {"point": "geo:48.140800,11.567650", "durationMinutesOffsetFromStartTime": "5"},
           {"point": "geo:48.139600,11.570300", "durationMinutesOffsetFromStartTime": "10"},
           {"point": "geo:48.138400,11.572950", "durationMinutesOffsetFromStartTime": "15"}]},
        {"startTime": "2024-05-01T11:20:00.000+02:00", "endTime": "2024-05-01T12:00:00.000+02:00",
         "visit": {"topCandidate": {"placeLocation": "geo:48.137200,11.575600"}}}
      ]
      """#
    let path = scratch.path("location-history.json")
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    let run = try CommandRun.waymark([
      "import", path, "--places", Self.fixtures.appendingPathComponent("places.geojson").path,
      "--store", scratch.path("store.db"),
    ])
    #expect(run.status == 0, "\(run.stderr)")
    // 61 points for the hour at the café (one a minute and the end), 2 for the walk's ends,
    // 3 along its path, 41 for the 40 minutes at home.
    #expect(run.stderr.contains("(timeline)\npoints: 107; bad records: 0"), "\(run.stderr)")
    #expect(
      try Self.placeEvents(run) == [
        "ARRIVAL cafe 2024-05-01T08:00:00.000Z", "DEPARTURE cafe 2024-05-01T09:00:00.000Z",
        "ARRIVAL home 2024-05-01T09:20:00.000Z",
      ])
  }

  /// A stop at A, a drive, a stop at B: the fixes, and the places around A and B.
  static func drive() -> (fixes: [Fix], places: [Place]) {
    let a = Coordinate(latitude: 52.52, longitude: 13.405)
    let b = a.offset(by: 2_500, bearingDegrees: 60)
    var route = RouteSynthesizer(
      start: Timestamp.parse("2025-06-01T09:00:00.000Z")!, origin: a, seed: 5)
    route.noiseMeters = 3
    route.stop(seconds: 300)
    route.drive(to: b, speedMetersPerSecond: 10)
    route.stop(seconds: 400)
    return (
      route.fixes(),
      [
        Place(id: "a", name: "A", coordinate: a, radiusMeters: 60),
        Place(id: "b", name: "B", coordinate: b, radiusMeters: 60),
      ]
    )
  }

  @Test func gpxGeoJSONAndCSVTracksGiveThePlaceEventsOfReplayingTheSameFixes() throws {
    let scratch = try ScratchDirectory("import")
    let drive = Self.drive()
    let places = scratch.path("places.geojson")
    try Data(PlaceCollection.encode(drive.places)).write(to: URL(fileURLWithPath: places))
    let log = scratch.path("drive.nmea")
    try Data(NMEAWriter.log(drive.fixes).utf8).write(to: URL(fileURLWithPath: log))
    let replay = try CommandRun.waymark(["replay", log, "--visits", "--places", places])
    try #require(replay.status == 0, "\(replay.stderr)")

    let times = drive.fixes.map { Timestamp.format($0.time!) }
    let coordinates = drive.fixes.map { fix in
      "[\(fix.coordinate!.longitude),\(fix.coordinate!.latitude)]"
    }
    var csv = "Time;Latitude;Longitude;Accuracy;Speed;Note\n"
    // Rows last first: the import sorts them. A long note makes the file span more than one of
    // reader's 1 MB chunks, rows cut between them.
    let note = "\"" + String(repeating: "a; b, ", count: 200) + "\""
    for (fix, time) in zip(drive.fixes, times).reversed() {
      csv += "\(time);\(fix.coordinate!.latitude);\(fix.coordinate!.longitude);"
      csv += "\(fix.horizontalError!);\(fix.speed!);\(note)\n"
    }
    #expect(csv.utf8.count > 1 << 20)
    let points = zip(coordinates, times).map { coordinate, time in
      #"{"type":"Feature","geometry":{"type":"Point","coordinates":\#(coordinate)},"#
        + #""properties":{"time":"\#(time)"}}"#
    }
    let line =
      #"{"type":"Feature","geometry":{"type":"LineString","coordinates":["#
      + coordinates.joined(separator: ",") + #"]},"properties":{"coordTimes":["#
      + times.map { "\"\($0)\"" }.joined(separator: ",") + "]}}"
    // GPX: two tracks of two segments each, with a namespace prefix, HDOP (accuracy / 5 m, the
    // UERE of an autonomous fix), GPX 1.0's speed and course.
    var gpx = #"<?xml version="1.0"?>\#n<g:gpx version="1.0" xmlns:g="x">\#n"#
    for (index, (fix, time)) in zip(drive.fixes, times).enumerated() {
      let quarter = index * 4 / drive.fixes.count
      if index == 0 || quarter != (index - 1) * 4 / drive.fixes.count {
        if index > 0 { gpx += quarter % 2 == 0 ? "</g:trkseg></g:trk>\n" : "</g:trkseg>\n" }
        gpx += quarter % 2 == 0 ? "<g:trk><g:trkseg>\n" : "<g:trkseg>\n"
      }
      gpx += "<g:trkpt lat='\(fix.coordinate!.latitude)' lon=\"\(fix.coordinate!.longitude)\">"
      gpx += "<g:time>\(time)</g:time><g:speed>\(fix.speed!)</g:speed>"
      gpx += "<g:course>\(fix.track ?? 0)</g:course>"
      gpx += "<g:hdop>\(fix.horizontalError! / 5)</g:hdop></g:trkpt>\n"
    }
    gpx += "</g:trkseg></g:trk></g:gpx>\n"
    let files = [
      ("track.gpx", gpx),
      ("track.csv", csv),
      (
        "points.geojson",
        #"{"type":"FeatureCollection","features":["#
          + points.joined(separator: ",\n") + "]}"
      ),
      ("line.geojson", #"{"type":"FeatureCollection","features":[\#(line)]}"#),
    ]
    for (name, text) in files {
      try Data(text.utf8).write(to: URL(fileURLWithPath: scratch.path(name)))
      let run = try CommandRun.waymark([
        "import", scratch.path(name), "--places", places, "--store", scratch.path("\(name).db"),
      ])
      #expect(run.status == 0, "\(name): \(run.stderr)")
      #expect(run.stderr.contains("points: \(drive.fixes.count); bad records: 0"), "\(run.stderr)")
      for event in ["ARRIVAL", "DEPARTURE"] {
        let keys: Set<String> = ["source", "lat", "lon", "reason"]
        let ours = try Self.objects(run.output, event, dropping: keys)
        #expect(!ours.isEmpty, "\(name)")
        #expect(ours == (try Self.objects(replay.output, event, dropping: keys)), "\(name)")
      }
      let visits = try Self.objects(run.output, "VISIT")
      let replayed = try Self.objects(replay.output, "VISIT")
      #expect(Self.values(visits, "place") == ["a", "b"], "\(name)")
      let arrivals = Self.values(visits, "arrival")
      if name.hasPrefix("track.") {
        // Accuracy and speed in the points: the stays of the replay.
        #expect(arrivals == Self.values(replayed, "arrival"), "\(name)")
      } else {
        // GeoJSON has neither: the detector judges stillness from the positions alone and
        // learns the noise from their spread, so a stay may start a few seconds apart.
        for (ours, theirs) in zip(arrivals, Self.values(replayed, "arrival")) {
          let gap = Timestamp.parse(ours)!.timeIntervalSince(Timestamp.parse(theirs)!)
          #expect(abs(gap) <= 5, "\(name): \(ours) against \(theirs)")
        }
      }
    }
  }

  @Test func historyOlderThanTheStoreLeavesTheStoresMonitorStateAndAddsItsVisits() throws {
    let scratch = try ScratchDirectory("import")
    let store = scratch.path("store.db")
    let places = Self.fixtures.appendingPathComponent("places.geojson").path
    let may = try CommandRun.waymark([
      "import", Self.fixtures.appendingPathComponent("Timeline.json").path, "--places", places,
      "--store", store,
    ])
    try #require(may.status == 0, "\(may.stderr)")
    func monitorState() throws -> [String: MonitorStateRepository.Entry] {
      try Database(path: store, createIfMissing: false).read {
        try MonitorStateRepository($0).all()
      }
    }
    let newer = try monitorState()
    #expect(!newer.isEmpty)
    // April, a month before: its visits are added, and the state waymarkd (or the next
    // replay) resumes stays May's, not April's end (at home from 12:30).
    let april = try CommandRun.waymark([
      "import", Self.fixtures.appendingPathComponent("2024_APRIL.json").path, "--places", places,
      "--store", store,
    ])
    #expect(april.status == 0, "\(april.stderr)")
    #expect(try monitorState() == newer)
    let visits = try Self.objects(
      try CommandRun.waymark(["visits", "--store", store]).output, "VISIT")
    #expect(Self.values(visits, "arrival").contains("2024-04-02T08:20:00.000Z"))
    #expect(Self.values(visits, "arrival").contains("2024-05-01T09:20:00.000Z"))
  }

  @Test func pointsSortedInSeveralRunsOnDiskGiveTheSameBytesAsOneRunInMemory() throws {
    let scratch = try ScratchDirectory("import")
    let records = Self.fixtures.appendingPathComponent("Records.json").path
    let places = Self.fixtures.appendingPathComponent("places.geojson").path
    let inMemory = try CommandRun.waymark(
      ["import", records, "--places", places, "--store", scratch.path("one.db")])
    // Runs of 7 points: 17 run files merged (the sample is out of order across them).
    var environment = ProcessInfo.processInfo.environment
    environment["WAYMARK_IMPORT_RUN_POINTS"] = "7"
    environment["TMPDIR"] = scratch.url.path
    let merged = try CommandRun.waymark(
      ["import", records, "--places", places, "--store", scratch.path("runs.db")],
      environment: environment)
    #expect(inMemory.status == 0, "\(inMemory.stderr)")
    #expect(merged.status == 0, "\(merged.stderr)")
    #expect(!merged.stdout.isEmpty)
    #expect(merged.stdout == inMemory.stdout)
    let track = try CommandRun.waymark(["track", "export", "--store", scratch.path("one.db")])
    #expect(!track.stdout.isEmpty)
    #expect(
      try CommandRun.waymark(["track", "export", "--store", scratch.path("runs.db")]).stdout
        == track.stdout)
    // The run files are unlinked as they are made: nothing is left in $TMPDIR.
    let left = try FileManager.default.contentsOfDirectory(atPath: scratch.url.path)
    #expect(left.allSatisfy { !$0.hasPrefix("waymark-import-") }, "\(left)")
  }

  @Test func theSameFileImportedTwiceGivesTheSameBytesAndAnOverlapIsRefusedWithoutAppend() throws {
    let scratch = try ScratchDirectory("import")
    let records = Self.fixtures.appendingPathComponent("Records.json").path
    let places = Self.fixtures.appendingPathComponent("places.geojson").path
    let first = try CommandRun.waymark(
      ["import", records, "--places", places, "--store", scratch.path("one.db")])
    let second = try CommandRun.waymark(
      ["import", records, "--places", places, "--store", scratch.path("two.db")])
    #expect(first.status == 0, "\(first.stderr)")
    #expect(!first.stdout.isEmpty)
    #expect(first.stdout == second.stdout)
    let listed = try CommandRun.waymark(["visits", "--store", scratch.path("one.db")])
    #expect(
      listed.stdout
        == (try CommandRun.waymark(["visits", "--store", scratch.path("two.db")])).stdout)

    // Again into the same store: the track already covers the file's time.
    let again = try CommandRun.waymark(
      ["import", records, "--places", places, "--store", scratch.path("one.db")])
    #expect(again.status == 65)
    #expect(again.stdout.isEmpty)
    #expect(
      again.stderr.contains(
        "the store already has 116 track point(s) from 2024-03-05T08:00:00.000Z to "
          + "2024-03-05T11:00:00.000Z"), "\(again.stderr)")
    // With --append it goes through the pipeline again and records nothing twice.
    let appended = try CommandRun.waymark(
      ["import", records, "--places", places, "--store", scratch.path("one.db"), "--append"])
    #expect(appended.status == 0, "\(appended.stderr)")
    #expect(appended.stderr.contains("store: 0 new transitions"), "\(appended.stderr)")
    #expect(appended.stderr.contains("track: 0 new point(s)"), "\(appended.stderr)")
    #expect(appended.stderr.contains("store: 0 new stay(s)"), "\(appended.stderr)")
    #expect(
      try CommandRun.waymark(["visits", "--store", scratch.path("one.db")]).stdout == listed.stdout)
  }
}
