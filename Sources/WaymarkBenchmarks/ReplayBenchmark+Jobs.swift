import Foundation
import NMEA
import WaymarkCore
import WaymarkTesting

/// `waymark-bench replay --jobs N [--logs 20] [--megabytes 1] [--runs 3]`: a fleet replayed
/// into one store with 1 job, then with N, in the same invocation.
///
/// Writes `logs` synthetic 10 Hz logs (one device each, about `megabytes` MB apiece) and a
/// places file with a depot and one customer per device, then times, in `runs` interleaved
/// rounds, `waymark replay <logs…> --places <file> --store <new db> --device-from stem --jobs 1`
/// (reference: each log is its own device, named by its file) and the same with `--jobs N`
/// (release binary next to this one), each into a fresh store. Prints
/// the best wall times, the median of the per-round speed-ups, the load average before each
/// round (the machine is shared), and checks that both stores export the same visits.
extension ReplayBenchmark {
  static func runJobs(_ options: BenchmarkArguments, jobs: Int) throws {
    guard jobs >= 1 else { throw BenchmarkError("--jobs expects n >= 1") }
    let count = options.int("--logs")
    // The fleet's own defaults: 1 MB a log, 3 rounds (the single log's are 20 MB, 5 rounds).
    let megabytes = options.double("--megabytes", unlessGiven: 1)
    let runs = options.int("--runs", unlessGiven: 3)
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-fleet-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let (logs, places) = try makeFleet(count: count, megabytes: megabytes, in: directory)
    let total = try logs.reduce(0.0) {
      $0 + Double(try FileManager.default.attributesOfItem(atPath: $1)[.size] as! Int)
    }
    let waymark = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
      .deletingLastPathComponent().appendingPathComponent("waymark").path
    print(
      String(
        format: "fleet: %d logs, %.1f MB of 10 Hz NMEA, %d places; best of %d interleaved rounds",
        count, total / 1e6, count + 1, runs))
    var best = [Timing(wall: .infinity, cpu: .infinity), Timing(wall: .infinity, cpu: .infinity)]
    var speedUps: [Double] = []
    var loads: [String] = []
    var exports: [String] = []
    for round in 0..<runs {
      loads.append(loadAverage())
      var walls: [Double] = []
      for (slot, n) in [1, jobs].enumerated() {
        let store = directory.appendingPathComponent("round-\(round)-jobs-\(n).db").path
        let timing = try time(
          waymark,
          ["replay"] + logs + [
            "--places", places, "--store", store, "--device-from", "stem", "--jobs", "\(n)",
          ], stdin: nil)
        walls.append(timing.wall)
        if timing.wall < best[slot].wall { best[slot] = timing }
        if round == 0 { exports.append(try visits(waymark, store: store)) }
        for suffix in ["", "-wal", "-shm"] { unlink(store + suffix) }
      }
      speedUps.append(walls[0] / walls[1])
    }
    speedUps.sort()
    print("| run | wall s (best) | CPU s | MB/s (wall) |")
    print("|---|---|---|---|")
    for (slot, n) in [1, jobs].enumerated() {
      print(
        String(
          format: "| waymark replay <%d logs> --store --jobs %d | %.3f | %.3f | %.1f |", count, n,
          best[slot].wall, best[slot].cpu, total / 1e6 / best[slot].wall))
    }
    print(
      String(
        format: "speed-up --jobs %d / --jobs 1: %.2fx (best wall), %.2fx (median of %d rounds; "
          + "range %.2f-%.2f)", jobs, best[0].wall / best[1].wall, speedUps[speedUps.count / 2],
        speedUps.count, speedUps.first ?? 0, speedUps.last ?? 0))
    print("load average before each round (1, 5, 15 min): " + loads.joined(separator: "; "))
    print("same visits in both stores: \(exports.count == 2 && exports[0] == exports[1])")
  }

  /// The fleet: `count` devices leaving a depot for a customer of their own and coming back.
  static func makeFleet(
    count: Int, megabytes: Double, in directory: URL
  ) throws -> (logs: [String], places: String) {
    let depot = Coordinate(latitude: 48.1374, longitude: 11.5755)
    var features: [String] = [placeFeature("depot", depot, radius: 100)]
    var logs: [String] = []
    // About 290 bytes per epoch at 10 Hz: 2,900 bytes a second.
    let seconds = megabytes * 1_000_000 / 2_900
    for device in 0..<count {
      let customer = depot.offset(
        by: 2_000 + 150 * Double(device), bearingDegrees: Double(device) * 360 / Double(count))
      features.append(placeFeature("customer-\(device)", customer, radius: 80))
      var route = RouteSynthesizer(
        start: Timestamp.parse("2026-12-01T07:00:00.000Z")!.addingTimeInterval(
          Double(device) * 60), origin: depot, seed: UInt64(100 + device))
      route.rateHz = 10
      route.noiseMeters = 3
      let driving = 2 * (2_000 + 150 * Double(device)) / 12
      let stop = max(30, (seconds - driving) / 3)
      route.stop(seconds: stop)
      route.drive(to: customer, speedMetersPerSecond: 12)
      route.stop(seconds: stop)
      route.drive(to: depot, speedMetersPerSecond: 12)
      route.stop(seconds: stop)
      let path = directory.appendingPathComponent("device-\(device).nmea").path
      try Data(NMEAWriter.log(route.fixes()).utf8).write(to: URL(fileURLWithPath: path))
      logs.append(path)
    }
    let places = directory.appendingPathComponent("places.geojson").path
    var collection = FeatureCollectionFrame.opening
    var frame = FeatureCollectionFrame()
    for feature in features {
      frame.appendSeparator(to: &collection)
      collection += Array(feature.utf8)
    }
    collection += FeatureCollectionFrame.closing
    try Data(collection).write(to: URL(fileURLWithPath: places))
    return (logs, places)
  }

  static func placeFeature(_ id: String, _ point: Coordinate, radius: Int) -> String {
    #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":["#
      + "\(point.longitude),\(point.latitude)]},"
      + #""properties":{"name":"\#(id)","radius":\#(radius)}}"#
  }

  static func loadAverage() -> String {
    let text = (try? String(contentsOfFile: "/proc/loadavg", encoding: .utf8)) ?? ""
    return text.split(separator: " ").prefix(3).joined(separator: " ")
  }

  /// `waymark visits --store <store>`'s output.
  static func visits(_ waymark: String, store: String) throws -> String {
    try CommandRun.run(waymark, ["visits", "--store", store]).output
  }

}
