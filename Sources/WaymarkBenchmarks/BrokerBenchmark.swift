import CEpoll
import Foundation
import NMEA
import Synchronization
import WaymarkBroker
import WaymarkCore
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
enum BrokerBenchmark {
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

  static func run(_ arguments: [String]) async throws {
    let options = BenchmarkArguments(arguments)
    let counts =
      options["--watchers"].map { $0.split(separator: ",").compactMap { Int($0) } }
      ?? [10, 100, 1000]
    let seconds = options["--seconds"].flatMap(Double.init) ?? 25
    let rate = options["--rate"].flatMap(Double.init) ?? 10
    let binary = options.executable("waymarkd", option: "--daemon")
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
    let epochs = Int(seconds * rate)
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

    let receiver = try FakeReceiver()
    let gpsd = try await GPSDHarness(devices: [receiver.path], executable: executable)
    defer {
      gpsd.stop()
      receiver.terminal.close()
    }
    try await receiver.warmUp(gpsd: gpsd)
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
        sendLine(descriptor, #"{"class":"WATCH","enable":true}"#)
      }
    }
    for descriptor in descriptors {
      _ = fcntl(descriptor, F_SETFL, fcntl(descriptor, F_GETFL) | O_NONBLOCK)
    }

    // A drive longer than the warm-up and the measured epochs together.
    let warmUpLimit = Int(15 * rate)
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

  // MARK: - Report

  static func report(_ outcomes: [Outcome], rate: Double) {
    guard let baseline = outcomes.first(where: { $0.brokerWatchers == 0 }) else { return }
    func micro(_ values: [Int64], _ p: Double) -> String {
      guard !values.isEmpty else { return "–" }
      let value = values[min(values.count - 1, Int((Double(values.count - 1) * p).rounded()))]
      return String(format: "%.0f", Double(value) / 1000)
    }
    func difference(_ p: Double, _ outcome: Outcome) -> String {
      guard !outcome.direct.isEmpty, !outcome.broker.isEmpty else { return "–" }
      let b = outcome.broker[Int((Double(outcome.broker.count - 1) * p).rounded())]
      let a = outcome.direct[Int((Double(outcome.direct.count - 1) * p).rounded())]
      return String(format: "%+.0f", Double(b - a) / 1000)
    }
    let runs = outcomes.filter { $0.brokerWatchers > 0 }
    print(
      "\n\(baseline.epochs) epochs at \(rate) Hz per configuration; latencies in µs, "
        + "pty write → watcher's read of the TPV, over all (epoch, watcher) pairs\n")
    print(
      "| W | A: direct gpsd watchers | A p50 | A p99 | B: waymarkd watchers | B p50 | B p99 "
        + "| B − A p50 | B − A p99 | added p50 | added p99 | missed A / B |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for outcome in runs {
      print(
        "| \(outcome.brokerWatchers) | \(outcome.directWatchers) | \(micro(outcome.direct, 0.5)) "
          + "| \(micro(outcome.direct, 0.99)) | \(outcome.brokerWatchers) "
          + "| \(micro(outcome.broker, 0.5)) | \(micro(outcome.broker, 0.99)) "
          + "| \(difference(0.5, outcome)) | \(difference(0.99, outcome)) "
          + "| \(micro(outcome.added, 0.5)) | \(micro(outcome.added, 0.99)) "
          + "| \(outcome.missingDirect) / \(outcome.missingBroker) |")
    }
    print(
      "\n(added: per (epoch, waymarkd watcher), its arrival minus the epoch's earliest arrival "
        + "on a direct gpsd watcher)\n")
    print(
      "| W | waymarkd CPU s | waymarkd µs / TPV | above baseline µs / TPV | gpsd CPU s "
        + "| gpsd TPVs (A + waymarkd) | gpsd µs / TPV | above baseline µs / TPV "
        + "| benchmark CPU s | disconnected |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for outcome in outcomes {
      let delivered = Double(outcome.brokerWatchers * outcome.epochs)
      let gpsdDelivered = Double((outcome.directWatchers + 1) * outcome.epochs)
      let directDelivered = Double(outcome.directWatchers * outcome.epochs)
      func perTPV(_ seconds: Double, _ count: Double) -> String {
        count > 0 ? String(format: "%.1f", seconds * 1e6 / count) : "–"
      }
      print(
        "| \(outcome.brokerWatchers) | \(String(format: "%.2f", outcome.daemonCPU)) "
          + "| \(perTPV(outcome.daemonCPU, delivered)) "
          + "| \(perTPV(outcome.daemonCPU - baseline.daemonCPU, delivered)) "
          + "| \(String(format: "%.2f", outcome.gpsdCPU)) | \(Int(gpsdDelivered)) "
          + "| \(perTPV(outcome.gpsdCPU, gpsdDelivered)) "
          + "| \(perTPV(outcome.gpsdCPU - baseline.gpsdCPU, directDelivered)) "
          + "| \(String(format: "%.2f", outcome.benchmarkCPU)) "
          + "| \(outcome.slowDisconnects + outcome.closedSockets) |")
    }
    for outcome in runs {
      let epochs = Double(outcome.epochs)
      print(
        String(
          format:
            "\nW = %d: the benchmark's reader woke %.1f times and read %.0f times per epoch "
            + "for %d sockets, %.1f µs of the benchmark's CPU per read",
          outcome.brokerWatchers, Double(outcome.readerPolls) / epochs,
          Double(outcome.readerReads) / epochs, outcome.brokerWatchers + outcome.directWatchers,
          outcome.benchmarkCPU * 1e6 / Double(max(1, outcome.readerReads))))
    }
    print(
      "\n(CPU: user + system over the drive, \(String(format: "%.1f", baseline.seconds)) s; "
        + "baseline: W = 0, waymarkd with no watchers, gpsd with waymarkd alone)")
  }

