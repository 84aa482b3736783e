import Foundation
import NMEA
import Waymark
import WaymarkCore
import WaymarkProcess

/// `waymark-bench stays [--hours 24] [--hz 10] [--stays 100000] [--reference-stays 10000]`:
/// the stay detector and the place suggester, each beside a named reference in the same run.
///
/// - Detector: a synthesized day of `--hours` hours at `--hz` (drives at 8–20 m/s and stops
///   of 20 s to 40 min, 4 m noise; built before timing), every fix through ``StayDetector``.
///   Reference: ``PlaceMonitorEngine`` with 100 places along the route on the same locations
///   (the per-fix cost of what waymarkd already runs on every fix).
/// - Suggester: `--stays` stays (60 % at 25 recurring places, the rest scattered over 30 km)
///   through ``PlaceSuggester`` (3 visits within 50 m). Reference: the brute-force neighbour
///   count of plain DBSCAN (every pair's great-circle distance) on `--reference-stays` of them,
///   with its pair count, so the quadratic cost at 100,000 can be projected.
///
/// Times are thread CPU time (the machine is shared), best of three passes.
///
/// `waymark-bench stays --drives <dir> [--days 20] [--exact-speed]` instead writes the drives that
/// `Scripts/trackintel-staypoints.sh` compares Waymark and trackintel on: per day
/// `day-N.nmea` (the log), `day-N.csv` (its decoded fixes: time, lat, lon, accuracy) and
/// `day-N.truth.csv` (each stop: arrival, departure, lat, lon).
enum StayBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--hours", "<h>", default: "24", "Hours of drive for the detector"),
    .number("--hz", "<hz>", default: "10", "Fixes per second of that drive"),
    .number("--stays", default: "100000", "Stays clustered"),
    .number("--reference-stays", default: "10000", "Stays of the DBSCAN reference"),
    .value("--drives", "<dir>", "Instead: write the trackintel comparison drives there."),
    .number("--days", default: "20", "With --drives: days of drives"),
    .flag("--exact-speed", "With --drives: no speed noise while resting."),
    .flag(
      "--duty-cycled",
      "With --drives: as a phone logs them (asleep at rest, no speed, HDOP 1.0)."),
    .value(
      "--sleep-after", "<s>,<s>", default: "30,120",
      "With --duty-cycled: the logger sleeps after this many seconds at rest (each day its own)."
    ),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    if let directory = options["--drives"] {
      let sleep = options.ints("--sleep-after")
      guard sleep.count == 2, sleep[0] > 0, sleep[0] <= sleep[1] else {
        BenchmarkArguments.fail(
          "'--sleep-after' expects two whole numbers of seconds, the least first.",
          benchmark: "stays")
      }
      try drives(
        in: directory, days: options.int("--days"), restingNoise: !options.has("--exact-speed"),
        dutyCycled: options.has("--duty-cycled"),
        sleepAfterSeconds: Double(sleep[0])...Double(sleep[1]))
      return
    }
    let hours = options.double("--hours")
    let hz = options.double("--hz")
    let stayCount = options.int("--stays")
    let referenceCount = options.int("--reference-stays")
    print("## waymark-bench stays")
    print("")
    detector(hours: hours, hz: hz)
    print("")
    suggester(count: stayCount, referenceCount: referenceCount)
  }

  static func threadCPU() -> Double {
    var time = timespec()
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &time)
    return Double(time.tv_sec) + Double(time.tv_nsec) / 1e9
  }

  /// Best of three: seconds of thread CPU time of `body`.
  static func best(_ body: () -> Void) -> Double {
    var best = Double.infinity
    for _ in 0..<3 {
      let start = threadCPU()
      body()
      best = min(best, threadCPU() - start)
    }
    return best
  }

  static func day(hours: Double, hz: Double) -> [Location] {
    var rng = SeededGenerator(seed: 77)
    var position = Coordinate(latitude: 48.137, longitude: 11.575)
    var route = RouteSynthesizer(
      start: Date(timeIntervalSince1970: 1_796_000_000), origin: position, seed: 5)
    route.rateHz = hz
    route.noiseMeters = 4
    var seconds = 0.0
    var heading = 0.0
    while seconds < hours * 3600 {
      heading += Double.random(in: -90...90, using: &rng)
      let meters = Double.random(in: 300...4000, using: &rng)
      let speed = Double.random(in: 8...20, using: &rng)
      position = position.offset(by: meters, bearingDegrees: heading)
      route.drive(to: position, speedMetersPerSecond: speed)
      let stop =
        Bool.random(using: &rng)
        ? Double.random(in: 20...100, using: &rng) : Double.random(in: 120...2400, using: &rng)
      route.stop(seconds: stop)
      seconds += meters / speed + stop
    }
    return route.fixes().compactMap(Location.init)
  }

  /// Held-out drives (a generator of their own, not the tests'): each day 4–6 stays of 2.5 to
  /// 30 minutes (a third with a multipath burst of 10–60 s, a third with a fix loss of 1–10
  /// minutes inside), red lights of 15–110 s and bursts beside the road between them, a tunnel
  /// now and then, walks (1.4 m/s) as well as drives; 1, 5 or 10 Hz. With `restingNoise`
  /// every stop and red light carries what a receiver at rest reports (``StandstillNoise``:
  /// speed jitter and spikes, fixes without speed, a wandering position); without
  /// (`--exact-speed`), the synthesizer's speed of exactly 0. With `dutyCycled`
  /// (`--duty-cycled`) the same days as a phone's logger writes them (``DutyCycledLogger``):
  /// asleep after `sleepAfterSeconds` at rest (by default 30–120 s), awake after 15–25 s of
  /// motion, one fix a second or one in 30 s, no speed, HDOP 1.0 while the position at rest
  /// wanders 10–30 m.
  static func drives(
    in directory: String, days: Int, restingNoise: Bool, dutyCycled: Bool,
    sleepAfterSeconds: ClosedRange<Double> = 30...120
  ) throws {
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    for day in 1...days {
      var rng = SeededGenerator(seed: 9000 &+ UInt64(day))
      var position = Coordinate(latitude: 47.37, longitude: 8.54)
      var route = RouteSynthesizer(
        start: Date(timeIntervalSince1970: 1_796_000_000 + Double(day) * 86_400),
        origin: position, seed: UInt64(day))
      route.rateHz = [1, 5, 10].randomElement(using: &rng)!
      route.noiseMeters = Double.random(in: 2...7, using: &rng)
      route.horizontalAccuracyMeters = route.noiseMeters * 1.5
      var elapsed = 0.0
      var truth: [(arrival: Double, departure: Double, at: Coordinate)] = []
      let walking = day % 4 == 0
      var heading = Double.random(in: 0..<360, using: &rng)
      func move(_ meters: Double, speed: Double) {
        position = position.offset(by: meters, bearingDegrees: heading)
        route.drive(to: position, speedMetersPerSecond: speed)
        elapsed += meters / speed
      }
      for _ in 0..<Int.random(in: 4...6, using: &rng) {
        for _ in 0..<Int.random(in: 1...3, using: &rng) {
          let speed = walking ? 1.4 : Double.random(in: 7...22, using: &rng)
          if Double.random(in: 0..<1, using: &rng) < 0.3 {
            route.multipath(
              seconds: Double.random(in: 5...20, using: &rng).rounded(),
              offsetMeters: Double.random(in: 60...250, using: &rng),
              bearingDegrees: heading + 90, accuracyMeters: Double.random(in: 8...40, using: &rng))
          }
          // A red light half way (never right before or after a stay).
          let meters =
            walking
            ? Double.random(in: 200...600, using: &rng) : Double.random(in: 400...3000, using: &rng)
          move(meters / 2, speed: speed)
          if Double.random(in: 0..<1, using: &rng) < 0.6 {
            let light = Double.random(in: 15...110, using: &rng).rounded()
            route.stop(seconds: light)
            elapsed += light
          }
          move(meters / 2, speed: speed)
          if !walking && Double.random(in: 0..<1, using: &rng) < 0.15 {
            let seconds = Double.random(in: 20...90, using: &rng).rounded()
            position = position.offset(by: seconds * speed, bearingDegrees: heading)
            route.tunnel(to: position, seconds: seconds)
            elapsed += seconds
          }
          heading += Double.random(in: -120...120, using: &rng)
        }
        let total = Double.random(in: 150...1800, using: &rng).rounded()
        let arrival = elapsed
        let part = (total * Double.random(in: 0.3...0.7, using: &rng)).rounded()
        switch Int.random(in: 0..<3, using: &rng) {
        case 0:
          route.stop(seconds: part)
          route.multipath(
            seconds: Double.random(in: 10...60, using: &rng).rounded(),
            offsetMeters: Double.random(in: 60...250, using: &rng),
            bearingDegrees: Double.random(in: 0..<360, using: &rng),
            accuracyMeters: Double.random(in: 6...40, using: &rng))
          route.stop(seconds: total - part)
        case 1:
          let gap = Double.random(in: 60...600, using: &rng).rounded()
          route.stop(seconds: part)
          route.gap(seconds: gap)
          route.stop(seconds: total - part)
          elapsed += gap
        default:
          route.stop(seconds: total)
        }
        elapsed += total
        truth.append((arrival, elapsed, position))
      }
      move(walking ? 500 : 2000, speed: walking ? 1.4 : 14)
      let exact = route.fixes()
      var fixes =
        restingNoise ? StandstillNoise(seed: 7000 &+ UInt64(day)).apply(to: exact) : exact
      if dutyCycled {
        var phone = SeededGenerator(seed: 8000 &+ UInt64(day))
        var wander = StandstillNoise(seed: 7000 &+ UInt64(day))
        wander.wanderMeters = Double.random(in: 10...30, using: &phone)
        fixes = DutyCycledLogger(
          sleepAfterStillSeconds: Double.random(in: sleepAfterSeconds, using: &phone).rounded(),
          wakeAfterMovingSeconds: Double.random(in: 15...25, using: &phone).rounded(),
          intervalSeconds: Bool.random(using: &phone) ? 1 : 30, restingNoise: wander
        ).apply(to: exact)
      }
      let log = NMEAWriter.log(fixes)
      func path(_ suffix: String) -> String { "\(directory)/day-\(day).\(suffix)" }
      try Data(log.utf8).write(to: URL(fileURLWithPath: path("nmea")))
      var csv = "time,lat,lon,accuracy\n"
      for location in NMEALog.decode(Array(log.utf8), path: "day").fixes.compactMap(Location.init) {
        csv += "\(Timestamp.format(location.timestamp)),\(location.coordinate.latitude.fixed(7)),"
        csv +=
          "\(location.coordinate.longitude.fixed(7)),\((location.horizontalAccuracy ?? 25).fixed(1))\n"
      }
      try Data(csv.utf8).write(to: URL(fileURLWithPath: path("csv")))
      var truthCSV = "arrival,departure,lat,lon\n"
      for stay in truth {
        truthCSV += "\(Timestamp.format(route.start.addingTimeInterval(stay.arrival))),"
        truthCSV += "\(Timestamp.format(route.start.addingTimeInterval(stay.departure))),"
        truthCSV += "\(stay.at.latitude.fixed(7)),\(stay.at.longitude.fixed(7))\n"
      }
      try Data(truthCSV.utf8).write(to: URL(fileURLWithPath: path("truth.csv")))
    }
    print("wrote \(days) days to \(directory)")
  }

  static func detector(hours: Double, hz: Double) {
    let locations = day(hours: hours, hz: hz)
    let places = stride(from: 0, to: locations.count, by: max(1, locations.count / 100)).map {
      Place(id: "p\($0)", name: "P\($0)", coordinate: locations[$0].coordinate, radiusMeters: 80)
    }
    var stays = 0
    let detectorSeconds = best {
      var detector = StayDetector()
      stays = 0
      for location in locations {
        for case .arrival in detector.process(location) { stays += 1 }
      }
    }
    var events = 0
    let monitorSeconds = best {
      var engine = PlaceMonitorEngine(places: places)
      events = 0
      for location in locations { events += engine.process(location).count }
    }
    let count = Double(locations.count)
    print("Stay detector: \(locations.count) fixes (\(hours) h at \(hz) Hz), \(stays) stays")
    print("")
    print("| | fixes/s | ns/fix |")
    print("|---|---:|---:|")
    print(
      "| StayDetector | \(Int(saturating: count / detectorSeconds)) | \(Int(saturating: detectorSeconds / count * 1e9)) |"
    )
    print(
      "| reference: PlaceMonitorEngine, 100 places (\(events) events) "
        + "| \(Int(saturating: count / monitorSeconds)) | \(Int(saturating: monitorSeconds / count * 1e9)) |"
    )
  }

  static func suggester(count: Int, referenceCount: Int) {
    var rng = SeededGenerator(seed: 78)
    let centre = Coordinate(latitude: 48.137, longitude: 11.575)
    let recurring = (0..<25).map { _ in
      centre.offset(
        by: Double.random(in: 0...15_000, using: &rng),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
    }
    let start = Date(timeIntervalSince1970: 1_796_000_000)
    let stays = (0..<count).map { index -> Stay in
      let base =
        Double.random(in: 0..<1, using: &rng) < 0.6
        ? recurring[Int.random(in: 0..<recurring.count, using: &rng)]
          .offset(
            by: Double.random(in: 0...20, using: &rng),
            bearingDegrees: Double.random(in: 0..<360, using: &rng))
        : centre.offset(
          by: Double.random(in: 0...30_000, using: &rng),
          bearingDegrees: Double.random(in: 0..<360, using: &rng))
      return Stay(
        arrivalDate: start.addingTimeInterval(Double(index) * 3600),
        departureDate: start.addingTimeInterval(Double(index) * 3600 + 1200), coordinate: base,
        horizontalAccuracy: Double.random(in: 3...15, using: &rng), fixCount: 1200)
    }
    var places = 0
    let suggesterSeconds = best { places = PlaceSuggester().suggestions(stays).count }
    let subset = Array(stays.prefix(referenceCount))
    var cores = 0
    let referenceSeconds = best {
      cores = 0
      for a in subset.indices {
        var neighbours = 0
        for b in subset.indices where subset[a].coordinate.distance(to: subset[b].coordinate) <= 50
        {
          neighbours += 1
        }
        if neighbours >= 3 { cores += 1 }
      }
    }
    let projected = referenceSeconds * pow(Double(count) / Double(subset.count), 2)
    print("Places suggest: \(count) stays, \(places) places (3 visits within 50 m)")
    print("")
    print("| | stays | CPU s |")
    print("|---|---:|---:|")
    print(
      "| PlaceSuggester (grid DBSCAN) | \(count) | \(String(format: "%.3f", suggesterSeconds)) |")
    print(
      "| reference: brute-force neighbour count (\(cores) core) | \(subset.count) "
        + "| \(String(format: "%.3f", referenceSeconds)) |")
    print(
      "| reference projected to \(count) (× n²) | \(count) | \(String(format: "%.1f", projected)) |"
    )
  }
}
