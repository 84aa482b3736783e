import Foundation
import WaymarkCore
import WaymarkGazetteer
import WaymarkProcess

/// `waymark-bench gazetteer [--lookups 200000] [--reference-lookups 2000]`: the towns built in
/// (`Gazetteer.bundled`), against a scan of every town in the same run.
///
/// - Load: the first use of `Gazetteer.bundled` in this process (the text parsed and the grid
///   built), thread CPU time and the resident memory it added.
/// - Reverse lookups: `--lookups` points, half within 30 km of a random town (where people
///   are), half anywhere on Earth, through `nearest(to:within:)` (20 km and 300 km) and
///   `locality(of:)`. Reference: `scanForNearest(to:within:)` (every town's distance) on
///   `--reference-lookups` of the same points; each grid answer is checked against it.
/// - Names: `towns(named:)` for towns of the table, with their accents removed.
///
/// Times are thread CPU time, best of three passes.
enum GazetteerBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--lookups", default: "200000", "Points looked up through the grid"),
    .number("--reference-lookups", default: "2000", "Points looked up by the scan"),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    let lookups = options.int("--lookups")
    let referenceLookups = min(lookups, options.int("--reference-lookups"))
    PlaceMonitorBenchmark.trimHeap()
    let residentBefore = PlaceMonitorBenchmark.residentBytes()
    let loadStart = PlaceMonitorBenchmark.threadCPUNanoseconds()
    let gazetteer = Gazetteer.bundled
    let count = gazetteer.count
    let loadMilliseconds = (PlaceMonitorBenchmark.threadCPUNanoseconds() - loadStart) / 1e6
    PlaceMonitorBenchmark.trimHeap()
    let addedMB = Double(PlaceMonitorBenchmark.residentBytes() - residentBefore) / 1e6
    print(
      "load: \(count) towns, \(String(format: "%.1f", loadMilliseconds)) ms CPU,",
      "\(String(format: "%.1f", addedMB)) MB resident added")

    var generator = SystemRandomNumberGenerator()
    let anchors = gazetteer.towns(named: "Berlin") + gazetteer.towns(named: "Lagos")
    var points: [Coordinate] = []
    points.reserveCapacity(lookups)
    for index in 0..<lookups {
      if index % 2 == 0 {
        // Near a town: a random point of the table's towns found through a random spot.
        let spot = Coordinate(
          latitude: Double.random(in: -60...70, using: &generator),
          longitude: Double.random(in: -180...180, using: &generator))
        let town = gazetteer.nearest(to: spot, within: 20_000_000)?.town ?? anchors[0]
        points.append(
          town.coordinate.offset(
            by: Double.random(in: 0...30_000, using: &generator),
            bearingDegrees: Double.random(in: 0..<360, using: &generator)))
      } else {
        points.append(
          Coordinate(
            latitude: Double.random(in: -90...90, using: &generator),
            longitude: Double.random(in: -180...180, using: &generator)))
      }
    }

    func best(_ body: () -> Int) -> (nanoseconds: Double, found: Int) {
      var times: [Double] = []
      var found = 0
      for _ in 0..<3 {
        let start = PlaceMonitorBenchmark.threadCPUNanoseconds()
        found = body()
        times.append(PlaceMonitorBenchmark.threadCPUNanoseconds() - start)
      }
      return (times.min() ?? 0, found)
    }

    print("| lookup | points | found | ns per lookup | vs the scan |")
    print("|---|---:|---:|---:|---:|")
    for radius in [20_000.0, 300_000] {
      let reference = Array(points.prefix(referenceLookups))
      let scan = best {
        reference.reduce(0) {
          $0 + (gazetteer.scanForNearest(to: $1, within: radius) == nil ? 0 : 1)
        }
      }
      let grid = best {
        points.reduce(0) { $0 + (gazetteer.nearest(to: $1, within: radius) == nil ? 0 : 1) }
      }
      var disagreements = 0
      for point in reference
      where gazetteer.nearest(to: point, within: radius)?.town
        != gazetteer.scanForNearest(to: point, within: radius)?.town
      {
        disagreements += 1
      }
      let scanPer = scan.nanoseconds / Double(reference.count)
      let gridPer = grid.nanoseconds / Double(points.count)
      let kilometres = Int(radius / 1000)
      print(
        "| scan of every town, \(kilometres) km (reference) | \(reference.count) | \(scan.found)",
        "| \(String(format: "%.0f", scanPer)) | 1 |")
      print(
        "| grid, nearest within \(kilometres) km | \(points.count) | \(grid.found)",
        "| \(String(format: "%.0f", gridPer)) | \(String(format: "%.5f", gridPer / scanPer))× |")
      if disagreements > 0 {
        print("  DISAGREEMENTS with the scan: \(disagreements) of \(reference.count)")
        exit(1)
      }
    }
    let locality = best {
      points.reduce(0) { $0 + (gazetteer.locality(of: $1) == nil ? 0 : 1) }
    }
    print(
      "| locality(of:) | \(points.count) | \(locality.found)",
      "| \(String(format: "%.0f", locality.nanoseconds / Double(points.count))) | – |")

    let names = ["zurich", "krakow", "sao paulo", "Springfield", "Paris", "nowhereville"]
    let named = best { names.reduce(0) { $0 + gazetteer.towns(named: $1).count } }
    print(
      "| towns(named:) | \(names.count) names | \(named.found)",
      "| \(String(format: "%.0f", named.nanoseconds / Double(names.count))) | – |")
  }
}
