import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

@Suite("waymark places / visits / stamp (built binary)")
struct CommandLineTests {
  static let places = """
    {"type": "FeatureCollection", "features": [
      {"type": "Feature", "id": "cafe",
       "geometry": {"type": "Point", "coordinates": [13.405, 52.52]},
       "properties": {"name": "Blue Bottle", "radius": 60, "category": "cafe",
                      "town": "Berlin", "image": "https://example.org/a?b=1&c=2"}},
      {"type": "Feature", "id": 7,
       "geometry": {"type": "Point", "coordinates": [13.41, 52.53]},
       "properties": {"name": "Office, \\"HQ\\"", "exitRadius": 150}}
    ]}
    """

  static let events = """
    {"class":"TPV","time":"2026-11-29T12:00:00.000Z","mode":3,"lat":52.52,"lon":13.405,"eph":5.0}
    {"class":"ARRIVAL","time":"2026-11-29T12:00:00.000Z","place":"cafe","name":"Blue Bottle","lat":52.52,"lon":13.405,"reason":{"rule":"inside","distance":3.2}}
    {"class":"TPV","time":"2026-11-29T12:00:01.000Z","mode":3,"lat":52.52,"lon":13.405,"eph":3.0}
    {"class":"DEPARTURE","time":"2026-11-29T12:10:00.000Z","place":"cafe","name":"Blue Bottle","lat":52.53,"lon":13.405,"arrival":"2026-11-29T12:00:00.000Z","duration":600.000,"reason":{"rule":"outside"}}
    {"class":"ARRIVAL","time":"2026-11-29T23:59:00.000Z","place":"7","name":"Office","lat":52.53,"lon":13.41,"reason":{"rule":"inside"}}

    """

  /// A directory with a store holding the two places; `store` is its path.
  func prepared() throws -> (TemporaryDirectory, String) {
    let directory = try TemporaryDirectory()
    let file = try directory.write("places.geojson", Self.places)
    let store = directory.path("state/w.db")
    let result = try waymark(["places", "import", file, "--store", store], in: directory)
    #expect(result.status == 0, "\(result.stderr)")
    #expect(result.stderr.contains("Imported 2 places"))
    return (directory, store)
  }

