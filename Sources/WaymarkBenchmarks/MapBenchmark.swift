import Foundation
import WaymarkCore
import WaymarkProcess
import WaymarkStore
import WaymarkTesting

/// `waymark-bench map [--rows <n>] [--dir <path>] [--waymark <path>]`: what `waymark map` costs
/// on a big track, and how large the file gets (docs/guide/tracks-and-map.md, "Map").
///
/// Two tracks of `n` points each (default 1,000,000) are stored through
/// ``TrackRepository/insert(_:)``, then the built `waymark map --output <file>.svg` runs on
/// each: a 10 Hz drive (``TrackBenchmark/points(_:)``: 1.5 m between points, about 1,500 km
/// of meandering road) and a month of commutes (a 2 km loop driven again and again, a point a
/// second at 15 m/s with 3 m of noise). Reported: wall and CPU time (of `waymark map`, with
/// GNU `time` around it when installed), its peak memory,
/// the file's size and the track vertices drawn. Then a year of history (``SyntheticYear``) as
/// the interactive page: its time, size and track points at each zoom level.
enum MapBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--rows", default: "1000000", "Points of each track"),
    .directory,
    .value("--waymark", "<path>", "The waymark to run (default: the one next to this one)."),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    let rows = options.int("--rows")
    let waymark = options.executable("waymark", option: "--waymark")
    let work = try options.workDirectory("map")
    defer { try? FileManager.default.removeItem(atPath: work) }
    print("## waymark-bench map (\(rows) points a track, in \(work))")
    print("")
    print("| Track | Points | Wall (s) | CPU (s) | Peak RSS (MB) | SVG (bytes) | Vertices drawn |")
    print("|---|---:|---:|---:|---:|---:|---:|")
    for (name, points) in [
      ("10 Hz drive, 1.5 m apart", TrackBenchmark.points(rows)), ("2 km loop, 1 Hz", loop(rows)),
    ] {
      let store = (work as NSString).appendingPathComponent("map.db")
      try? FileManager.default.removeItem(atPath: store)
      let database = try Database(path: store)
      var start = 0
      while start < points.count {
        let end = min(start + 10_000, points.count)
        try database.write { _ = try TrackRepository($0).insert(points[start..<end]) }
        start = end
      }
      let output = (work as NSString).appendingPathComponent("map.svg")
      // GNU time (Debian package `time`) reports the child's own peak; getrusage's
      // RUSAGE_CHILDREN would count this process's memory, which a spawned child shares
      // until its exec.
      let peakFile = (work as NSString).appendingPathComponent("peak.txt")
      let time = "/usr/bin/time"
      let measured = FileManager.default.isExecutableFile(atPath: time)
      let command =
        (measured ? [time, "-f", "%M", "-o", peakFile] : [])
        + [waymark, "map", "--store", store, "--output", output]
      var run: CommandRun?
      let timing = try StoreBenchmark.measure {
        run = try CommandRun.run(command[0], Array(command.dropFirst()))
      }
      guard let run, run.status == 0 else {
        print("waymark map failed: \(run?.stderr ?? "")")
        exit(70)
      }
      let peak =
        measured
        ? (try? String(contentsOfFile: peakFile, encoding: .utf8))
          .flatMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
          .map { String(format: "%.1f", $0 / 1024) } ?? "?" : "–"
      let svg = try String(contentsOfFile: output, encoding: .utf8)
      let vertices = svg.split(separator: "\n").filter { $0.hasPrefix("<path class=\"track\"") }
        .reduce(0) { $0 + trackVertices($1) }
      print(
        "| \(name) | \(points.count) | \(String(format: "%.2f", timing.wall)) | "
          + "\(String(format: "%.2f", timing.cpu)) | "
          + "\(peak) | \(svg.utf8.count) | "
          + "\(vertices) |")
    }
    print("")
    print("Peak RSS: `waymark map`'s own, from GNU time's %M (– when /usr/bin/time is absent).")
    try year(in: work, waymark: waymark)
  }

  /// The interactive page of a year of history (``SyntheticYear``): the time of `waymark map
  /// --format html`, the page's size and the points of the track at each zoom level.
  static func year(in work: String, waymark: String) throws {
    let store = (work as NSString).appendingPathComponent("year.db")
    try? FileManager.default.removeItem(atPath: store)
    let points = SyntheticYear.points()
    try Database(path: store).write { _ = try TrackRepository($0).insert(points) }
    let output = (work as NSString).appendingPathComponent("year.html")
    var run: CommandRun?
    let timing = try StoreBenchmark.measure {
      run = try CommandRun.run(
        waymark, ["map", "--store", store, "--output", output, "--tiles", "none"])
    }
    guard let run, run.status == 0 else {
      print("waymark map --format html failed: \(run?.stderr ?? "")")
      exit(70)
    }
    let page = try String(contentsOfFile: output, encoding: .utf8)
    print("")
    print(
      "A year (\(points.count) points): `waymark map --format html` \(String(format: "%.2f", timing.wall)) s "
        + "wall, \(String(format: "%.2f", timing.cpu)) s CPU, \(page.utf8.count) bytes.")
    print("")
    print("| Zoom level (drawn up to) | Track points |")
    print("|---:|---:|")
    for level in page.matches(of: /\{"zoom":([0-9]+),"points":([0-9]+),/) {
      print("| \(level.output.1) | \(level.output.2) |")
    }
  }

  /// The vertices of a track path (`d="Mx yLx y x y Mx yh0 …"`): its numbers, two a vertex.
  static func trackVertices(_ element: Substring) -> Int {
    guard let start = element.range(of: " d=\"") else { return 0 }
    let d = element[start.upperBound...].prefix { $0 != "\"" }
    return d.replacing("h0", with: "").split { $0 == " " || $0 == "M" || $0 == "L" }.count / 2
  }

  /// A 2 km circle driven at 15 m/s, a point a second with 3 m of noise, a segment a day.
  static func loop(_ count: Int) -> [TrackPoint] {
    let start = Timestamp.date(milliseconds: 1_795_939_200_000)
    let center = Coordinate(latitude: 45.764, longitude: 4.8357)
    var generator = SeededGenerator(seed: 5)
    let radius = 1000.0
    return (0..<count).map { index in
      let bearing = (Double(index) * 15 / radius * 180 / .pi).truncatingRemainder(dividingBy: 360)
      let onRoad = center.offset(by: radius, bearingDegrees: bearing)
      let coordinate = onRoad.offset(
        by: 3 * generator.nextUnit(), bearingDegrees: 360 * generator.nextUnit())
      return TrackPoint(
        timestamp: start.addingTimeInterval(Double(index)), coordinate: coordinate,
        altitude: nil, speed: 15, course: nil, horizontalAccuracy: 4,
        segment: 1 + index / 86_400)
    }
  }
}