  static func reportProbes(_ probes: [Outcome]) {
    guard !probes.isEmpty else { return }
    func micro(_ values: [Int64], _ p: Double) -> String {
      guard !values.isEmpty else { return "–" }
      let value = values[min(values.count - 1, Int((Double(values.count - 1) * p).rounded()))]
      return String(format: "%.0f", Double(value) / 1000)
    }
    print(
      "\nProbe runs: gpsd with waymarkd and one direct watcher (the probe) only; added = a "
        + "waymarkd watcher's read of the TPV minus the kernel's receive time of the same TPV "
        + "on the probe's socket (gpsd writes waymarkd's socket first, the probe's next)\n")
    print(
      "| W | B p50 µs | B p99 µs | probe p50 µs | added p50 µs | added p99 µs | added max µs "
        + "| epochs without a probe time | missed B |")
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for outcome in probes {
      print(
        "| \(outcome.brokerWatchers) | \(micro(outcome.broker, 0.5)) "
          + "| \(micro(outcome.broker, 0.99)) | \(micro(outcome.direct, 0.5)) "
          + "| \(micro(outcome.added, 0.5)) | \(micro(outcome.added, 0.99)) "
          + "| \(micro(outcome.added, 1)) | \(outcome.probeExcluded) | \(outcome.missingBroker) |")
    }
  }

  // MARK: - Plumbing

  /// This process's client id as waymarkd identifies it: `<user>:<real path of the exe>`.
  static func ownClientID() -> String {
    let resolved = realpath("/proc/self/exe", nil)
    defer { free(resolved) }
    let executable = resolved.map { String(cString: $0) } ?? CommandLine.arguments[0]
    return PeerIdentity.userName(getuid()) + ":" + executable
  }

