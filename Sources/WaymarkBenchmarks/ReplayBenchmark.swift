import Foundation
import NMEA
import WaymarkCore
import WaymarkProcess

/// `waymark-bench replay [--megabytes N] [--runs N] [--log <file>] [--keep]`: NMEA replay
/// throughput. `waymark-bench replay --jobs N …` times a fleet instead (``runJobs(_:jobs:)``).
///
/// Writes a synthetic multi-megabyte log (our synthesizer: GGA, GSA, GST, RMC every epoch, GSV
/// every tenth), then times, in the same invocation and on the same file, gpsd's `gpsdecode -j`
/// (reference) and `waymark replay --fixes` (release binary next to this one), both reading the
/// file and writing JSON to /dev/null, in `runs` interleaved rounds: the best times of each and
/// the median of the per-round CPU-time ratios. Also reports the in-process decoder alone.
enum ReplayBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--megabytes", default: "20", "Size of the synthetic log"),
    .number("--runs", default: "5", "Interleaved rounds"),
    .value("--log", "<file>", "Benchmark this log instead of a synthetic one (kept)."),
    .flag("--keep", "Keep the synthetic log and print its path."),
    .value("--jobs", "<n>", "Time a fleet instead: --jobs 1 against --jobs <n>."),
    .number("--logs", default: "20", "With --jobs: logs in the fleet"),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    if options["--jobs"] != nil {
      return try runJobs(options, jobs: options.int("--jobs"))
    }
    let megabytes = options.int("--megabytes")
    let runs = options.int("--runs")
    let given = options["--log"]
    let keep = options.has("--keep")
    let path = try given ?? makeLog(megabytes: megabytes)
    defer {
      if given == nil && !keep {
        try? FileManager.default.removeItem(atPath: path)
      }
    }
    if given == nil && keep { print("synthetic log kept at \(path)") }
    let size = Double(try FileManager.default.attributesOfItem(atPath: path)[.size] as! Int)
    let waymark = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("waymark").path
    guard let gpsdecode = which("gpsdecode") else {
      print("gpsdecode not found: install gpsd-clients (Scripts/install-deps.sh)")
      exit(69)
    }
    print("log: \(String(format: "%.1f", size / 1e6)) MB synthetic NMEA, best of \(runs) runs")
    // Rounds interleave the two programs, so that a change of machine speed during the run
    // (other work, CPU frequency) affects both alike; the ratio is the median of the rounds'.
    var reference = Timing(wall: .infinity, cpu: .infinity)
    var ours = Timing(wall: .infinity, cpu: .infinity)
    var roundRatios: [Double] = []
    for _ in 0..<runs {
      let theirs = try time(gpsdecode, ["-j"], stdin: path)
      let mine = try time(waymark, ["replay", "--fixes", path], stdin: nil)
      roundRatios.append(theirs.cpu / mine.cpu)
      if theirs.cpu < reference.cpu { reference = theirs }
      if mine.cpu < ours.cpu { ours = mine }
    }
    roundRatios.sort()
    let medianRatio = roundRatios[roundRatios.count / 2]
    let bytes = try NMEALog.readFile(atPath: path)
    let decoder = try best(of: runs) {
      let start = ContinuousClock.now
      var count = 0
      var decoder = NMEADecoder(path: path)
      _ = bytes.withUnsafeBytes { decoder.decode(chunk: $0) { _ in count += 1 } }
      decoder.finish { _ in count += 1 }
      precondition(count > 0)
      let seconds = (ContinuousClock.now - start).seconds
      return Timing(wall: seconds, cpu: seconds)
    }
    let sizeMegabytes = size / 1e6
    func row(_ name: String, _ timing: Timing) -> String {
      String(
        format: "| %@ | %.3f | %.1f | %.3f | %.1f |", name, timing.wall,
        sizeMegabytes / timing.wall,
        timing.cpu, sizeMegabytes / timing.cpu)
    }
    print("| run | wall s | MB/s (wall) | CPU s | MB/s (CPU) |")
    print("|---|---|---|---|---|")
    print(row("gpsdecode -j < log (reference)", reference))
    print(row("waymark replay --fixes log", ours))
    print(row("NMEADecoder in process, no output", decoder))
    print(
      String(
        format: "ratio waymark/gpsdecode: %.1fx (best wall), %.1fx (best CPU), "
          + "%.1fx (median of %d interleaved rounds, CPU; range %.1f-%.1f)",
        reference.wall / ours.wall, reference.cpu / ours.cpu, medianRatio, roundRatios.count,
        roundRatios.first ?? 0, roundRatios.last ?? 0))
  }

  static func makeLog(megabytes: Int) throws -> String {
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T00:00:00.000Z")!,
      origin: Coordinate(latitude: 45.76, longitude: 4.83), seed: 42)
    route.noiseMeters = 3
    // About 290 bytes per epoch.
    let epochs = megabytes * 1_000_000 / 290
    var heading = 0.0
    var position = route.origin
    var seconds = 0
    while seconds < epochs {
      heading += 37
      position = position.offset(by: 600, bearingDegrees: heading)
      route.drive(to: position, speedMetersPerSecond: 12)
      route.stop(seconds: 30)
      seconds += 80
    }
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-\(getpid()).nmea").path
    try Data(NMEAWriter.log(route.fixes()).utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  /// The run with the least CPU time (the least disturbed by other work on the machine).
  static func best(of runs: Int, _ body: () throws -> Timing) throws -> Timing {
    var best = Timing(wall: .infinity, cpu: .infinity)
    for _ in 0..<runs {
      let timing = try body()
      if timing.cpu < best.cpu { best = timing }
    }
    return best
  }

  /// Wall-clock and CPU (user + system) seconds of one run of a child process.
  struct Timing {
    var wall: Double
    var cpu: Double
  }

  static func childCPUSeconds() -> Double {
    var usage = rusage()
    getrusage(RUSAGE_CHILDREN.rawValue, &usage)
    return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
      + Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
  }

  static func time(_ executable: String, _ arguments: [String], stdin: String?) throws -> Timing {
    var options = ProcessSpawner.Options()
    if let stdin { options.standardInput = .file(stdin) }
    let cpuBefore = childCPUSeconds()
    let start = ContinuousClock.now
    let child = try ProcessSpawner.spawn(
      [executable] + arguments, environment: ProcessInfo.processInfo.environment,
      options: options)
    let status = ProcessSpawner.waitForExit(child.processID)
    let elapsed = (ContinuousClock.now - start).seconds
    guard status == 0 else {
      throw BenchmarkError("\(executable) exited with \(status)")
    }
    return Timing(wall: elapsed, cpu: childCPUSeconds() - cpuBefore)
  }

  static func which(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin").split(
      separator: ":")
    {
      let path = "\(directory)/\(name)"
      if FileManager.default.isExecutableFile(atPath: path) { return path }
    }
    return nil
  }
}

struct BenchmarkError: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
