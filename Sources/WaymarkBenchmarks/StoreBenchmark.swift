import Foundation
import WaymarkCore
import WaymarkProcess
import WaymarkStore
import WaymarkTesting

/// `waymark-bench store [--places <n>] [--transitions <n>] [--dir <path>]`: place import and
/// durable visit writes, each against a reference run in the same invocation.
///
/// - Import: `n` places (default 1,000,000) as GeoJSON: parse time (``PlaceCollection``), then
///   the store's import (``PlaceRepository/upsert(_:)``, one transaction) against the `sqlite3`
///   shell's `.import` of the same rows as CSV (into a staging table, then `INSERT … SELECT` into
///   the same `place` table, since 3.40 cannot import into a view), and against a plain batched
///   `INSERT` loop (one transaction, five columns) through the same statement API.
/// - Visit writes: `n` transitions (default 2,000) through ``VisitRecorder`` (each one
///   transaction: event, visit, place, last fix, `synchronous=FULL`) against a bare
///   `INSERT` + `COMMIT` loop with `synchronous=FULL` in WAL mode, and against the same loop run
///   by the `sqlite3` shell.
enum StoreBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--places", default: "1000000", "Places imported"),
    .number("--transitions", default: "2000", "Visit transitions written"),
    .directory,
  ])

  static func run(_ options: BenchmarkArguments) throws {
    let placeCount = options.int("--places")
    let transitions = options.int("--transitions")
    let work = try options.workDirectory("store")
    defer { try? FileManager.default.removeItem(atPath: work) }
    print("## waymark-bench store (\(placeCount) places, \(transitions) transitions, in \(work))")
    print("")
    try importBenchmark(count: placeCount, in: work)
    print("")
    try visitBenchmark(transitions: transitions, in: work)
  }

  /// Deterministic places spread over Europe.
  static func places(_ count: Int) -> [Place] {
    var state: UInt64 = 0x9E37_79B9_7F4A_7C15
    func next() -> Double {
      state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
      return Double(state >> 11) / Double(1 << 53)
    }
    return (0..<count).map { index in
      Place(
        id: "p\(index)", name: "Place \(index)",
        coordinate: Coordinate(latitude: 40 + next() * 15, longitude: -5 + next() * 25),
        radiusMeters: 50 + (next() * 200).rounded(), category: index % 3 == 0 ? "cafe" : nil)
    }
  }

  /// Wall-clock time and CPU time (user + system, of this process and of children reaped
  /// meanwhile) of `body`, seconds. On a shared machine CPU time is the steadier figure.
  struct Timing {
    var wall: Double
    var cpu: Double
  }

  static func measure(_ body: () throws -> Void) rethrows -> Timing {
    func cpu() -> Double {
      var total = 0.0
      for who in [RUSAGE_SELF.rawValue, RUSAGE_CHILDREN.rawValue] {
        var usage = rusage()
        getrusage(who, &usage)
        total += Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6
        total += Double(usage.ru_stime.tv_sec) + Double(usage.ru_stime.tv_usec) / 1e6
      }
      return total
    }
    let startCPU = cpu()
    let start = DispatchTime.now().uptimeNanoseconds
    try body()
    let wall = Double(DispatchTime.now().uptimeNanoseconds - start) / 1e9
    return Timing(wall: wall, cpu: cpu() - startCPU)
  }

  static func seconds(_ body: () throws -> Void) rethrows -> Double {
    try measure(body).wall
  }

  static func importBenchmark(count: Int, in work: String) throws {
    let generated = places(count)
    let geojson = Data(PlaceCollection.encode(generated))
    var decoded: [Place] = []
    let parse = try measure { decoded = try PlaceCollection.decode(geojson) }
    precondition(decoded.count == count)

    let storePath = (work as NSString).appendingPathComponent("import.db")
    let database = try Database(path: storePath)
    let store = try measure {
      _ = try database.write { try PlaceRepository($0).upsert(decoded) }
    }

    let plainPath = (work as NSString).appendingPathComponent("plain.db")
    let plain = try Database(path: plainPath)
    let loop = try measure {
      try plain.write { connection in
        for place in decoded {
          try connection.execute(
            "INSERT INTO place (id, name, latitude, longitude, radius) VALUES (?, ?, ?, ?, ?)",
            [
              .text(place.id), .text(place.name), .real(place.coordinate.latitude),
              .real(place.coordinate.longitude), .real(place.radiusMeters),
            ])
        }
      }
    }

    // The sqlite3 shell imports the same five columns from CSV into the same schema.
    let shellPath = (work as NSString).appendingPathComponent("shell.db")
    _ = try Database(path: shellPath)
    let csvPath = (work as NSString).appendingPathComponent("places.csv")
    var csv = ""
    csv.reserveCapacity(count * 48)
    for place in decoded {
      csv += "\(place.id),\(place.name),\(place.coordinate.latitude),"
      csv += "\(place.coordinate.longitude),\(place.radiusMeters)\n"
    }
    try Data(csv.utf8).write(to: URL(fileURLWithPath: csvPath))
    let shell = try measure {
      try sqlite3(
        shellPath,
        """
        PRAGMA journal_mode=WAL;
        PRAGMA synchronous=FULL;
        CREATE TEMP TABLE stage (id TEXT, name TEXT, latitude REAL, longitude REAL, radius REAL);
        .mode csv
        .import \(csvPath) stage
        INSERT INTO place (id, name, latitude, longitude, radius) SELECT * FROM stage;

        """)
    }
    let shellRows = try Database(path: shellPath).read { try PlaceRepository($0).count() }
    precondition(shellRows == count, "sqlite3 .import loaded \(shellRows) rows")
    let total = Timing(wall: parse.wall + store.wall, cpu: parse.cpu + store.cpu)
    print("### Import of \(count) places")
    print("")
    print("| Step | Wall (s) | CPU (s) | Places/s (CPU) | Ratio (CPU) |")
    print("|---|---:|---:|---:|---:|")
    for (name, timing) in [
      ("sqlite3 shell `.import` CSV + INSERT…SELECT (reference)", shell),
      ("plain batched INSERT loop, 5 columns", loop),
      ("store import (`PlaceRepository.upsert`)", store),
      ("GeoJSON parse (`PlaceCollection.decode`)", parse),
      ("`places import` total (parse + store)", total),
    ] {
      print(
        "| \(name) | \(String(format: "%.2f", timing.wall)) | \(String(format: "%.2f", timing.cpu)) | "
          + "\(String(format: "%.0f", Double(count) / timing.cpu)) | "
          + "\(String(format: "%.2f", shell.cpu / timing.cpu)) |")
    }
    print("")
    print(
      "GeoJSON \(geojson.count / 1_000_000) MB; ratio = reference CPU time / CPU time (higher is "
        + "faster)."
    )
  }

  static func visitBenchmark(transitions: Int, in work: String) throws {
    let path = (work as NSString).appendingPathComponent("visits.db")
    let database = try Database(path: path)
    let placeList = places(100)
    try database.write { _ = try PlaceRepository($0).upsert(placeList) }
    let recorder = try VisitRecorder(database: database, source: "bench")
    let reason = EventReason(
      rule: "inside", distanceMeters: 10, horizontalAccuracyMeters: 5, enterRadiusMeters: 100,
      exitRadiusMeters: 150, confirmations: 3, dwellSeconds: 20)
    let start = Date(timeIntervalSince1970: 1_795_953_600)
    let recorded = try seconds {
      for index in 0..<transitions {
        let visit = index / 2
        let place = placeList[visit % placeList.count]
        let arrival = start.addingTimeInterval(Double(visit) * 120)
        recorder.observe(
          Fix(
            time: arrival.addingTimeInterval(index % 2 == 0 ? 0 : 60), mode: .threeDimensional,
            coordinate: place.coordinate, horizontalError: 5))
        if index % 2 == 0 {
          try recorder.record(
            .arrival(
              .init(
                time: arrival, placeID: place.id, placeName: place.name,
                coordinate: place.coordinate, reason: reason)))
        } else {
          try recorder.record(
            .departure(
              .init(
                time: arrival.addingTimeInterval(60), placeID: place.id, placeName: place.name,
                coordinate: place.coordinate, arrival: arrival, reason: reason)))
        }
      }
    }

    let barePath = (work as NSString).appendingPathComponent("bare.db")
    let bare = try Database(path: barePath, migrations: [])
    try bare.write { try $0.executeScript("CREATE TABLE t (a INTEGER, b REAL, c TEXT)") }
    let loop = try seconds {
      for index in 0..<transitions {
        try bare.write {
          try $0.execute(
            "INSERT INTO t VALUES (?, ?, ?)",
            [.integer(Int64(index)), .real(Double(index)), .text("bench")])
        }
      }
    }

    let shellPath = (work as NSString).appendingPathComponent("shell-commits.db")
    var script = """
      PRAGMA journal_mode=WAL;
      PRAGMA synchronous=FULL;
      CREATE TABLE t (a INTEGER, b REAL, c TEXT);

      """
    for index in 0..<transitions {
      script += "BEGIN IMMEDIATE; INSERT INTO t VALUES (\(index), \(index).0, 'bench'); COMMIT;\n"
    }
    let shell = try seconds { try sqlite3(shellPath, script) }

    print("### Durable writes (\(transitions) commits, WAL, synchronous=FULL)")
    print("")
    print("| Writer | Time (s) | Commits/s | Ratio |")
    print("|---|---:|---:|---:|")
    let rate = { (time: Double) in Double(transitions) / time }
    print(row("sqlite3 shell, INSERT + COMMIT (reference)", shell, rate(shell), 1))
    print(row("bare INSERT + COMMIT through `Database.write`", loop, rate(loop), shell / loop))
    print(
      row(
        "`VisitRecorder` transition (event + visit + place)", recorded, rate(recorded),
        shell / recorded))
  }

  static func row(_ name: String, _ time: Double, _ rate: Double, _ ratio: Double) -> String {
    "| \(name) | \(String(format: "%.3f", time)) | \(String(format: "%.0f", rate)) | "
      + "\(String(format: "%.2f", ratio)) |"
  }

  /// Runs the `sqlite3` shell on `database` with `script` on standard input.
  static func sqlite3(_ database: String, _ script: String) throws {
    let run = try CommandRun.run(
      "/usr/bin/sqlite3", ["-batch", database], input: Data(script.utf8))
    guard run.status == 0 else {
      throw StoreError(.sqlite(code: 1), message: "sqlite3 exited \(run.status): \(run.stderr)")
    }
  }
}
