import Foundation
import Waymark
import WaymarkCore
import WaymarkProcess
import WaymarkStore

#if canImport(Glibc)
  import Glibc
#endif

/// `waymark-bench monitor [--places 1000,100000,1000000] [--fixes 200000] [--seed 1] [--as-stored]`
///
/// For each place count: places at a constant density (10 per km², radius 20–100 m, in a disc
/// that grows with the count), one drive of `--fixes` fixes at 1 Hz through that disc (15 m/s,
/// 5 m noise, a one-minute stop at one waypoint in four; each fix reports its speed and, while
/// moving, its course). Reports the monitor's cost per fix,
/// the same-run reference of a naive linear scan over the same places (great-circle distance
/// to every place), the ratio, the resident memory per place, and the index build time. Times
/// are thread CPU time (the machine is shared), best of three passes. `--as-stored` gives the
/// monitor the places as the daemon loads them from its store: ordered by id, centres with 7
/// decimals and whole-metre radii, as a GeoJSON import has them (the default: full-precision
/// random geometry in creation order).
enum PlaceMonitorBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--places", "<n,n…>", default: "1000,100000,1000000", "Place counts, one run each"),
    .number("--fixes", default: "200000", "Fixes per run"),
    .number("--seed", default: "1", "Seed of the places and the drive"),
    .flag("--no-reference", "Skip the naive linear scan (the reference)."),
    .flag("--rtree", "Also time an R-tree over the same places."),
    .flag(
      "--as-stored",
      """
      The places as the daemon loads them: id order, 7 decimals, whole
      metres.
      """),
  ])

  static func run(_ options: BenchmarkArguments) {
    let counts = options.ints("--places")
    let fixCount = options.int("--fixes")
    let seed = UInt64(max(0, options.int("--seed")))
    let naive = !options.has("--no-reference")
    let rtree = options.has("--rtree")
    let asStored = options.has("--as-stored")
    print(
      "monitor: \(fixCount) fixes per run, 10 places/km², radius 20–100 m, seed \(seed)"
        + (asStored ? ", as stored (id order, 7 decimals, whole metres)" : ""))
    print(
      "places".padded(9), "build s".padded(8), "MB".padded(7), "B/place".padded(8),
      "index B/place".padded(14), "monitor ns/fix".padded(15), "naive ns/fix".padded(13),
      "naive/monitor".padded(14), "events", separator: " ")
    // An untimed warm-up: the first measurement of a fresh process ran about 1.8 times slower
    // whatever its size (allocator and page warm-up), which would flatter the later ones.
    measure(count: 1000, fixCount: 50_000, seed: seed &+ 99, naive: false, report: false)
    for count in counts {
      measure(
        count: count, fixCount: fixCount, seed: seed, naive: naive, rtree: rtree,
        asStored: asStored)
    }
    exit(0)
  }

  static func measure(
    count: Int, fixCount: Int, seed: UInt64, naive: Bool, rtree: Bool = false,
    asStored: Bool = false, report: Bool = true
  ) {
    var rng = SeededGenerator(seed: seed &+ UInt64(count))
    let center = Coordinate(latitude: 48.137, longitude: 11.575)
    let discRadius = (Double(count) / 10 / .pi).squareRoot() * 1000  // metres, 10 per km²
    func randomPoint() -> Coordinate {
      center.offset(
        by: discRadius * Double.random(in: 0..<1, using: &rng).squareRoot(),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
    }

    trimHeap()
    let rssBefore = residentBytes()
    var places: [Place]? = (0..<count).map { i in
      Place(
        id: "p\(i)", name: "Place \(i)", coordinate: randomPoint(),
        radiusMeters: Double.random(in: 20..<100, using: &rng))
    }
    if asStored {
      func rounded(_ degrees: Double) -> Double { (degrees * 1e7).rounded() / 1e7 }
      places = places!.map { place in
        var place = place
        place.coordinate = Coordinate(
          latitude: rounded(place.coordinate.latitude),
          longitude: rounded(place.coordinate.longitude))
        place.radiusMeters = place.radiusMeters.rounded()
        return place
      }
      places!.sort { $0.id.utf8.lexicographicallyPrecedes($1.id.utf8) }
    }
    let buildStart = ContinuousClock.now
    var monitor: PlaceMonitor? = PlaceMonitor(places: places!)
    let build = ContinuousClock.now - buildStart
    let centers = places!.map(\.coordinate)
    let radii = places!.map(\.radiusMeters)
    places = nil
    trimHeap()
    let rssAfter = residentBytes()
    // The reference scan's own arrays (24 bytes a place) are still held: subtract them.
    let monitorBytes = Double(rssAfter - rssBefore) - Double(count * 24)

    // The drive.
    var locations: [Location] = []
    locations.reserveCapacity(fixCount)
    var position = center
    var time = Date(timeIntervalSince1970: 1_795_000_000)
    while locations.count < fixCount {
      let target = randomPoint()
      let length = position.distance(to: target)
      let bearing = position.bearing(to: target)
      let steps = max(1, Int(length / 15))
      let stop = Int.random(in: 0..<4, using: &rng) == 0 ? 60 : 0
      for step in 0..<(steps + stop) where locations.count < fixCount {
        let truth = position.offset(by: Double(min(step, steps)) * 15, bearingDegrees: bearing)
        let noise = 5 * Double.random(in: 0..<1, using: &rng)
        let noisy = truth.offset(
          by: noise, bearingDegrees: Double.random(in: 0..<360, using: &rng))
        time += 1
        // Speed and course as a receiver reports them (Doppler): the plausibility check uses
        // them.
        let moving = step < steps
        locations.append(
          Location(
            coordinate: noisy, horizontalAccuracy: 5, speed: moving ? 15 : 0,
            course: moving ? bearing : nil, timestamp: time))
      }
      position = target
    }

    // Best of three passes over the same fixes (the machine is shared; the minimum is the
    // least disturbed), each from an empty state.
    var events = 0
    var monitorNanos = Double.infinity
    for _ in 0..<3 {
      monitor!.restore(PlaceMonitor.Snapshot())
      events = 0
      let start = threadCPUNanoseconds()
      for location in locations { events += monitor!.process(location).count }
      monitorNanos = min(monitorNanos, (threadCPUNanoseconds() - start) / Double(fixCount))
    }

    let naiveFixes = naive ? max(20, min(fixCount, 20_000_000 / count)) : 1
    var inside = 0
    var naiveNanos = Double.infinity
    for _ in 0..<3 {
      inside = 0
      let naiveStart = threadCPUNanoseconds()
      for location in locations.prefix(naiveFixes) {
        for i in 0..<count where centers[i].distance(to: location.coordinate) <= radii[i] {
          inside += 1
        }
      }
      naiveNanos = min(naiveNanos, (threadCPUNanoseconds() - naiveStart) / Double(naiveFixes))
    }
    let rtreeNanos = rtree ? rtreeLookup(centers: centers, radii: radii, locations: locations) : nil
    let indexPerPlace =
      Double(monitorIndexBytes(centers: centers, radii: radii, report: report)) / Double(count)
    monitor = nil
    guard report else { return }

    print(
      String(count).padded(9), String(format: "%.2f", build.seconds).padded(8),
      String(format: "%.1f", monitorBytes / 1_048_576).padded(7),
      String(format: "%.0f", monitorBytes / Double(count)).padded(8),
      String(format: "%.1f", indexPerPlace).padded(14),
      String(format: "%.0f", monitorNanos).padded(15),
      String(format: "%.0f", naiveNanos).padded(13),
      String(format: "%.0f×", naiveNanos / monitorNanos).padded(14),
      "\(events) (naive saw \(inside) containments in \(naiveFixes) fixes)", separator: " ")
    if let rtreeNanos {
      print(
        "  SQLite R*Tree lookup (bounding-box query + exact check, no state machine):",
        String(format: "%.0f ns/fix, %.1f× the monitor", rtreeNanos, rtreeNanos / monitorNanos))
    }
  }

  /// Cost per fix of finding the containing places with SQLite's R*Tree (through the store's
  /// connection, in a temporary database): one bounding-box query per fix, then the exact
  /// distance for each row. Lookup only, like the naive scan.
  static func rtreeLookup(centers: [Coordinate], radii: [Double], locations: [Location]) -> Double?
  {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-rtree-\(getpid())")
    try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    do {
      let database = try Database(
        path: directory.appendingPathComponent("rtree.db").path, migrations: [])
      let metersPerDegree = Coordinate.earthRadiusMeters * .pi / 180
      try database.write { connection in
        _ = try connection.execute(
          "CREATE VIRTUAL TABLE circle USING rtree(id, south, north, west, east)")
        let insert = try connection.statement("INSERT INTO circle VALUES (?, ?, ?, ?, ?)")
        for i in centers.indices {
          let dLat = radii[i] / metersPerDegree
          let dLon = dLat / cos(centers[i].latitude * .pi / 180)
          try insert.bind([
            .integer(Int64(i)), .real(centers[i].latitude - dLat),
            .real(centers[i].latitude + dLat), .real(centers[i].longitude - dLon),
            .real(centers[i].longitude + dLon),
          ])
          _ = try insert.step()
        }
      }
      let fixes = locations.prefix(20_000)
      var found = 0
      var best = Double.infinity
      try database.read { connection in
        let query = try connection.statement(
          "SELECT id FROM circle WHERE south <= ?1 AND north >= ?1 AND west <= ?2 AND east >= ?2")
        for _ in 0..<3 {
          let start = threadCPUNanoseconds()
          for location in fixes {
            let point = location.coordinate
            try query.bind([.real(point.latitude), .real(point.longitude)])
            while try query.step() {
              let i = Int(query.row.int64(0))
              if centers[i].distance(to: point) <= radii[i] { found += 1 }
            }
          }
          best = min(best, (threadCPUNanoseconds() - start) / Double(fixes.count))
        }
        query.reset()
      }
      return found >= 0 ? best : nil
    } catch {
      FileHandle.standardError.write(Data("rtree reference failed: \(error)\n".utf8))
      return nil
    }
  }

  /// Bytes of a `SpatialIndex` over the same circles (its own accounting, no process noise).
  static func monitorIndexBytes(centers: [Coordinate], radii: [Double], report: Bool) -> Int {
    let index = SpatialIndex(centers: centers, radiiMeters: radii)
    guard report else { return index.approximateByteCount }
    print(
      "  index over \(index.count) circles: \(index.membershipCount) cell memberships,",
      "\(index.approximateByteCount) bytes")
    return index.approximateByteCount
  }

  /// CPU time of the calling thread, nanoseconds: unlike wall time, it does not count the time
  /// other processes on this shared machine hold the core.
  static func threadCPUNanoseconds() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &spec)
    return Double(spec.tv_sec) * 1e9 + Double(spec.tv_nsec)
  }

  /// Resident set size from `/proc/self/statm`, bytes.
  static func residentBytes() -> Int {
    guard let text = try? String(contentsOfFile: "/proc/self/statm", encoding: .utf8) else {
      return 0
    }
    let fields = text.split(separator: " ")
    guard fields.count > 1, let pages = Int(fields[1]) else { return 0 }
    return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
  }

  /// Returns freed heap to the system so that RSS deltas measure live memory.
  static func trimHeap() {
    // glibc's malloc_trim(3), looked up at run time (Swift's Glibc module does not import
    // <malloc.h>); RTLD_DEFAULT is the null handle.
    typealias MallocTrim = @convention(c) (Int) -> Int32
    guard let symbol = dlsym(nil, "malloc_trim") else { return }
    _ = unsafeBitCast(symbol, to: MallocTrim.self)(0)
  }
}

extension String {
  fileprivate func padded(_ width: Int) -> String {
    count >= width ? self : self + String(repeating: " ", count: width - count)
  }
}
