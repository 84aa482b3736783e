import Foundation
import WaymarkCore
import WaymarkProcess

/// `waymark-bench import [--points <n>] [--dir <path>] [--keep]`: `waymark import` of a
/// generated Google Takeout `Records.json` of `n` points (default 3,000,000: ten years of a
/// phone's history at one point every 105 s), time and peak RSS, against the reference of
/// reading the same file with Python's `json.load` in the same run (a whole-DOM parse, what
/// most Takeout tools do), and `gpsbabel` when it is installed (its `geojson` reader is not
/// for Takeout: the reference is Python's).
///
/// The file is as Takeout writes it: two-space indented objects, `latitudeE7`/`longitudeE7`,
/// `accuracy`, an `altitude` on one point in four, `source`, `deviceTag`, an ISO 8601
/// `timestamp` (`timestampMs` on one in ten); mostly in time order, with blocks of 1,000
/// points reversed every 50,000 (the import sorts them). The import runs into a new store,
/// stays and track included (the release `waymark` next to this binary).
enum ImportBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--points", default: "3000000", "Points in the generated Records.json"),
    .directory,
    .flag("--keep", "Keep the generated file and print its path."),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    let points = options.int("--points")
    let work = try options.workDirectory("import")
    let keep = options.has("--keep")
    defer { if !keep { try? FileManager.default.removeItem(atPath: work) } }
    let records = (work as NSString).appendingPathComponent("Records.json")
    try write(points: points, to: records)
    let size = Double(try FileManager.default.attributesOfItem(atPath: records)[.size] as! Int)
    if keep { print("Records.json kept at \(records)") }
    let waymark = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("waymark").path
    print("## waymark-bench import (\(points) points, \(String(format: "%.0f", size / 1e6)) MB)")
    print("")
    let python = try measure(
      ReplayBenchmark.which("python3") ?? "/usr/bin/python3",
      ["-c", "import json, sys; json.load(open(sys.argv[1]))", records])
    let store = (work as NSString).appendingPathComponent("store.db")
    let ours = try measure(waymark, ["import", records, "--store", store])
    print("| run | wall s | CPU s | peak RSS MB |")
    print("|---|---:|---:|---:|")
    for (name, run) in [
      ("python3 json.load(Records.json) (reference)", python),
      ("waymark import Records.json --store new.db", ours),
    ] {
      print(
        String(
          format: "| %@ | %.2f | %.2f | %.0f |", name, run.wall, run.cpu,
          Double(run.peakKilobytes) / 1024))
    }
    print(
      String(
        format: "ratio waymark/python: %.2fx the wall time, %.2fx the peak RSS",
        ours.wall / python.wall, Double(ours.peakKilobytes) / Double(python.peakKilobytes)))
  }

  /// One run of a child: wall and CPU seconds, and its peak resident set (from `wait4(2)`).
  struct Measurement {
    var wall: Double
    var cpu: Double
    var peakKilobytes: Int
  }

  static func measure(_ executable: String, _ arguments: [String]) throws -> Measurement {
    let start = ContinuousClock.now
    let child = try ProcessSpawner.spawn(
      [executable] + arguments, environment: ProcessInfo.processInfo.environment,
      options: ProcessSpawner.Options())
    var status: Int32 = 0
    var usage = rusage()
    while wait4(child.processID, &status, 0, &usage) < 0 {
      guard errno == EINTR else { throw BenchmarkError("wait4: \(errno)") }
    }
    let wall = (ContinuousClock.now - start).seconds
    let exited = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
    guard exited == 0 else { throw BenchmarkError("\(executable) exited with \(exited)") }
    let cpu =
      Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
      + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
    return Measurement(wall: wall, cpu: cpu, peakKilobytes: usage.ru_maxrss)
  }

  /// Writes a `Records.json` of `points` points, ten years from 2015-01-01 at 105 s a point,
  /// wandering around Munich with stops.
  static func write(points: Int, to path: String) throws {
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: path))
    defer { try? handle.close() }
    var generator = SeededGenerator(seed: 38)
    var text = "{\n  \"locations\": [\n"
    var latitude = 481_372_000
    var longitude = 115_756_000
    let start: Int64 = 1_420_070_400_000
    var block: [String] = []
    for index in 0..<points {
      if index % 40 >= 30 {
        latitude += Int.random(in: -900...900, using: &generator)
        longitude += Int.random(in: -1300...1300, using: &generator)
      }
      let milliseconds =
        start + Int64(index) * 105_000 + Int64.random(in: 0..<999, using: &generator)
      var record =
        "    {\n      \"latitudeE7\": \(latitude + Int.random(in: -200...200, using: &generator)),\n"
      record +=
        "      \"longitudeE7\": \(longitude + Int.random(in: -300...300, using: &generator)),\n"
      record += "      \"accuracy\": \(Int.random(in: 5...60, using: &generator)),\n"
      if index % 4 == 0 { record += "      \"altitude\": \(500 + index % 37),\n" }
      record += "      \"source\": \"WIFI\",\n      \"deviceTag\": 1234567,\n"
      if index % 10 == 0 {
        record += "      \"timestampMs\": \"\(milliseconds)\"\n    }"
      } else {
        record +=
          "      \"timestamp\": \"\(Timestamp.format(Timestamp.date(milliseconds: milliseconds)))\"\n    }"
      }
      block.append(record)
      if block.count == 1000 {
        if (index / 1000) % 50 == 49 { block.reverse() }
        text += block.joined(separator: ",\n")
        block.removeAll(keepingCapacity: true)
        if index + 1 < points { text += ",\n" }
        if text.utf8.count > 8 << 20 {
          handle.write(Data(text.utf8))
          text = ""
        }
      }
    }
    text += block.joined(separator: ",\n") + "\n  ]\n}\n"
    handle.write(Data(text.utf8))
  }
}
