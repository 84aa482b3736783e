import Foundation
import NMEA
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkPipeline
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// `waymark-bench startup [--places 1000000] [--runs 3] [--daemon <path>]`: how long the real
/// `waymarkd` takes from its start to serving its first fix, with many places in its store,
/// against the same daemon with no places in the same run (the reference).
///
/// A private gpsd 3.22 reads a pseudo-terminal into which a drive is written at 10 Hz all
/// along. For each run the daemon is started on a store holding `places` circles (the daemon
/// benchmark's, within 5 km) or none, and the benchmark connects to its location socket as
/// soon as it exists, sends `WATCH` (its own identity holds a `whenInUse` grant) and waits for
/// the first `TPV`. Reported: the time to the socket (the places loaded and indexed) and to the
/// first TPV (the next epoch after the daemon's gpsd client is up, at most 100 ms later), best
/// and median of the runs, wall time. The store of places is started on twice `runs` times:
/// with its place snapshot removed before each start (the daemon reads the rows, builds the
/// index and stores the snapshot), then with the snapshot there (the daemon reads it back).
/// Before the runs, the same store's loading is timed in process: from the rows and from the
/// snapshot, as the daemon does, and, for reference, through `Place` values
/// (`PlaceRepository.all()`).
enum StartupBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .places(default: "1000000"),
    .number("--runs", default: "3", "Starts of each daemon"),
    .daemon,
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    let placeCount = options.int("--places")
    let runs = options.int("--runs")
    let binary = options.daemon
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-startup-\(getpid())").path
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let origin = Coordinate(latitude: 52.52, longitude: 13.405)
    print("waymarkd: \(binary); \(placeCount) places; \(runs) runs each")

    var stores: [(count: Int, path: String)] = []
    for count in [0, placeCount] {
      let path = directory + "/places-\(count).db"
      try DaemonBenchmark.makeStore(
        at: path, placeCount: count, around: origin, watcher: BrokerBenchmark.ownClientID())
      stores.append((count, path))
    }
    try loadInProcess(path: stores[1].path)

    let rig = try await BenchmarkGPSD()
    defer { rig.stop() }
    let (receiver, gpsd) = (rig.receiver, rig.gpsd)
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T12:00:00.000Z")!,
      origin: origin.offset(by: 2000, bearingDegrees: 250), seed: 5)
    route.rateHz = 10
    route.drive(to: origin.offset(by: 2000, bearingDegrees: 70), speedMetersPerSecond: 4)
    let epochs = route.fixes().prefix(10_000).map { NMEAWriter.sentences(for: $0) }
    let drive = Task { try await receiver.send(epochs: Array(epochs), interval: .seconds(0.1)) }
    defer { drive.cancel() }

    print(
      "| places | snapshot | runs | to socket, best / median ms | to first TPV, best / median ms "
        + "| peak RSS at the first TPV, MB |")
    print("|---:|---|---:|---:|---:|---:|")
    let starts = [(stores[0], "–"), (stores[1], "removed"), (stores[1], "stored")]
    for ((count, store), snapshot) in starts {
      var toSocket: [Double] = []
      var toFix: [Double] = []
      var peaks: [Double] = []
      for run in 0..<runs {
        try prepareSnapshot(store: store, removed: snapshot == "removed", count: count)
        let (socket, fix, peak) = try await startOnce(
          binary: binary, store: store, gpsd: gpsd.endpoint,
          directory: directory + "/run-\(count)-\(snapshot)-\(run)")
        toSocket.append(socket)
        toFix.append(fix)
        peaks.append(peak)
      }
      print(
        "| \(count) | \(snapshot) | \(runs) | \(summary(toSocket)) | \(summary(toFix)) | "
          + String(format: "%.0f", peaks.max() ?? 0) + " |")
    }
  }

  /// Removes the store's place snapshot, or checks that it is there (a store of places only).
  static func prepareSnapshot(store: String, removed: Bool, count: Int) throws {
    guard count > 0 else { return }
    let database = try Database(path: store)
    if removed { try database.write { try PlaceSnapshotRepository($0).remove() } }
    let present = try database.read { connection in
      let repository = PlaceSnapshotRepository(connection)
      return try repository.withSnapshot(
        version: try repository.placesVersion(), format: PlaceTable.snapshotFormat
      ) { _ in true } ?? false
    }
    guard present != removed else {
      throw BenchmarkError("the place snapshot is \(present ? "there" : "missing")")
    }
  }

  /// Times one start: to the location socket accepting, and to the first TPV read on it; and
  /// the daemon's peak resident set size then (VmHWM), MB.
  static func startOnce(binary: String, store: String, gpsd: String, directory: String)
    async throws -> (socket: Double, fix: Double, peakMB: Double)
  {
    try FileManager.default.createDirectory(
      atPath: directory, withIntermediateDirectories: true)
    let socketPath = directory + "/waymark.sock"
    let config = directory + "/waymark.conf"
    try Data("gpsd = \(gpsd)\nstore = \(store)\nsocket = \(socketPath)\n".utf8).write(
      to: URL(fileURLWithPath: config))
    let clock = ContinuousClock()
    let start = clock.now
    let daemon = try DaemonChild(
      [binary, "--config", config],
      environment: [
        "STATE_DIRECTORY": directory, "PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no",
      ])
    defer { daemon.stop() }
    let deadline = start + .seconds(60)
    var connection: BrokerConnection?
    while connection == nil {
      connection = try? BrokerConnection(path: socketPath)
      if connection == nil {
        guard clock.now < deadline else { throw BenchmarkError("no location socket in 60 s") }
        try await clock.sleep(for: .milliseconds(1))
      }
    }
    let socket = start.duration(to: clock.now).seconds * 1000
    defer { connection?.close() }
    try connection!.send(DaemonRequest.watch(DaemonRequest.Watch()))
    for await message in connection!.messages() where message.fix != nil {
      let fix = start.duration(to: clock.now).seconds * 1000
      return (socket, fix, Double(DaemonBenchmark.peak(daemon.processID)) / 1024)
    }
    throw BenchmarkError(
      "the location socket closed before a TPV; log:\n"
        + daemon.lines.suffix(5).joined(separator: "\n"))
  }

  /// Times reading the places from the store and building the monitor, in this process: as
  /// the daemon does (`PlaceTable.load`) from the rows (the monitor's columns into its packed
  /// storage, then the index built), the same storing the snapshot, and from the snapshot
  /// (wall and thread CPU time); and the reference, `Place` values (`PlaceRepository.all()`)
  /// handed to the monitor. Leaves the snapshot stored.
  static func loadInProcess(path: String) throws {
    let database = try Database(path: path)
    try database.write { try PlaceSnapshotRepository($0).remove() }
    let clock = ContinuousClock()
    let runs = [
      ("from the rows", false), ("storing the snapshot", true), ("from the snapshot", false),
      ("from the snapshot", false),
    ]
    for (label, storing) in runs {
      let cpu = PlaceMonitorBenchmark.threadCPUNanoseconds()
      let start = clock.now
      let table = try PlaceTable.load(from: database, storeSnapshot: storing)
      let read = clock.now
      let packed = PlaceMonitor(table: table)
      let built = clock.now
      print(
        String(
          format: "in process, as the daemon, %@: %d places read (and indexed) in %.0f ms, "
            + "monitor made in %.0f ms; %.0f ms of this thread's CPU in all",
          label, packed.placeCount, start.duration(to: read).seconds * 1000,
          read.duration(to: built).seconds * 1000,
          (PlaceMonitorBenchmark.threadCPUNanoseconds() - cpu) / 1e6))
    }
    let (bytes, count) = try database.read { connection in
      (
        try connection.queryFirst("SELECT length(data) FROM place_snapshot") { $0.int(0) } ?? 0,
        try PlaceRepository(connection).count()
      )
    }
    print("snapshot: \(bytes) bytes, \(bytes / max(1, count)) a place")
    let start = clock.now
    let places = try database.read { try PlaceRepository($0).all() }
    let read = clock.now
    let monitor = PlaceMonitor(places: places)
    let built = clock.now
    print(
      String(
        format:
          "in process, reference (Place values): %d places read in %.0f ms, "
          + "monitor built in %.0f ms",
        monitor.placeCount, start.duration(to: read).seconds * 1000,
        read.duration(to: built).seconds * 1000))
  }

  static func summary(_ values: [Double]) -> String {
    let sorted = values.sorted()
    return String(format: "%.0f / %.0f", sorted[0], sorted[sorted.count / 2])
  }
}