  /// A wrapper that starts gpsd as the harness asks but with `-D 0`: at `-D 2` gpsd logs every
  /// line sent to every client, which would more than double its CPU with 64 watchers.
  static func quietGPSD(in directory: String) throws -> String {
    let path = directory + "/gpsd-quiet"
    let script = """
      #!/bin/sh
      for argument in "$@"; do
        shift
        if [ "$previous" = "-D" ]; then set -- "$@" 0; else set -- "$@" "$argument"; fi
        previous=$argument
      done
      exec '\(GPSDHarness.defaultExecutable)' "$@"

      """
    try Data(script.utf8).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o755)
    return path
  }

  /// Connects WATCH clients to a private gpsd (no device) one at a time, each waiting for its
  /// WATCH answer, until gpsd closes one instead or `cap` are connected.
  ///
  /// - Returns: how many clients gpsd served at once.
  static func gpsdClientLimit(executable: String, cap: Int) async throws -> Int {
    let gpsd = try await GPSDHarness(devices: [], executable: executable)
    defer { gpsd.stop() }
    var open: [Int32] = []
    defer { for descriptor in open { close(descriptor) } }
    while open.count < cap {
      guard let descriptor = connectTCP(port: gpsd.port) else { break }
      var timeout = timeval(tv_sec: 2, tv_usec: 0)
      setsockopt(
        descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      sendLine(descriptor, #"?WATCH={"enable":true,"json":true};"#)
      var received: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      var answered = false
      while !answered {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        received += buffer[..<count]
        answered = String(decoding: received, as: UTF8.self).contains(#""class":"WATCH""#)
      }
      guard answered else {
        close(descriptor)
        break
      }
      open.append(descriptor)
    }
    return open.count
  }

  /// Lets this process and its children (waymarkd) open as many descriptors as allowed.
  static func raiseDescriptorLimit() {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
  }

  /// CLOCK_MONOTONIC in nanoseconds.
  static func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
  }

  static func connectTCP(port: UInt16) -> Int32? {
    let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    let status = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard status == 0 else {
      close(descriptor)
      return nil
    }
    return descriptor
  }

  static func connectUnix(path: String) -> Int32? {
    guard var address = try? sockaddr_un(path: path) else { return nil }
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    let status = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard status == 0 else {
      close(descriptor)
      return nil
    }
    return descriptor
  }

  /// Writes `text` and a newline (small enough for one send on a fresh socket).
  static func sendLine(_ descriptor: Int32, _ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }
}

/// Reads every watcher socket on one thread with epoll(7) and records, per watcher and epoch, when
/// the first TPV of that epoch arrived: CLOCK_MONOTONIC at the return of the read(2) that
/// completed the line. One read per readable socket per poll round, so a busy socket cannot
/// starve the others.
final class FanOutReader: Sendable {
  struct Arrivals: Sendable {
    /// `times[watcher][epoch]`: nanoseconds, 0 when no TPV of that epoch arrived.
    var times: [[Int64]]
    /// Sockets that reached end of file or failed.
    var closed: Int
    /// epoll_wait(2) calls that returned ready sockets, and read(2) calls that returned data.
    var polls: Int
    var reads: Int
    /// TPVs on kernel-timed sockets left unrecorded: the read held more after the TPV's line,
    /// so the receive time (of the read's last segment) might not be the TPV's.
    var untimed = 0
  }

  private let descriptors: [Int32]
  private let kernelTimed: Set<Int32>
  private let epochIndex: [Int64: Int]
  private let epochCount: Int
  private let stopping = Atomic<Bool>(false)
  private let withTPV = Atomic<Int>(0)
  private let result = Locked<Arrivals?>(nil)

  /// - Parameters:
  ///   - descriptors: non-blocking sockets of watchers.
  ///   - epochTimes: the time of day (milliseconds) of each measured epoch.
  ///   - kernelTimed: sockets with `SO_TIMESTAMPING` (receive, software): their arrival is the
  ///     kernel's receive time of the segment, not the read's return.
  init(descriptors: [Int32], epochTimes: [Int64], kernelTimed: Set<Int32> = []) {
    self.descriptors = descriptors
    self.kernelTimed = kernelTimed
    epochCount = epochTimes.count
    epochIndex = Dictionary(
      epochTimes.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
  }

  /// Watchers that have received at least one TPV.
  var watchersWithTPV: Int { withTPV.load(ordering: .relaxed) }

  func start() {
    DetachedThread.start(name: "bench-fan-out") { self.loop() }
  }

  /// Ends the thread and returns what it recorded.
  func stop() async -> Arrivals {
    stopping.store(true, ordering: .relaxed)
    while true {
      if let arrivals = result.withLock({ $0 }) { return arrivals }
      try? await Task.sleep(for: .milliseconds(5))
    }
  }

  private func loop() {
    // epoll: a wake-up costs the sockets that are ready, not (as with poll(2)) a registration
    // on every socket of the set, which with hundreds of watchers was most of the reader's CPU
    // and delayed the reads of the last sockets of each epoch.
    let poller = epoll_create1(Int32(EPOLL_CLOEXEC))
    defer { close(poller) }
    for (watcher, descriptor) in descriptors.enumerated() {
      var event = epoll_event()
      event.events = EPOLLIN.rawValue
      event.data.u64 = UInt64(watcher)
      epoll_ctl(poller, EPOLL_CTL_ADD, descriptor, &event)
    }
    var ready = [epoll_event](repeating: epoll_event(), count: max(1, descriptors.count))
    var pending = [[UInt8]](repeating: [], count: descriptors.count)
    var times = [[Int64]](
      repeating: [Int64](repeating: 0, count: epochCount), count: descriptors.count)
    var seen = [Bool](repeating: false, count: descriptors.count)
    var buffer = [UInt8](repeating: 0, count: 65536)
    var closed = 0
    var polls = 0
    var reads = 0
    var untimed = 0
    var control = [UInt8](repeating: 0, count: 512)
    // CLOCK_REALTIME (the kernel's timestamps) minus CLOCK_MONOTONIC, taken once.
    let realtimeOffset = Self.realtimeNanoseconds() - BrokerBenchmark.monotonicNanoseconds()
    while !stopping.load(ordering: .relaxed) {
      // Wakes for data, and every 250 ms to check `stop`.
      let readyCount = epoll_wait(poller, &ready, Int32(ready.count), 250)
      guard readyCount > 0 else { continue }
      polls += 1
      for index in 0..<Int(readyCount) {
        let watcher = Int(ready[index].data.u64)
        let descriptor = descriptors[watcher]
        let timed = kernelTimed.contains(descriptor)
        var kernelTime: Int64?
        let count =
          timed
          ? Self.receive(descriptor, &buffer, &control, kernelTime: &kernelTime)
          : read(descriptor, &buffer, buffer.count)
        var now = BrokerBenchmark.monotonicNanoseconds()
        if timed {
          guard let kernelTime else {
            if count > 0 { untimed += 1 }
            continue
          }
          now = kernelTime - realtimeOffset
        }
        if count < 0 && (errno == EAGAIN || errno == EINTR) { continue }
        guard count > 0 else {
          closed += 1
          epoll_ctl(poller, EPOLL_CTL_DEL, descriptor, nil)
          continue
        }
        reads += 1
        // Usually whole lines arrive: they are scanned in the read buffer, only a trailing
        // partial line is kept.
        var chunk = buffer[..<count]
        if !pending[watcher].isEmpty {
          pending[watcher].append(contentsOf: chunk)
          chunk = pending[watcher][...]
        }
        var start = chunk.startIndex
        while let newline = chunk[start...].firstIndex(of: 0x0A) {
          let line = chunk[start..<newline]
          start = newline + 1
          guard line.starts(with: Self.tpvPrefix) else { continue }
          if !seen[watcher] {
            seen[watcher] = true
            withTPV.add(1, ordering: .relaxed)
          }
          guard let time = Self.timeOfDayMilliseconds(line), let epoch = epochIndex[time],
            times[watcher][epoch] == 0
          else { continue }
          if timed && newline != chunk.endIndex - 1 {
            untimed += 1
            continue
          }
          times[watcher][epoch] = now
        }
        pending[watcher] = Array(chunk[start...])
      }
    }
    result.withLock {
      $0 = Arrivals(times: times, closed: closed, polls: polls, reads: reads, untimed: untimed)
    }
  }

  /// CLOCK_REALTIME in nanoseconds.
  static func realtimeNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_REALTIME, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
  }

  /// recvmsg(2) into `buffer`; `kernelTime` is the software receive timestamp (CLOCK_REALTIME,
  /// ns) of the `SCM_TIMESTAMPING` control message, when there is one.
  static func receive(
    _ descriptor: Int32, _ buffer: inout [UInt8], _ control: inout [UInt8],
    kernelTime: inout Int64?
  ) -> Int {
    let capacity = control.count
    return buffer.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { controlBytes in
        var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
        return withUnsafeMutablePointer(to: &vector) { vectorPointer in
          var message = msghdr()
          message.msg_iov = vectorPointer
          message.msg_iovlen = 1
          message.msg_control = controlBytes.baseAddress
          message.msg_controllen = capacity
          let count = recvmsg(descriptor, &message, 0)
          guard count > 0 else { return count }
          // struct cmsghdr { size_t len; int level; int type; } then the data, 8-byte aligned.
          var offset = 0
          let header = MemoryLayout<Int>.size + 2 * MemoryLayout<Int32>.size
          while offset + header <= Int(message.msg_controllen) {
            let length = controlBytes.load(fromByteOffset: offset, as: Int.self)
            let level = controlBytes.load(fromByteOffset: offset + 8, as: Int32.self)
            let type = controlBytes.load(fromByteOffset: offset + 12, as: Int32.self)
            guard length >= header else { break }
            if level == SOL_SOCKET && type == SO_TIMESTAMPING {
              // struct scm_timestamping { struct timespec ts[3]; }: ts[0] is the software one.
              let seconds = controlBytes.load(fromByteOffset: offset + header, as: Int.self)
              let nanoseconds = controlBytes.load(fromByteOffset: offset + header + 8, as: Int.self)
              if seconds != 0 || nanoseconds != 0 {
                kernelTime = Int64(seconds) * 1_000_000_000 + Int64(nanoseconds)
              }
            }
            offset += (length + 7) & ~7
          }
          return count
        }
      }
    }
  }

  private static let tpvPrefix = Array(#"{"class":"TPV""#.utf8)
  private static let timeKey = Array(#""time":""#.utf8)

  /// The time of day in milliseconds of a TPV line's `"time":"YYYY-MM-DDThh:mm:ss.sssZ"`.
  static func timeOfDayMilliseconds(_ line: ArraySlice<UInt8>) -> Int64? {
    var index = line.startIndex
    while index + timeKey.count <= line.endIndex {
      if line[index..<(index + timeKey.count)].elementsEqual(timeKey) { break }
      index += 1
    }
    // Skip `"time":"YYYY-MM-DDT`.
    index += timeKey.count + 11
    guard index + 8 <= line.endIndex else { return nil }
    func number(_ at: Int, _ digits: Int) -> Int64? {
      var value: Int64 = 0
      for offset in 0..<digits {
        let byte = line[at + offset]
        guard byte >= 0x30 && byte <= 0x39 else { return nil }
        value = value * 10 + Int64(byte - 0x30)
      }
      return value
    }
    guard let hours = number(index, 2), let minutes = number(index + 3, 2),
      let seconds = number(index + 6, 2)
    else { return nil }
    var milliseconds: Int64 = 0
    var scale: Int64 = 100
    var fraction = index + 9
    if index + 8 < line.endIndex && line[index + 8] == UInt8(ascii: ".") {
      while fraction < line.endIndex, scale > 0, let digit = number(fraction, 1) {
        milliseconds += digit * scale
        scale /= 10
        fraction += 1
      }
    }
    return ((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds
  }
}

/// waymarkd as a child process: stdout on /dev/null, stderr (its log) collected as lines.
final class DaemonChild: Sendable {
  let processID: pid_t
  private let log = Locked<[String]>([])

  init(_ arguments: [String], environment: [String: String]) throws {
    let (pid, stderr) = try ChildProcess.startWithStderrPipe(arguments, environment: environment)
    processID = pid
    ChildProcess.readLines(from: stderr, threadName: "waymarkd-log") { [log] line in
      log.withLock { $0.append(line) }
    }
  }

  /// The log so far.
  var lines: [String] { log.withLock { $0 } }

  /// Waits until a log line satisfies `predicate`.
  func waitForLine(timeout: Duration, _ predicate: (String) -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if lines.contains(where: predicate) { return }
      try await clock.sleep(for: .milliseconds(20))
    }
    let tail = lines.suffix(5).joined(separator: "\n")
    throw BenchmarkError("waymarkd did not log the expected line; its log ends:\n\(tail)")
  }

  /// SIGTERM, then SIGKILL after 5 s; reaps the child.
  func stop() {
    kill(processID, SIGTERM)
    var status: Int32 = 0
    for _ in 0..<500 {
      if waitpid(processID, &status, WNOHANG) == processID { return }
      usleep(10_000)
    }
    kill(processID, SIGKILL)
    waitpid(processID, &status, 0)
  }
}
