import Foundation
import NMEA
import WaymarkCore
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// `waymark-bench daemon [--places <n>] [--seconds <s>] [--rate <hz>] [--daemon <path>] [--mqtt]`
/// (with `--mqtt`, a local mosquitto receives a location message per fix): memory
/// and CPU of the real `waymarkd` following a real gpsd, against gpsd itself in the same run.
///
/// A store with `places` circles (default 10,000, deterministic, within 5 km of the route) and
/// an `always` grant is prepared; a private gpsd reads a pseudo-terminal; `waymarkd` (the binary
/// next to this one) follows it. A synthetic drive through the places is written at `rate`
/// epochs per second (default 10) for `seconds` (default 30). Measured from /proc: resident set
/// size (VmRSS) when idle and at the end, peak (VmHWM), proportional set size and anonymous
/// memory (smaps_rollup), and CPU time (user + system) during the drive as a share of one core,
/// for waymarkd and for gpsd. A second daemon with no places shows what the places cost.
/// `--daemon` measures another build of waymarkd (such as one with a static Swift runtime).
enum DaemonBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .places(default: "10000"),
    .number("--seconds", "<s>", default: "30", "Length of the drive"),
    .rate,
    .daemon,
    .flag("--mqtt", "A local mosquitto receives a location message per fix."),
  ])

  struct Usage {
    var idleRSS: Int
    var endRSS: Int
    var peakRSS: Int
    /// Proportional set size at the end: shared library pages divided among their users.
    var endPSS: Int
    /// Anonymous (private heap and stack) memory at the end.
    var endAnonymous: Int
    var cpuSeconds: Double
    /// What the resident memory is at the end, mapping by mapping.
    var breakdown: MemoryBreakdown? = nil
  }

  static func run(_ options: BenchmarkArguments) async throws {
    let placeCount = options.int("--places")
    let seconds = options.double("--seconds")
    let rate = options.double("--rate")
    let binary = options.daemon
    let mosquitto = options.has("--mqtt") ? try BenchmarkMosquitto() : nil
    defer { mosquitto?.stop() }
    if let mosquitto {
      print("MQTT: a location message per fix to mosquitto on port \(mosquitto.port)")
    }
    print("waymarkd: \(binary)")
    let empty = try await measure(
      binary: binary, placeCount: 0, seconds: seconds, rate: rate, mqttPort: mosquitto?.port)
    let full = try await measure(
      binary: binary, placeCount: placeCount, seconds: seconds, rate: rate,
      mqttPort: mosquitto?.port)
    func megabytes(_ kilobytes: Int) -> String {
      String(format: "%.1f MB", Double(kilobytes) / 1024)
    }
    func percent(_ usage: Usage) -> String {
      String(format: "%.2f %%", usage.cpuSeconds / seconds * 100)
    }
    print(
      "\n\(Int(saturating: seconds * rate)) epochs at \(rate) Hz over \(seconds) s; "
        + "\(full.events) place events with \(placeCount) places\n")
    print(
      "| process | places | idle RSS | RSS after drive | peak RSS | PSS after drive "
        + "| anonymous after drive | CPU (one core) |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|")
    var rows = [("gpsd 3.22 (reference)", "–", full.gpsd)]
    if let watcher = full.watcher { rows.append(("waymark watch --json", "–", watcher)) }
    rows += [("waymarkd", "0", empty.daemon), ("waymarkd", "\(placeCount)", full.daemon)]
    for (name, places, usage) in rows {
      print(
        "| \(name) | \(places) | \(megabytes(usage.idleRSS)) | \(megabytes(usage.endRSS)) | "
          + "\(megabytes(usage.peakRSS)) | \(megabytes(usage.endPSS)) | "
          + "\(megabytes(usage.endAnonymous)) | \(percent(usage)) |")
    }
    print(
      String(
        format: "\nwaymarkd (%d places) / gpsd: RSS %.1f×, CPU %.1f×", placeCount,
        Double(full.daemon.endRSS) / Double(max(1, full.gpsd.endRSS)),
        full.daemon.cpuSeconds / max(1e-9, full.gpsd.cpuSeconds)))
    var breakdowns: [(String, MemoryBreakdown)] = []
    if let gpsd = full.gpsd.breakdown { breakdowns.append(("gpsd", gpsd)) }
    if let daemon = full.daemon.breakdown { breakdowns.append(("waymarkd", daemon)) }
    print("\nAfter the drive, by mapping (/proc/<pid>/smaps; MB):\n")
    print(MemoryBreakdown.table(breakdowns))
  }

  struct Result {
    var daemon: Usage
    var gpsd: Usage
    /// `waymark watch --json` on the same gpsd: a minimal Swift + Foundation gpsd client.
    var watcher: Usage?
    var events: Int
    /// waymarkd's log (standard error), through its stop.
    var log = ""
  }

  static func measure(
    binary: String, placeCount: Int, seconds: Double, rate: Double, mqttPort: UInt16?,
    extraConfig: String = ""
  ) async throws
    -> Result
  {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-daemon-\(getpid())-\(placeCount)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let origin = Coordinate(latitude: 52.52, longitude: 13.405)
    let store = directory.appendingPathComponent("waymark.db").path
    try makeStore(at: store, placeCount: placeCount, around: origin)

    let rig = try await BenchmarkGPSD()
    defer { rig.stop() }
    let (receiver, gpsd) = (rig.receiver, rig.gpsd)
    let config = directory.appendingPathComponent("waymark.conf").path
    let mqtt = mqttPort.map { "mqtt = 127.0.0.1:\($0)\nmqtt-interval = 0\n" } ?? ""
    try Data("gpsd = 127.0.0.1:\(gpsd.port)\n\(mqtt)\(extraConfig)".utf8).write(
      to: URL(fileURLWithPath: config))
    let log = directory.appendingPathComponent("waymarkd.log").path
    var daemonOptions = ProcessSpawner.Options()
    daemonOptions.standardError = .file(log)
    let daemonPID = try ProcessSpawner.spawn(
      [binary, "--config", config],
      environment: [
        "STATE_DIRECTORY": directory.path, "PATH": "/usr/bin:/bin",
        "SWIFT_BACKTRACE": "enable=no",
      ], options: daemonOptions
    ).processID
    var daemonRunning = true
    defer {
      if daemonRunning {
        kill(daemonPID, SIGTERM)
        _ = ProcessSpawner.waitForExit(daemonPID)
      }
    }
    // In the full run, the CLI follows the same gpsd: the cost of Swift + Foundation + libgps
    // without places, store or systemd.
    let waymark = URL(fileURLWithPath: binary).deletingLastPathComponent()
      .appendingPathComponent("waymark").path
    let withWatcher = placeCount > 0 && FileManager.default.isExecutableFile(atPath: waymark)
    let watcherPID =
      withWatcher
      ? try ProcessSpawner.spawn(
        [waymark, "watch", "127.0.0.1:\(gpsd.port)", "--json"],
        environment: ProcessInfo.processInfo.environment
      ).processID : 0
    defer {
      if withWatcher {
        kill(watcherPID, SIGTERM)
        _ = ProcessSpawner.waitForExit(watcherPID)
      }
    }
    try await gpsd.waitForWatchers(withWatcher ? 2 : 1)
    let idleWatcher = withWatcher ? rss(watcherPID) : 0
    let watcherCPU = withWatcher ? cpuSeconds(watcherPID) : 0
    guard let gpsdPID = gpsd.processID else { throw BenchmarkError("gpsd is not running") }
    let clock = ContinuousClock()
    try await clock.sleep(for: .seconds(1))
    let idleDaemon = rss(daemonPID)
    let idleGPSD = rss(gpsdPID)
    let daemonCPU = cpuSeconds(daemonPID)
    let gpsdCPU = cpuSeconds(gpsdPID)

    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T12:00:00.000Z")!,
      origin: origin.offset(by: 2000, bearingDegrees: 250), seed: 5)
    route.rateHz = rate
    route.noiseMeters = 1
    // A slow drive across the field of places: 4 m/s passes many circles.
    route.drive(to: origin.offset(by: 2000, bearingDegrees: 70), speedMetersPerSecond: 4)
    let epochs = route.fixes().prefix(Int(saturating: seconds * rate)).map {
      NMEAWriter.sentences(for: $0)
    }
    try await receiver.send(epochs: Array(epochs), interval: .seconds(1 / rate))
    try await clock.sleep(for: .milliseconds(500))
    let daemon = Usage(
      idleRSS: idleDaemon, endRSS: rss(daemonPID), peakRSS: peak(daemonPID),
      endPSS: rollup(daemonPID, "Pss:"), endAnonymous: rollup(daemonPID, "Anonymous:"),
      cpuSeconds: cpuSeconds(daemonPID) - daemonCPU, breakdown: MemoryBreakdown(pid: daemonPID))
    let reference = Usage(
      idleRSS: idleGPSD, endRSS: rss(gpsdPID), peakRSS: peak(gpsdPID),
      endPSS: rollup(gpsdPID, "Pss:"), endAnonymous: rollup(gpsdPID, "Anonymous:"),
      cpuSeconds: cpuSeconds(gpsdPID) - gpsdCPU, breakdown: MemoryBreakdown(pid: gpsdPID))
    let watched: Usage? =
      withWatcher
      ? Usage(
        idleRSS: idleWatcher, endRSS: rss(watcherPID), peakRSS: peak(watcherPID),
        endPSS: rollup(watcherPID, "Pss:"), endAnonymous: rollup(watcherPID, "Anonymous:"),
        cpuSeconds: cpuSeconds(watcherPID) - watcherCPU) : nil
    kill(daemonPID, SIGTERM)
    _ = ProcessSpawner.waitForExit(daemonPID)
    daemonRunning = false
    let text = (try? String(contentsOfFile: log, encoding: .utf8)) ?? ""
    let events = text.split(separator: "\n").filter {
      $0.hasPrefix("<5>ARRIVAL") || $0.hasPrefix("<5>DEPARTURE")
    }.count
    return Result(daemon: daemon, gpsd: reference, watcher: watched, events: events, log: text)
  }

  /// A store at `path` with `placeCount` places around `origin`, waymarkd's `always` grant and,
  /// when `watcher` is given, a `whenInUse` grant for that client id.
  static func makeStore(
    at path: String, placeCount: Int, around origin: Coordinate, watcher: String? = nil
  ) throws {
    let database = try Database(path: path)
    let places = places(count: placeCount, around: origin)
    try database.write { _ = try PlaceRepository($0).upsert(places) }
    let grants = DatabaseGrantStore(database: database)
    try grants.save(Grant(clientID: "waymarkd", level: .always, grantedAt: Date()))
    if let watcher {
      try grants.save(Grant(clientID: watcher, level: .whenInUse, grantedAt: Date()))
    }
  }

  /// `count` circles of 30 to 100 m within 5 km of `origin`, the same for every run.
  static func places(count: Int, around origin: Coordinate) -> [Place] {
    var generator = SeededGenerator(seed: 42)
    var places: [Place] = []
    for number in 0..<count {
      let distance = 5000 * generator.nextUnit().squareRoot()
      let bearing = 360 * generator.nextUnit()
      places.append(
        Place(
          id: "p\(number)", name: "Place \(number)",
          coordinate: origin.offset(by: distance, bearingDegrees: bearing),
          radiusMeters: 30 + 70 * generator.nextUnit()))
    }
    return places
  }

  /// VmRSS in kB.
  static func rss(_ pid: pid_t) -> Int { status(pid, "VmRSS:") }

  /// VmHWM (peak RSS) in kB.
  static func peak(_ pid: pid_t) -> Int { status(pid, "VmHWM:") }

  /// A field of /proc/pid/smaps_rollup in kB.
  static func rollup(_ pid: pid_t, _ key: String) -> Int {
    field("/proc/\(pid)/smaps_rollup", key)
  }

  static func status(_ pid: pid_t, _ key: String) -> Int { field("/proc/\(pid)/status", key) }

  static func field(_ path: String, _ key: String) -> Int {
    guard let text = try? String(contentsOfFile: path, encoding: .utf8),
      let line = text.split(separator: "\n").first(where: { $0.hasPrefix(key) })
    else { return 0 }
    return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "")
      ?? 0
  }

  /// User + system CPU seconds of `pid` (fields 14 and 15 of /proc/pid/stat).
  static func cpuSeconds(_ pid: pid_t) -> Double {
    guard let text = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
      let close = text.lastIndex(of: ")")
    else { return 0 }
    let fields = text[text.index(after: close)...].split(separator: " ")
    // After the command: state is field 3, so utime (14) and stime (15) are at 11 and 12.
    guard fields.count > 12, let user = Double(fields[11]), let system = Double(fields[12]) else {
      return 0
    }
    return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
  }
}
