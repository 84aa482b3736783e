import CEpoll
import Foundation
import NMEA
import Synchronization
import WaymarkBroker
import WaymarkCore
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore

/// `waymark-bench broker [--watchers 10,100,1000] [--seconds <s>] [--rate <hz>]
/// [--daemon <path>]`: fan-out latency and CPU of waymarkd's location socket, against gpsd's own
/// fan-out in the same run.
///
/// First, gpsd's subscriber limit is found by trying: WATCH clients are connected to a private
/// gpsd one at a time until it closes one. Then, for each watcher count W (and once with no
/// watchers, the CPU baseline), a fresh private gpsd reads a pseudo-terminal, the real `waymarkd`
/// (the binary next to this one, or `--daemon`) follows it, and two sets of watchers follow the
/// same drive:
/// - (A) the reference: min(W, limit − 1) JSON watchers on gpsd's TCP port
///   (`?WATCH={"enable":true,"json":true};`; one slot is waymarkd's);
/// - (B) W watchers on waymarkd's socket (`{"class":"WATCH","enable":true}`), under a
///   `whenInUse` grant to this process's identity (`<user>:<real path of /proc/self/exe>`).
///
/// All watcher sockets are read by one thread with epoll(7), the two paths interleaved in its
/// poll set. The latency of an (epoch, watcher) pair runs from the instant the epoch's NMEA is
/// written into the pseudo-terminal to the return of the read(2) that completed the first TPV
/// line of that epoch (matched by its `time`) on that watcher's socket, both on
/// CLOCK_MONOTONIC. CPU is user + system time from /proc/<pid>/stat over the drive, per TPV
/// delivered (watchers × epochs), in total and above the no-watcher baseline. gpsd runs with
/// `-D 0`: at the harness's `-D 2` it logs every line it sends to every client.
enum BrokerBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--watchers", "<n,n…>", default: "10,100,1000", "Watcher counts, one run each"),
    .number("--seconds", "<s>", default: "25", "Length of each drive"),
    .rate,
    .daemon,
  ])

  /// One configuration's measurements.
  struct Outcome {
    var brokerWatchers: Int
    var directWatchers: Int
    var epochs: Int
    var seconds: Double
    /// Latencies in nanoseconds, sorted, over all (epoch, watcher) pairs that arrived.
    var direct: [Int64] = []
    var broker: [Int64] = []
    /// Per (epoch, broker watcher): arrival minus the earliest arrival of that epoch on any
    /// direct watcher.
    var added: [Int64] = []
    var missingDirect = 0
    var missingBroker = 0
    /// A probe run: one direct watcher whose arrivals are the kernel's receive times, and
    /// `added` measured against them.
    var isProbe = false
    /// Epochs whose probe time could not be taken from the TPV's own segment.
    var probeExcluded = 0
    var daemonCPU = 0.0
    var gpsdCPU = 0.0
    var benchmarkCPU = 0.0
    /// Watchers the daemon disconnected for not reading, and sockets closed under the reader.
    var slowDisconnects = 0
    var closedSockets = 0
    /// The reader's epoll wake-ups and reads during the drive.
    var readerPolls = 0
    var readerReads = 0
  }

  static func run(_ options: BenchmarkArguments) async throws {
    let counts = options.ints("--watchers")
    let seconds = options.double("--seconds")
    let rate = options.double("--rate")
    let binary = options.daemon
    guard GPSDHarness.isAvailable else {
      print("gpsd not found (\(GPSDHarness.defaultExecutable))")
      exit(69)
    }
    raiseDescriptorLimit()
    let scratch = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-broker-\(getpid())")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }
    let gpsd = try quietGPSD(in: scratch.path)

    let limit = try await gpsdClientLimit(executable: gpsd, cap: 2000)
    print("waymarkd: \(binary)")
    print(
      "gpsd subscriber limit: \(limit) WATCH clients accepted, the next one closed at once"
        + " (path A is measured with at most \(limit - 1): waymarkd holds one slot)")
    let epochs = Int(saturating: seconds * rate)
    var outcomes: [Outcome] = []
    for watchers in [0] + counts {
      let direct = min(watchers, max(0, limit - 1))
      print("running W = \(watchers) (\(direct) direct gpsd watchers), \(epochs) epochs…")
      outcomes.append(
        try await measure(
          binary: binary, gpsd: gpsd, brokerWatchers: watchers, directWatchers: direct,
          epochs: epochs, rate: rate, scratch: scratch.path))
    }
    var probes: [Outcome] = []
    for watchers in counts {
      print("running W = \(watchers) with one probe on gpsd, \(epochs) epochs…")
      probes.append(
        try await measure(
          binary: binary, gpsd: gpsd, brokerWatchers: watchers, directWatchers: 1,
          epochs: epochs, rate: rate, scratch: scratch.path, probe: true))
    }
    report(outcomes, rate: rate)
    reportProbes(probes)
  }

  // MARK: - One configuration

  static func measure(
    binary: String, gpsd executable: String, brokerWatchers: Int, directWatchers: Int,
    epochs: Int, rate: Double, scratch: String, probe: Bool = false
  ) async throws -> Outcome {
    let directory = scratch + "/w\(brokerWatchers)" + (probe ? "-probe" : "")
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(atPath: directory) }
    let store = directory + "/waymark.db"
    let grants = DatabaseGrantStore(database: try Database(path: store))
    try grants.save(Grant(clientID: "waymarkd", level: .always, grantedAt: Date()))
    try grants.save(Grant(clientID: ownClientID(), level: .whenInUse, grantedAt: Date()))

    let rig = try await BenchmarkGPSD(executable: executable)
    defer { rig.stop() }
    let (receiver, gpsd) = (rig.receiver, rig.gpsd)
    guard let gpsdPID = gpsd.processID else { throw BenchmarkError("gpsd is not running") }

    let socketPath = directory + "/waymark.sock"
    let config = directory + "/waymark.conf"
    try Data(
      """
      gpsd = 127.0.0.1:\(gpsd.port)
      store = \(store)
      socket = \(socketPath)
      socket-clients = \(max(1024, brokerWatchers + 16))
      socket-buffer = 1048576
      save-interval = 3600

      """.utf8
    ).write(to: URL(fileURLWithPath: config))
    let daemon = try DaemonChild(
      [binary, "--config", config],
      environment: [
        "STATE_DIRECTORY": directory, "PATH": "/usr/bin:/bin", "SWIFT_BACKTRACE": "enable=no",
      ])
    defer { daemon.stop() }
    // "receiver present" follows gpsd's DEVICES, which answers the daemon's WATCH: from then on
    // waymarkd holds its gpsd slot, taken before any direct watcher's.
    try await daemon.waitForLine(timeout: .seconds(15)) { $0.hasPrefix("<5>receiver present") }
    try await daemon.waitForLine(timeout: .seconds(15)) { $0.hasPrefix("<5>location socket ") }

    var descriptors: [Int32] = []
    var isDirect: [Bool] = []
    defer { for descriptor in descriptors { close(descriptor) } }
    // Interleaved (A, B, A, B, …, then the remaining B): neither path is always read first.
    for number in 0..<max(directWatchers, brokerWatchers) {
      if number < directWatchers {
        guard let descriptor = connectTCP(port: gpsd.port) else {
          throw BenchmarkError("direct watcher \(number) cannot connect to gpsd")
        }
        descriptors.append(descriptor)
        isDirect.append(true)
        if probe {
          // The kernel's receive time of each segment (software timestamps, CLOCK_REALTIME).
          // SOF_TIMESTAMPING_RX_SOFTWARE | SOF_TIMESTAMPING_SOFTWARE (linux/net_tstamp.h).
          var flags: Int32 = (1 << 3) | (1 << 4)
          setsockopt(
            descriptor, SOL_SOCKET, SO_TIMESTAMPING, &flags, socklen_t(MemoryLayout<Int32>.size))
        }
        sendLine(descriptor, #"?WATCH={"enable":true,"json":true};"#)
      }
      if number < brokerWatchers {
        guard let descriptor = connectUnix(path: socketPath) else {
          throw BenchmarkError("watcher \(number) cannot connect to \(socketPath)")
        }
        descriptors.append(descriptor)
        isDirect.append(false)
        sendLine(descriptor, DaemonRequest.watch(DaemonRequest.Watch()).line.string)
      }
    }
    for descriptor in descriptors {
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    // A drive longer than the warm-up and the measured epochs together.
    let warmUpLimit = Int(saturating: 15 * rate)
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-12-01T12:00:00.000Z")!,
      origin: Coordinate(latitude: 48.137_154, longitude: 11.576_124), seed: 11)
    route.rateHz = rate
    let driveSeconds = Double(warmUpLimit + epochs) / rate + 5
    route.drive(
      to: route.origin.offset(by: driveSeconds * 14, bearingDegrees: 60), speedMetersPerSecond: 14)
    let all = route.fixes().map { Array(NMEAWriter.sentences(for: $0).joined().utf8) }
    let times = route.fixes().map { Timestamp.milliseconds($0.time!) % 86_400_000 }
    guard all.count >= warmUpLimit + epochs else { throw BenchmarkError("route too short") }

    // Warm-up: epochs until every watcher has received a TPV (at least 10 epochs).
    let clock = ContinuousClock()
    let interval = Duration.seconds(1 / rate)
    var next = 0
    let warmUpReader = FanOutReader(descriptors: descriptors, epochTimes: [])
    warmUpReader.start()
    while next < 10 || warmUpReader.watchersWithTPV < descriptors.count {
      guard next < warmUpLimit else {
        _ = await warmUpReader.stop()
        let tail = daemon.lines.suffix(5).joined(separator: "\n")
        throw BenchmarkError(
          "only \(warmUpReader.watchersWithTPV) of \(descriptors.count) watchers received a "
            + "TPV during the warm-up; waymarkd's log ends:\n\(tail)")
      }
      try await receiver.terminal.write(all[next])
      next += 1
      try await clock.sleep(for: interval)
    }
    _ = await warmUpReader.stop()
    try await clock.sleep(for: .milliseconds(500))

    // The measured drive.
    let measured = Array(next..<(next + epochs))
    let reader = FanOutReader(
      descriptors: descriptors, epochTimes: measured.map { times[$0] },
      kernelTimed: probe ? Set(zip(descriptors, isDirect).filter(\.1).map(\.0)) : [])
    reader.start()
    let daemonStart = DaemonBenchmark.cpuSeconds(daemon.processID)
    let gpsdStart = DaemonBenchmark.cpuSeconds(gpsdPID)
    let benchmarkStart = GPSDBenchmark.processCPU()
    var written = [Int64](repeating: 0, count: epochs)
    let start = clock.now
    for (slot, epoch) in measured.enumerated() {
      try await clock.sleep(until: start + interval * slot)
      written[slot] = monotonicNanoseconds()
      try await receiver.terminal.write(all[epoch])
    }
    try await clock.sleep(for: .milliseconds(500))
    var outcome = Outcome(
      brokerWatchers: brokerWatchers, directWatchers: directWatchers, epochs: epochs,
      seconds: (clock.now - start).seconds, isProbe: probe)
    outcome.daemonCPU = DaemonBenchmark.cpuSeconds(daemon.processID) - daemonStart
    outcome.gpsdCPU = DaemonBenchmark.cpuSeconds(gpsdPID) - gpsdStart
    outcome.benchmarkCPU = (GPSDBenchmark.processCPU() - benchmarkStart).seconds
    let arrivals = await reader.stop()

    var firstDirect = [Int64](repeating: .max, count: epochs)
    for (watcher, row) in arrivals.times.enumerated() where isDirect[watcher] {
      for (slot, time) in row.enumerated() {
        if time == 0 {
          outcome.missingDirect += 1
        } else {
          outcome.direct.append(time - written[slot])
          firstDirect[slot] = min(firstDirect[slot], time)
        }
      }
    }
    for (watcher, row) in arrivals.times.enumerated() where !isDirect[watcher] {
      for (slot, time) in row.enumerated() {
        if time == 0 {
          outcome.missingBroker += 1
          continue
        }
        outcome.broker.append(time - written[slot])
        if firstDirect[slot] != .max { outcome.added.append(time - firstDirect[slot]) }
      }
    }
    outcome.direct.sort()
    outcome.broker.sort()
    outcome.added.sort()
    outcome.probeExcluded = arrivals.untimed
    outcome.closedSockets = arrivals.closed
    outcome.readerPolls = arrivals.polls
    outcome.readerReads = arrivals.reads
    outcome.slowDisconnects = daemon.lines.filter { $0.contains("does not read") }.count
    return outcome
  }
}
