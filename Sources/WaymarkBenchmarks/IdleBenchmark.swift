import Foundation
import NMEA
import WaymarkClient
import WaymarkCore
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// `waymark-bench idle [--seconds <s>] [--fix-seconds <s>] [--places <n>] [--daemon <path>]`:
/// what the real `waymarkd` costs when nothing happens, in wake-ups, against gpsd itself in the
/// same run.
///
/// A wake-up is a context switch of one of the process's threads, voluntary or not, summed over
/// all its threads from `/proc/<pid>/task/*/status` and grouped by thread name
/// (`/proc/<pid>/task/*/comm`); a thread that ends inside a window takes its count with it.
/// Each thread's figure is followed by its voluntary part (the thread blocked and was woken);
/// the rest are preemptions (another runnable thread took its CPU).
/// The daemon runs as shipped under systemd (location socket and NMEA socket on) with `places`
/// circles (default 10,000) and an `always` grant, but without systemd's watchdog
/// (`WATCHDOG_USEC` unset): with `WatchdogSec=30s` the unit adds the ping systemd asks for,
/// one every 15 s.
///
/// Windows of `seconds` (default 300):
/// - (a) gpsd connected, its receiver (a pseudo-terminal) silent;
/// - (b) no gpsd at all (the configured port refuses connections);
///
/// then drives of `fix-seconds` (default 30) through the places at 1 Hz and 10 Hz, each with no
/// client and with one client watching on the location socket: wake-ups per fix.
enum IdleBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--seconds", "<s>", default: "300", "Length of each idle window"),
    .number("--fix-seconds", "<s>", default: "30", "Length of each drive"),
    .places(default: "10000"),
    .daemon,
  ])

  /// Context switches per thread id, with the thread's name.
  typealias Sample = [Int32: (name: String, switches: ThreadSwitches)]

  /// Wake-ups over one window.
  struct Window {
    var seconds: Double
    var daemon: [String: ThreadSwitches]
    var gpsd: [String: ThreadSwitches]

    var daemonTotal: Int { daemon.values.reduce(0) { $0 + $1.total } }
    var gpsdTotal: Int { gpsd.values.reduce(0) { $0 + $1.total } }
  }

  static func run(_ options: BenchmarkArguments) async throws {
    let seconds = options.double("--seconds")
    let fixSeconds = options.double("--fix-seconds")
    let placeCount = options.int("--places")
    let binary = options.daemon
    print("waymarkd: \(binary); \(placeCount) places; windows of \(seconds) s")

    let connected = try await Rig(binary: binary, placeCount: placeCount, withGPSD: true)
    defer { connected.stop() }
    print("(a) gpsd connected, receiver silent: measuring \(seconds) s…")
    let silent = try await connected.window(seconds: seconds)
    var drives: [(String, Double, Window)] = []
    for rate in [1.0, 10.0] {
      for watching in [false, true] {
        let label =
          "\(Int(saturating: rate)) Hz, " + (watching ? "one watching client" : "no client")
        print("drive at \(label): \(fixSeconds) s…")
        let window = try await connected.drive(
          rate: rate, seconds: fixSeconds, watching: watching)
        drives.append((label, rate * fixSeconds, window))
      }
    }
    connected.stop()

    let absent = try await Rig(binary: binary, placeCount: placeCount, withGPSD: false)
    defer { absent.stop() }
    print("(b) no gpsd: measuring \(seconds) s…")
    let alone = try await absent.window(seconds: seconds)
    absent.stop()

    report(silent: silent, alone: alone, drives: drives)
  }

  static func report(silent: Window, alone: Window, drives: [(String, Double, Window)]) {
    func rate(_ count: Int, _ window: Window) -> String {
      String(format: "%.3f/s", Double(count) / window.seconds)
    }
    func threads(_ counts: [String: ThreadSwitches], _ window: Window) -> String {
      counts.filter { $0.value.total > 0 }.sorted { $0.value.total > $1.value.total }
        .map {
          "\($0.key) \(rate($0.value.total, window)) (\(rate($0.value.voluntary, window)))"
        }
        .joined(separator: ", ")
    }
    print("\n| window | waymarkd wake-ups | per thread (voluntary) | gpsd wake-ups (reference) |")
    print("|---|---:|---|---:|")
    for (name, window) in [
      ("(a) gpsd connected, receiver silent", silent), ("(b) no gpsd", alone),
    ] {
      print(
        "| \(name), \(Int(saturating: window.seconds)) s | \(rate(window.daemonTotal, window)) | "
          + "\(threads(window.daemon, window)) | "
          + (window.gpsd.isEmpty ? "–" : rate(window.gpsdTotal, window)) + " |")
    }
    print(
      "\n| drive | fixes | waymarkd wake-ups per fix (voluntary) | per thread (voluntary) "
        + "| gpsd per fix (reference) |")
    print("|---|---:|---:|---|---:|")
    for (name, fixes, window) in drives {
      let perThread = window.daemon.filter { $0.value.total > 0 }
        .sorted { $0.value.total > $1.value.total }
        .map {
          "\($0.key) " + String(format: "%.2f", Double($0.value.total) / fixes)
            + String(format: " (%.2f)", Double($0.value.voluntary) / fixes)
        }
        .joined(separator: ", ")
      let voluntary = window.daemon.values.reduce(0) { $0 + $1.voluntary }
      print(
        "| \(name) | \(Int(fixes)) | "
          + String(format: "%.2f", Double(window.daemonTotal) / fixes)
          + String(format: " (%.2f)", Double(voluntary) / fixes) + " | \(perThread) | "
          + String(format: "%.2f", Double(window.gpsdTotal) / fixes) + " |")
    }
  }

  /// Context switches of every thread of `pid` now.
  static func sample(_ pid: pid_t) -> Sample { ThreadSwitches.threads(of: pid) }

  /// Wake-ups per thread name between two samples (a thread born in between counts from 0).
  static func wakeups(from start: Sample, to end: Sample) -> [String: ThreadSwitches] {
    var counts: [String: ThreadSwitches] = [:]
    for (tid, thread) in end {
      let before = start[tid]?.switches ?? ThreadSwitches()
      counts[thread.name, default: ThreadSwitches()].voluntary +=
        thread.switches.voluntary - before.voluntary
      counts[thread.name, default: ThreadSwitches()].involuntary +=
        thread.switches.involuntary - before.involuntary
    }
    return counts
  }

  /// A store with places and grants, perhaps a private gpsd on a silent pty, and waymarkd.
  final class Rig: @unchecked Sendable {
    let directory: String
    let daemon: DaemonChild
    let gpsdRig: BenchmarkGPSD?
    let socketPath: String
    let origin = Coordinate(latitude: 52.52, longitude: 13.405)
    private var stopped = false
    private var drives = 0

    init(binary: String, placeCount: Int, withGPSD: Bool) async throws {
      directory =
        FileManager.default.temporaryDirectory.path
        + "/waymark-bench-idle-\(getpid())-\(withGPSD ? "gpsd" : "alone")"
      try FileManager.default.createDirectory(
        atPath: directory, withIntermediateDirectories: true)
      let store = directory + "/waymark.db"
      try DaemonBenchmark.makeStore(
        at: store, placeCount: placeCount, around: origin,
        watcher: BrokerBenchmark.ownClientID())
      let endpoint: String
      if withGPSD {
        let started = try await BenchmarkGPSD()
        gpsdRig = started
        endpoint = started.gpsd.endpoint
      } else {
        gpsdRig = nil
        // A port nothing listens on: every connection attempt is refused.
        endpoint = "127.0.0.1:\(try GPSDHarness.freePort())"
      }
      socketPath = directory + "/waymark.sock"
      let config = directory + "/waymark.conf"
      try Data(
        """
        gpsd = \(endpoint)
        store = \(store)
        socket = \(socketPath)
        nmea-socket = \(directory)/nmea.sock

        """.utf8
      ).write(to: URL(fileURLWithPath: config))
      daemon = try DaemonChild(
        [binary, "--config", config],
        environment: [
          "STATE_DIRECTORY": directory, "PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no",
        ])
      try await daemon.waitForLine(timeout: .seconds(30)) { $0.hasPrefix("<5>location socket ") }
      if withGPSD {
        try await daemon.waitForLine(timeout: .seconds(30)) {
          $0.hasPrefix("<5>receiver present")
        }
      } else {
        try await daemon.waitForLine(timeout: .seconds(30)) { $0.contains("unreachable") }
      }
      // Start-up's work (the place index, the first grant read) is over before a window opens.
      try await ContinuousClock().sleep(for: .seconds(3))
    }

    /// Wake-ups of waymarkd and gpsd over `seconds` while `during` runs (or nothing does).
    func window(
      seconds: Double, during work: (@Sendable () async throws -> Void)? = nil
    ) async throws -> Window {
      let clock = ContinuousClock()
      let gpsdPID = gpsdRig?.gpsd.processID
      let daemonStart = IdleBenchmark.sample(daemon.processID)
      let gpsdStart = gpsdPID.map(IdleBenchmark.sample) ?? [:]
      let start = clock.now
      if let work {
        try await work()
      } else {
        try await clock.sleep(for: .seconds(seconds))
      }
      let elapsed = start.duration(to: clock.now)
      let daemonEnd = IdleBenchmark.sample(daemon.processID)
      let gpsdEnd = gpsdPID.map(IdleBenchmark.sample) ?? [:]
      return Window(
        seconds: Double(elapsed.components.seconds)
          + Double(elapsed.components.attoseconds) / 1e18,
        daemon: IdleBenchmark.wakeups(from: daemonStart, to: daemonEnd),
        gpsd: IdleBenchmark.wakeups(from: gpsdStart, to: gpsdEnd))
    }

    /// Drives through the places at `rate` epochs per second for `seconds`, with one client
    /// watching on the location socket when `watching`; the window ends 1 s after the last
    /// epoch (the daemon has handled it).
    func drive(rate: Double, seconds: Double, watching: Bool) async throws -> Window {
      guard let receiver = gpsdRig?.receiver else { throw BenchmarkError("no receiver") }
      drives += 1
      var route = RouteSynthesizer(
        start: Timestamp.parse("2026-12-01T12:00:00.000Z")!.addingTimeInterval(
          Double(drives) * 3600),
        origin: origin.offset(by: 2000, bearingDegrees: 250), seed: UInt64(drives))
      route.rateHz = rate
      route.noiseMeters = 1
      route.drive(to: origin.offset(by: 2000, bearingDegrees: 70), speedMetersPerSecond: 4)
      let epochs = Array(
        route.fixes().prefix(Int(saturating: seconds * rate)).map { NMEAWriter.sentences(for: $0) })
      var watcher: Int32?
      if watching {
        guard let descriptor = BrokerBenchmark.connectUnix(path: socketPath) else {
          throw BenchmarkError("cannot connect to \(socketPath)")
        }
        BrokerBenchmark.sendLine(descriptor, DaemonRequest.watch(DaemonRequest.Watch()).line.string)
        watcher = descriptor
        // The client reads everything until the socket closes, on a thread of its own.
        DetachedThread.start(name: "idle-watcher") {
          var buffer = [UInt8](repeating: 0, count: 65_536)
          while read(descriptor, &buffer, buffer.count) > 0 {}
          close(descriptor)
        }
        try await ContinuousClock().sleep(for: .seconds(1))
      }
      defer { if let watcher { shutdown(watcher, Int32(SHUT_RDWR)) } }
      return try await window(seconds: seconds) {
        try await receiver.send(epochs: epochs, interval: .seconds(1 / rate))
        try await ContinuousClock().sleep(for: .seconds(1))
      }
    }

    func stop() {
      guard !stopped else { return }
      stopped = true
      daemon.stop()
      gpsdRig?.stop()
      try? FileManager.default.removeItem(atPath: directory)
    }
  }
}