  @Test("import then list as text and NDJSON")
  func importAndList() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let text = try waymark(["places", "list", "--store", store], in: directory)
    #expect(text.status == 0)
    #expect(text.stdout.split(separator: "\n").count == 2)
    #expect(text.stdout.contains("cafe\tBlue Bottle\t52.520000\t13.405000\t60 m"))
    let json = try waymark(["places", "list", "--json", "--store=\(store)"], in: directory)
    #expect(
      json.stdout.split(separator: "\n").first
        == #"{"class":"PLACE","id":"7","name":"Office, \"HQ\"","lat":52.5300000,"lon":13.4100000,"radius":100.0,"exitRadius":150.0,"visited":false,"visitCount":0}"#
    )
  }

  @Test("a bad file is rejected whole, naming the feature index; nothing is imported")
  func importIsAtomic() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    var features: [String] = []
    for index in 0..<50 {
      features.append(
        #"{"type":"Feature","id":"p\#(index)","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"P"}}"#
      )
    }
    features[37] =
      #"{"type":"Feature","id":"p37","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}"#
    let file = try directory.write(
      "bad.geojson",
      #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#)
    let result = try waymark(["places", "import", file, "--store", store], in: directory)
    #expect(result.status == 65)
    #expect(result.stderr == "Error: \(file): feature 37: missing properties.name\n")
    let database = try Database(path: store)
    #expect(try database.read { try PlaceRepository($0).count() } == 2)
  }

  @Test("the environment chooses the default store")
  func defaultStore() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let file = try directory.write("places.geojson", Self.places)
    let xdg = directory.path("xdg")
    let result = try waymark(
      ["places", "import", file], in: directory, environment: ["XDG_STATE_HOME": xdg])
    #expect(result.status == 0)
    #expect(FileManager.default.fileExists(atPath: "\(xdg)/waymark/waymark.db"))
    let home = try waymark(["places", "import", file], in: directory)
    #expect(home.status == 0)
    #expect(
      FileManager.default.fileExists(atPath: directory.path(".local/state/waymark/waymark.db")))
    let explicit = directory.path("explicit.db")
    _ = try waymark(
      ["places", "import", file], in: directory,
      environment: ["WAYMARK_STORE": explicit, "STATE_DIRECTORY": directory.path("sd")])
    #expect(FileManager.default.fileExists(atPath: explicit))
    let stateDirectory = directory.path("sd")
    _ = try waymark(
      ["places", "import", file], in: directory,
      environment: ["STATE_DIRECTORY": stateDirectory, "XDG_STATE_HOME": xdg])
    #expect(FileManager.default.fileExists(atPath: "\(stateDirectory)/waymark.db"))
  }

  @Test("add, remove and export")
  func addRemoveExport() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let added = try waymark(
      [
        "places", "add", "--name", "Blue Bottle", "--lat", "52.5", "--lon", "13.4", "--radius",
        "25", "--store", store,
      ], in: directory)
    #expect(added.status == 0)
    #expect(added.stdout == "blue-bottle\n")
    let again = try waymark(
      [
        "places", "add", "--name", "Blue Bottle", "--lat", "52.5", "--lon", "13.4", "--store",
        store,
      ], in: directory)
    #expect(again.stdout == "blue-bottle-2\n")
    let duplicate = try waymark(
      [
        "places", "add", "--name", "X", "--lat", "1", "--lon", "2", "--id", "cafe", "--store",
        store,
      ],
      in: directory)
    #expect(duplicate.status == 65)
    let badLatitude = try waymark(
      ["places", "add", "--name", "X", "--lat", "91", "--lon", "2", "--store", store], in: directory
    )
    #expect(badLatitude.status == 64)
    #expect(badLatitude.stderr.hasPrefix("Error: '--lat' must be within -90...90.\n"))
    let removed = try waymark(
      ["places", "remove", "blue-bottle-2", "--store", store], in: directory)
    #expect(removed.status == 0)
    #expect(
      removed.stderr
        == "Removed place 'blue-bottle-2' from \(store); kept its 0 visit(s) and 0 event(s).\n")
    let missing = try waymark(
      ["places", "remove", "blue-bottle-2", "--store", store], in: directory)
    #expect(missing.status == 65)
    let export = try waymark(["places", "export", "--store", store], in: directory)
    #expect(export.status == 0)
    let places = try PlaceCollection.decode(Data(export.stdout.utf8))
    #expect(places.map(\.id) == ["7", "blue-bottle", "cafe"])
    #expect(places[1].radiusMeters == 25)
    #expect(places[2].category == "cafe")
    // Export, import into a new store, export again: the same text.
    let file = try directory.write("exported.geojson", export.stdout)
    let copy = directory.path("copy.db")
    #expect(try waymark(["places", "import", file, "--store", copy], in: directory).status == 0)
    let second = try waymark(["places", "export", "--store", copy], in: directory)
    #expect(second.stdout == export.stdout)
  }

  @Test("usage, help and missing-store errors use the documented exit codes")
  func exitCodes() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    for command in ["places", "visits", "stamp"] {
      let help = try waymark([command, "--help"], in: directory)
      #expect(help.status == 0)
      #expect(help.stdout.hasPrefix("USAGE: waymark \(command)"))
      #expect(help.stderr.isEmpty)
    }
    let unknown = try waymark(["places", "frobnicate"], in: directory)
    #expect(unknown.status == 64)
    #expect(
      unknown.stderr.hasPrefix("Error: Unknown subcommand 'frobnicate'.\nUSAGE: waymark places"))
    #expect(try waymark(["visits", "--format", "xml"], in: directory).status == 64)
    #expect(try waymark(["visits", "--since", "yesterday"], in: directory).status == 64)
    #expect(try waymark(["places", "list", "--name", "x"], in: directory).status == 64)
    let none = try waymark(["visits", "--store", directory.path("none.db")], in: directory)
    #expect(none.status == 66)
    #expect(!FileManager.default.fileExists(atPath: directory.path("none.db")))
    #expect(
      try waymark(["places", "import", directory.path("absent.geojson")], in: directory).status
        == 66)
    let junk = try directory.write("junk.db", String(repeating: "junk\n", count: 300))
    #expect(try waymark(["visits", "--store", junk], in: directory).status == 65)
  }

  @Test("a store from a newer Waymark is refused with exit 65 and a clear message")
  func newerStore() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("newer.db")
    _ = try Database(
      path: path,
      migrations: Schema.migrations + [Migration(version: 99, name: "future", sql: "SELECT 1;")])
    let result = try waymark(["places", "list", "--store", path], in: directory)
    #expect(result.status == 65)
    #expect(result.stderr.contains("schema version 99"))
  }

  /// A place whose name and category a spreadsheet would run as formulas (a places file or a
  /// broker's `setWaypoints` may carry them): the CSV cells start with `'` inside quotes; a
  /// plain name and a negative coordinate stay as they are (the controls).
  @Test("CSV cells that look like formulas are written as text")
  func csvFormulaCells() throws {
    let directory = try TemporaryDirectory()
    let places = #"""
      {"type":"FeatureCollection","features":[
        {"type":"Feature","id":"f","geometry":{"type":"Point","coordinates":[-0.1,-33.9]},
         "properties":{"name":"=HYPERLINK(\"http://x\")","category":"@SUM(1)","town":"+1",
         "address":"-2","subtitle":"Plain"}}]}
      """#
    let file = try directory.write("places.geojson", places)
    let store = directory.path("state/w.db")
    let imported = try waymark(["places", "import", file, "--store", store], in: directory)
    #expect(imported.status == 0, "\(imported.stderr)")
    let events = try directory.write(
      "events.ndjson",
      #"{"class":"ARRIVAL","time":"2026-11-29T12:00:00.000Z","place":"f","name":"x","lat":-33.9,"lon":-0.1,"reason":{"rule":"inside"}}"#
        + "\n")
    let recorded = try waymark(["visits", "record", events, "--store", store], in: directory)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let csv = try waymark(["visits", "--format", "csv", "--store", store], in: directory)
    let row = try #require(csv.stdout.components(separatedBy: "\r\n").dropFirst().first)
    #expect(row.hasPrefix(#"f,"'=HYPERLINK(""http://x"")",2026-11-29T12:00:00.000Z"#), "\(row)")
    #expect(row.contains(#",-33.9000000,-0.1000000,"'@SUM(1)",Plain,"'-2","'+1","#), "\(row)")
  }

  @Test("visits record, then every output format")
  func visitsFormats() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let file = try directory.write("events.ndjson", Self.events)
    let recorded = try waymark(["visits", "record", file, "--store", store], in: directory)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    #expect(recorded.stderr.contains("Recorded 3 events"))
    let again = try waymark(["visits", "record", file, "--store", store], in: directory)
    #expect(again.stderr.contains("(0 new, 3 already recorded)"))

    let ndjson = try waymark(["visits", "--store", store], in: directory)
    #expect(
      ndjson.stdout == """
        {"class":"VISIT","place":"cafe","name":"Blue Bottle","arrival":"2026-11-29T12:00:00.000Z","departure":"2026-11-29T12:10:00.000Z","duration":600.000,"lat":52.5200000,"lon":13.4050000,"category":"cafe","town":"Berlin","image":"https://example.org/a?b=1&c=2","fixes":2,"accuracy":3.0,"source":"\(file)","removed":null}
        {"class":"VISIT","place":"7","name":"Office, \\"HQ\\"","arrival":"2026-11-29T23:59:00.000Z","departure":null,"duration":null,"lat":52.5300000,"lon":13.4100000,"fixes":0,"source":"\(file)","removed":null}

        """)
    let csv = try waymark(["visits", "--format", "csv", "--store", store], in: directory)
    #expect(
      csv.stdout.components(separatedBy: "\r\n").dropLast()
        == [
          "place,name,arrival,departure,duration,fixes,best_accuracy,source,lat,lon,category,"
            + "subtitle,address,town,url,image,detail,removed",
          "cafe,Blue Bottle,2026-11-29T12:00:00.000Z,2026-11-29T12:10:00.000Z,600.000,2,3.0,\(file),"
            + "52.5200000,13.4050000,cafe,,,Berlin,,https://example.org/a?b=1&c=2,,",
          #"7,"Office, ""HQ""",2026-11-29T23:59:00.000Z,,,0,,"# + file
            + ",52.5300000,13.4100000,,,,,,,,",
        ])
    let geojson = try waymark(["visits", "--format", "geojson", "--store", store], in: directory)
    let object = try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any]
    let features = object?["features"] as? [[String: Any]]
    #expect(features?.count == 2)
    let geometry = features?.first?["geometry"] as? [String: Any]
    #expect(geometry?["coordinates"] as? [Double] == [13.405, 52.52])
    let properties = features?.first?["properties"] as? [String: Any]
    #expect(properties?["category"] as? String == "cafe")
    #expect(properties?["removed"] is NSNull)
    #expect(properties?["subtitle"] == nil)
    let gpx = try waymark(["visits", "--format", "gpx", "--store", store], in: directory)
    #expect(gpx.stdout.contains(#"<wpt lat="52.5200000" lon="13.4050000">"#))
    #expect(gpx.stdout.contains("<name>Office, &quot;HQ&quot;</name>"))
    #expect(gpx.stdout.hasSuffix("</gpx>\n"))
    let text = try waymark(["visits", "--format", "text", "--store", store], in: directory)
    #expect(
      text.stdout.contains(
        "10m 0s      Blue Bottle (cafe)  cafe · Berlin · https://example.org/a?b=1&c=2\n"))
    #expect(text.stdout.contains("(still there)"))

    let one = try waymark(["visits", "--place", "7", "--store", store], in: directory)
    #expect(one.stdout.split(separator: "\n").count == 1)
    let since = try waymark(
      ["visits", "--since", "2026-11-29T12:00:01Z", "--store", store], in: directory)
    #expect(since.stdout.split(separator: "\n").count == 1)
    let day = try waymark(["visits", "--since", "2026-11-29", "--store", store], in: directory)
    #expect(day.stdout.split(separator: "\n").count == 2)
  }

  @Test("places remove keeps the history; visits delete deletes it; the id can be used again")
  func removeKeepsHistory() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let file = try directory.write("events.ndjson", Self.events)
    #expect(try waymark(["visits", "record", file, "--store", store], in: directory).status == 0)

    let cafe = try waymark(["places", "remove", "cafe", "--store", store], in: directory)
    #expect(cafe.status == 0)
    #expect(
      cafe.stderr
        == "Removed place 'cafe' from \(store); kept its 1 visit(s) and 2 event(s) "
        + "('waymark visits delete --place cafe --removed' deletes them).\n")
    let office = try waymark(["places", "remove", "7", "--store", store], in: directory)
    #expect(
      office.stderr
        == "Removed place '7' from \(store); kept its 1 visit(s) and 1 event(s), closing the "
        + "open visit ('waymark visits delete --place 7 --removed' deletes them).\n")
    #expect(try waymark(["places", "list", "--store", store], in: directory).stdout.isEmpty)

    // Both visits are still listed, as they were, each saying when its place was removed.
    let kept = try waymark(["visits", "--store", store], in: directory)
    let lines = kept.stdout.split(separator: "\n").map(String.init)
    #expect(lines.count == 2)
    #expect(
      lines[0].hasPrefix(
        #"{"class":"VISIT","place":"cafe","name":"Blue Bottle","arrival":"2026-11-29T12:00:00.000Z","departure":"2026-11-29T12:10:00.000Z","duration":600.000,"lat":52.5200000,"lon":13.4050000,"category":"cafe","town":"Berlin","image":"https://example.org/a?b=1&c=2","fixes":2,"accuracy":3.0,"source":"\#(file)","removed":""#
      ))
    // The open office visit was closed at its arrival (no fix was counted inside).
    #expect(lines[1].contains(#""departure":"2026-11-29T23:59:00.000Z","duration":0.000,"#))
    for line in lines {
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any]
      let removed = try #require(object?["removed"] as? String)
      let when = try #require(Timestamp.parse(removed))
      #expect(abs(when.timeIntervalSinceNow) < 60)
    }
    let text = try waymark(["visits", "--format", "text", "--store", store], in: directory)
    #expect(text.stdout.split(separator: "\n").allSatisfy { $0.contains("  [place removed 20") })
    let csv = try waymark(["visits", "--format", "csv", "--store", store], in: directory)
    #expect(
      csv.stdout.components(separatedBy: "\r\n").dropFirst().allSatisfy {
        $0.isEmpty || $0.hasSuffix("Z")
      })
    let gpx = try waymark(["visits", "--format", "gpx", "--store", store], in: directory)
    #expect(gpx.stdout.contains(", category cafe, town Berlin, place removed 20"))
    #expect(
      gpx.stdout.contains(
        #"<link href="https://example.org/a?b=1&amp;c=2"><text>image</text></link>"#))
    let geojson = try waymark(["visits", "--format", "geojson", "--store", store], in: directory)
    let collection =
      try JSONSerialization.jsonObject(with: Data(geojson.stdout.utf8)) as? [String: Any]
    let features = collection?["features"] as? [[String: Any]] ?? []
    #expect(features.count == 2)
    #expect(
      features.allSatisfy { (($0["properties"] as? [String: Any])?["removed"] as? String) != nil })

    // The id again: a new place, with no visits of its own yet.
    let added = try waymark(
      [
        "places", "add", "--id", "cafe", "--name", "Café Nero", "--lat", "52.52", "--lon",
        "13.405", "--store", store,
      ], in: directory)
    #expect(added.status == 0, "\(added.stderr)")
    let listed = try waymark(["places", "list", "--store", store], in: directory)
    #expect(listed.stdout == "cafe\tCafé Nero\t52.520000\t13.405000\t100 m\n")
    let stamped = try waymark(
      ["stamp", "--place", "cafe", "--time", "2026-11-30T09:00:00Z", "--store", store],
      in: directory)
    #expect(stamped.stdout.contains(#""name":"Café Nero""#))
    #expect(stamped.stdout.hasSuffix(#""source":"stamp","removed":null}"# + "\n"))
    let both = try waymark(["visits", "--place", "cafe", "--store", store], in: directory)
    let names = both.stdout.split(separator: "\n").map { line in
      (try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])?["name"]
        as? String
    }
    #expect(names == ["Blue Bottle", "Café Nero"])
    let onlyRemoved = try waymark(["visits", "--removed", "--store", store], in: directory)
    #expect(onlyRemoved.stdout.split(separator: "\n").count == 2)

    // Deleting history is explicit, selected, and counted.
    let unselected = try waymark(["visits", "delete", "--store", store], in: directory)
    #expect(unselected.status == 64)
    #expect(unselected.stderr.hasPrefix("Error: 'visits delete' needs '--place <id>'"))
    #expect(
      try waymark(
        ["visits", "delete", "--removed", "--format", "csv", "--store", store],
        in: directory
      ).status == 64)
    let removedCafe = try waymark(
      ["visits", "delete", "--place", "cafe", "--removed", "--store", store], in: directory)
    #expect(removedCafe.status == 0)
    #expect(
      removedCafe.stderr
        == "Deleted 1 visit(s) and 2 event(s) (place 'cafe', removed places only) from "
        + "\(store).\n")
    let remaining = try waymark(["visits", "--place", "cafe", "--store", store], in: directory)
    #expect(remaining.stdout.split(separator: "\n").count == 1)
    #expect(remaining.stdout.contains("Café Nero"))
    let older = try waymark(
      ["visits", "delete", "--before", "2030-01-01", "--store", store], in: directory)
    #expect(
      older.stderr
        == "Deleted 2 visit(s) and 1 event(s) (arriving before 2030-01-01T00:00:00.000Z) from "
        + "\(store).\n")
    #expect(try waymark(["visits", "--store", store], in: directory).stdout.isEmpty)
    let none = try waymark(
      ["visits", "delete", "--removed", "--store", directory.path("none.db")], in: directory)
    #expect(none.status == 66)
  }

  @Test("visits record reads standard input")
  func recordFromStandardInput() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let file = try directory.write("events.ndjson", Self.events)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Products.executable("waymark"))
    process.arguments = ["visits", "record", "--store", store]
    // (LLVM_PROFILE_FILE: in a coverage run, waymark's profile joins the run's.)
    process.environment = ["HOME": directory.url.path].merging(
      ProcessInfo.processInfo.environment.filter { $0.key == "LLVM_PROFILE_FILE" }
    ) { $1 }
    process.standardInput = try FileHandle(forReadingFrom: URL(fileURLWithPath: file))
    process.standardError = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    #expect(process.terminationStatus == 0)
    let visits = try Database(path: store).read { try VisitRepository($0).all() }
    #expect(visits.map(\.visit.source) == ["<stdin>", "<stdin>"])
    #expect(visits.map(\.visit.isOpen) == [false, true])
  }

  @Test("visits record rejects a bad line by number and an unknown place, exit 65")
  func recordErrors() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let bad = try directory.write("bad.ndjson", "{\"class\":\"TPV\"}\n{oops\n")
    let result = try waymark(["visits", "record", bad, "--store", store], in: directory)
    #expect(result.status == 65)
    #expect(result.stderr == "Error: \(bad):2: not a JSON object\n")
    let unknown = try directory.write(
      "unknown.ndjson",
      #"{"class":"ARRIVAL","time":"2026-11-29T12:00:00.000Z","place":"nowhere","reason":{}}"# + "\n"
    )
    let second = try waymark(["visits", "record", unknown, "--store", store], in: directory)
    #expect(second.status == 65)
    #expect(second.stderr.contains(":1: no place with id 'nowhere'"))
  }

  @Test("stamp: by place, by position, by the last recorded fix only when it is fresh")
  func stamp() throws {
    let (directory, store) = try prepared()
    defer { directory.remove() }
    let byPlace = try waymark(
      ["stamp", "--place", "7", "--time", "2026-11-29T08:00:00Z", "--store", store], in: directory)
    #expect(byPlace.status == 0)
    #expect(
      byPlace.stdout
        == #"{"class":"VISIT","place":"7","name":"Office, \"HQ\"","arrival":"2026-11-29T08:00:00.000Z","departure":"2026-11-29T08:00:00.000Z","duration":0.000,"lat":52.5300000,"lon":13.4100000,"fixes":0,"source":"stamp","removed":null}"#
        + "\n")
    let byPosition = try waymark(
      ["stamp", "--lat", "52.5201", "--lon", "13.405", "--store", store], in: directory)
    #expect(byPosition.status == 0)
    #expect(byPosition.stdout.contains(#""place":"cafe""#))
    let outside = try waymark(
      ["stamp", "--lat", "10", "--lon", "10", "--store", store], in: directory)
    #expect(outside.status == 65)
    #expect(outside.stderr == "Error: the position is not inside any place\n")
    // No daemon here: a socket path where nothing is.
    let noDaemon = ["--socket", directory.path("no-waymarkd.sock"), "--store", store]
    let noFix = try waymark(["stamp"] + noDaemon, in: directory)
    #expect(noFix.status == 69)
    #expect(
      noFix.stderr
        == "Error: no fix recorded in \(store); give --place or --lat/--lon, or start waymarkd\n")
    let events = try directory.write(
      "fix.ndjson",
      #"{"class":"TPV","time":"2026-11-29T09:00:00.000Z","mode":2,"lat":52.5301,"lon":13.41}"#
        + "\n")
    let recorded = try waymark(["visits", "record", events, "--store", store], in: directory)
    #expect(recorded.status == 0, "\(recorded.stderr)")
    let byLastFix = try waymark(
      ["stamp", "--time", "2026-11-29T09:00:30Z"] + noDaemon, in: directory)
    #expect(byLastFix.status == 0, "\(byLastFix.stderr)")
    #expect(byLastFix.stdout.contains(#""place":"7""#))
    // The same fix, 312 s before the stamp: too old by default, fine with a larger --max-age.
    let stale = try waymark(["stamp", "--time", "2026-11-29T09:05:12Z"] + noDaemon, in: directory)
    #expect(stale.status == 69)
    #expect(
      stale.stderr
        == "Error: the last fix is 312 s old (limit 60 s); give --lat/--lon or start waymarkd\n")
    #expect(stale.stdout.isEmpty)
    let later = try waymark(
      ["stamp", "--time", "2026-11-29T08:59:00Z", "--max-age", "30"] + noDaemon, in: directory)
    #expect(later.status == 69)
    #expect(later.stderr.contains("the last fix is 60 s after the stamp time (limit 30 s)"))
    let allowed = try waymark(
      ["stamp", "--time", "2026-11-29T09:05:12Z", "--max-age", "312"] + noDaemon, in: directory)
    #expect(allowed.status == 0)
    #expect(allowed.stdout.contains(#""arrival":"2026-11-29T09:05:12.000Z""#))
    let places = try Database(path: store).read { try PlaceRepository($0).all() }
    #expect(places.map(\.id) == ["7", "cafe"])
    #expect(places.map(\.visitCount) == [3, 1])
    #expect(places.allSatisfy { $0.visited })
    let badAge = try waymark(["stamp", "--max-age", "-1"] + noDaemon, in: directory)
    #expect(badAge.status == 64)
    #expect(badAge.stderr.hasPrefix("Error: '--max-age' must be >= 0 seconds.\n"))
    let ageWithPlace = try waymark(
      ["stamp", "--place", "7", "--max-age", "5", "--store", store], in: directory)
    #expect(ageWithPlace.status == 64)
    #expect(
      try waymark(["stamp", "--place", "7", "--lat", "1", "--lon", "2"], in: directory).status == 64
    )
  }
}
