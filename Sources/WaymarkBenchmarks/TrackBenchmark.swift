import Foundation
import WaymarkCore
import WaymarkProcess
import WaymarkStore

/// `waymark-bench track [--rows <n>] [--dir <path>] [--daemon-seconds <s>] [--daemon <path>]`:
/// the track's batched inserts against the `sqlite3` shell loading the same rows into the same
/// table in the same run, then the daemon's CPU with and without recording.
///
/// - Inserts: `n` points (default 1,000,000: a 10 Hz drive) through
///   ``TrackRepository/insert(_:)``, in transactions of 100 points (waymarkd's `track-batch`)
///   and of 10,000 (`waymark replay --store`), `synchronous=FULL` as the store opens. The
///   references: the shell's `.import` of the same rows as CSV (one transaction), and a script
///   of `INSERT` statements in transactions of 100 rows.
/// - Daemon: ``DaemonBenchmark``'s run (a real gpsd on a pseudo-terminal, a 10 Hz drive, no
///   places) with `track = off`, with the default rule, and with every fix recorded
///   (`track-min-distance = 0`, `track-min-interval = 0`); CPU as a share of one core.
enum TrackBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--rows", default: "1000000", "Points inserted"),
    .directory,
    .number("--daemon-seconds", "<s>", default: "30", "Length of each daemon run"),
    .daemon,
    .flag("--no-daemon", "Only the inserts: no daemon runs."),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    let rows = options.int("--rows")
    let work = try options.workDirectory("track")
    defer { try? FileManager.default.removeItem(atPath: work) }
    print("## waymark-bench track (\(rows) points, in \(work))")
    print("")
    try insertBenchmark(rows: rows, in: work)
    guard !options.has("--no-daemon") else { return }
    let seconds = options.double("--daemon-seconds")
    let binary = options.daemon
    print("")
    try await daemonBenchmark(binary: binary, seconds: seconds)
  }

  /// A drive at 10 Hz: 0.1 s and about 1.5 m between points, every value known.
  static func points(_ count: Int) -> [TrackPoint] {
    let start = Timestamp.date(milliseconds: 1_795_939_200_000)
    var generator = SeededGenerator(seed: 12)
    var coordinate = Coordinate(latitude: 52.52, longitude: 13.405)
    var course = 90.0
    return (0..<count).map { index in
      course = (course + (generator.nextUnit() - 0.5) * 4).truncatingRemainder(dividingBy: 360)
      coordinate = coordinate.offset(by: 1.5, bearingDegrees: course)
      return TrackPoint(
        timestamp: start.addingTimeInterval(Double(index) / 10), coordinate: coordinate,
        altitude: 40 + generator.nextUnit(), speed: 15, course: course < 0 ? course + 360 : course,
        horizontalAccuracy: 3 + generator.nextUnit() * 2, segment: 1 + index / 100_000)
    }
  }

  static func insertBenchmark(rows: Int, in work: String) throws {
    let generated = points(rows)
    func path(_ name: String) -> String { (work as NSString).appendingPathComponent(name) }
    func insert(batch: Int, into name: String) throws -> StoreBenchmark.Timing {
      let database = try Database(path: path(name))
      var inserted = 0
      let timing = try StoreBenchmark.measure {
        var start = 0
        while start < generated.count {
          let end = min(start + batch, generated.count)
          inserted += try database.write { try TrackRepository($0).insert(generated[start..<end]) }
          start = end
        }
      }
      precondition(inserted == rows, "inserted \(inserted) of \(rows)")
      return timing
    }
    let small = try insert(batch: 100, into: "batch100.db")
    let large = try insert(batch: 10_000, into: "batch10000.db")

    // The same rows, as the shell gets them: CSV for .import, INSERT statements for the script.
    var csv = ""
    var script = "PRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n"
    csv.reserveCapacity(rows * 90)
    script.reserveCapacity(rows * 130)
    for (index, point) in generated.enumerated() {
      let values = [
        String(Timestamp.milliseconds(point.timestamp)), String(point.segment),
        "\(point.coordinate.latitude)", "\(point.coordinate.longitude)", "\(point.altitude!)",
        "\(point.speed!)", "\(point.course!)", "\(point.horizontalAccuracy!)",
      ].joined(separator: ",")
      csv += values + "\n"
      if index % 100 == 0 { script += "BEGIN IMMEDIATE;\n" }
      script += "INSERT INTO track_point VALUES (\(values));\n"
      if index % 100 == 99 || index == rows - 1 { script += "COMMIT;\n" }
    }
    let csvPath = path("track.csv")
    try Data(csv.utf8).write(to: URL(fileURLWithPath: csvPath))
    _ = try Database(path: path("import.db"))
    _ = try Database(path: path("script.db"))
    let shellImport = try StoreBenchmark.measure {
      try StoreBenchmark.sqlite3(
        path("import.db"),
        "PRAGMA journal_mode=WAL;\nPRAGMA synchronous=FULL;\n.mode csv\n"
          + ".import \(csvPath) track_point\n")
    }
    let shellScript = try StoreBenchmark.measure {
      try StoreBenchmark.sqlite3(path("script.db"), script)
    }
    for name in ["import.db", "script.db"] {
      let count = try Database(path: path(name)).read { try TrackRepository($0).count() }
      precondition(count == rows, "sqlite3 loaded \(count) of \(rows) rows into \(name)")
    }

    print("### Track inserts (\(rows) points, WAL, synchronous=FULL)")
    print("")
    print("| Writer | Wall (s) | CPU (s) | Points/s (wall) | Ratio (wall) |")
    print("|---|---:|---:|---:|---:|")
    func line(_ name: String, _ timing: StoreBenchmark.Timing, _ reference: StoreBenchmark.Timing)
      -> String
    {
      "| \(name) | \(String(format: "%.2f", timing.wall)) | \(String(format: "%.2f", timing.cpu)) | "
        + "\(String(format: "%.0f", Double(rows) / timing.wall)) | "
        + "\(String(format: "%.2f", reference.wall / timing.wall)) |"
    }
    print(
      line("sqlite3 shell `.import` CSV, one transaction (reference)", shellImport, shellImport))
    print(line("`TrackRepository.insert`, batches of 10,000", large, shellImport))
    print(
      line(
        "sqlite3 shell, INSERT script in transactions of 100 (reference)", shellScript, shellScript)
    )
    print(line("`TrackRepository.insert`, batches of 100 (waymarkd)", small, shellScript))
    print("")
    print(
      "Ratio = the reference's wall time / this writer's (higher is faster); each batch of ours")
    print("is one `Database.write` transaction; the shell reads its input from a pipe.")
  }

  static func daemonBenchmark(binary: String, seconds: Double) async throws {
    let rate = 10.0
    let runs: [(String, String)] = [
      ("track = off", "track = off\n"),
      ("default rule (10 m / 30 s)", ""),
      (
        "every fix (track-min-distance = 0, track-min-interval = 0)",
        "track-min-distance = 0\ntrack-min-interval = 0\n"
      ),
    ]
    print("### waymarkd CPU with the track (\(rate) Hz, \(Int(saturating: seconds)) s, no places)")
    print("")
    print("| waymarkd | points recorded | CPU (one core) | gpsd, same run | RSS after drive |")
    print("|---|---:|---:|---:|---:|")
    for (name, config) in runs {
      let result = try await DaemonBenchmark.measure(
        binary: binary, placeCount: 0, seconds: seconds, rate: rate, mqttPort: nil,
        extraConfig: config)
      // "<6>track: 75 new point(s) recorded", logged at the stop.
      let recorded =
        result.log.split(separator: "\n").first { $0.hasPrefix("<6>track: ") }
        .flatMap { $0.dropFirst("<6>track: ".count).split(separator: " ").first }
        .map(String.init) ?? "–"
      print(
        "| \(name) | \(recorded) | "
          + "\(String(format: "%.2f %%", result.daemon.cpuSeconds / seconds * 100)) | "
          + "\(String(format: "%.2f %%", result.gpsd.cpuSeconds / seconds * 100)) | "
          + "\(String(format: "%.1f MB", Double(result.daemon.endRSS) / 1024)) |")
    }
  }
}
