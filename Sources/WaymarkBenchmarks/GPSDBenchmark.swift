import Foundation
@_spi(Benchmarks) import GPSD
import NMEA
import WaymarkCore
import WaymarkProcess
import WaymarkSimulation
import WaymarkTesting

/// `waymark-bench gpsd [--seconds <n>] [--rate <hz>]`: latency and CPU of the gpsd source.
///
/// A synthetic drive is written into a pseudo-terminal read by a private gpsd, at `rate` epochs
/// per second, twice:
/// 1. reference run: nobody subscribes; measures the process's CPU for writing alone;
/// 2. Waymark run: a `GPSDSource` subscriber; measures, per fix, gpsd's own latency (epoch
///    written → `gps_read` returned, the named reference) and ours (`gps_read` returned →
///    subscriber holds the fix), and the CPU of both processes.
enum GPSDBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--seconds", default: "20", "Seconds of drive per run"),
    .rate,
  ])

  /// Runs the benchmark with its parsed command line.
  static func run(_ options: BenchmarkArguments) async throws {
    try await measure(seconds: options.double("--seconds"), rate: options.double("--rate"))
  }

  struct Sample {
    var gpsd: Duration
    var waymark: Duration
  }

  static func measure(seconds: Double, rate: Double) async throws {
    let epochs = Int(saturating: seconds * rate)
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T12:00:00.000Z")!,
      origin: Coordinate(latitude: 48.137_154, longitude: 11.576_124), seed: 3)
    route.rateHz = rate
    route.drive(
      to: route.origin.offset(by: seconds * 28, bearingDegrees: 30), speedMetersPerSecond: 14)
    let all = route.fixes().map { NMEAWriter.sentences(for: $0) }
    let referenceLines = Array(all.prefix(epochs))
    let lines = Array(all.dropFirst(epochs).prefix(epochs))

    let rig = try await BenchmarkGPSD()
    defer { rig.stop() }
    let (receiver, gpsd) = (rig.receiver, rig.gpsd)
    let clock = ContinuousClock()
    let interval = Duration.seconds(1 / rate)

    // 1. Reference: writing alone.
    let referenceCPU = processCPU()
    let referenceStart = clock.now
    _ = try await play(referenceLines, interval: interval, receiver: receiver, clock: clock)
    let referenceWall = clock.now - referenceStart
    let referenceUsed = processCPU() - referenceCPU

    // 2. Waymark subscriber.
    let source = GPSDSource(
      configuration: GPSDConfiguration(
        endpoint: GPSDEndpoint(host: "127.0.0.1", port: gpsd.port), bufferCapacity: 4096))
    let received = Locked<
      [(time: Int64, readAt: ContinuousClock.Instant, heldAt: ContinuousClock.Instant)]
    >([])
    let subscriber = Task {
      for await (fix, readAt) in source.timedFixes() {
        let heldAt = ContinuousClock.now
        guard let time = fix.time else { continue }
        let timeOfDay = Timestamp.milliseconds(time) % 86_400_000
        received.withLock { $0.append((timeOfDay, readAt, heldAt)) }
      }
    }
    try await gpsd.waitForWatchers(1)
    try await Task.sleep(for: .milliseconds(200))
    let gpsdCPUStart = gpsdCPU(gpsd)
    let cpuStart = processCPU()
    let start = clock.now
    let written = try await play(lines, interval: interval, receiver: receiver, clock: clock)
    try await Task.sleep(for: .milliseconds(300))
    let wall = clock.now - start
    let used = processCPU() - cpuStart
    let gpsdUsed = gpsdCPU(gpsd) - gpsdCPUStart
    subscriber.cancel()
    let stopStart = clock.now
    while source.isRunning { try await Task.sleep(for: .milliseconds(1)) }
    let stopTime = clock.now - stopStart

    var samples: [Sample] = []
    var seen: Set<Int64> = []
    for entry in received.withLock({ $0 }) {
      guard let writtenAt = written[entry.time], !seen.contains(entry.time) else { continue }
      seen.insert(entry.time)  // the first report of each epoch
      samples.append(Sample(gpsd: entry.readAt - writtenAt, waymark: entry.heldAt - entry.readAt))
    }
    let gpsdLatency = samples.map(\.gpsd).sorted()
    let ours = samples.map(\.waymark).sorted()
    let allOurs = received.withLock { $0.map { $0.heldAt - $0.readAt } }.sorted()
    func percentile(_ values: [Duration], _ p: Double) -> Duration {
      guard !values.isEmpty else { return .zero }
      return values[min(values.count - 1, Int(saturating: Double(values.count - 1) * p))]
    }
    func micro(_ duration: Duration) -> String {
      String(format: "%.1f µs", duration.seconds * 1e6)
    }
    let overhead = used - referenceUsed
    print("gpsd benchmark: \(epochs) epochs at \(rate) Hz, gpsd \(source.serverVersion ?? "?")")
    print("  epochs matched: \(samples.count); reports received: \(allOurs.count)")
    print(
      "  reference  gpsd (pty write -> gps_read returned): p50 \(micro(percentile(gpsdLatency, 0.5))), p99 \(micro(percentile(gpsdLatency, 0.99)))"
    )
    print(
      "  waymark    (gps_read returned -> subscriber holds fix): p50 \(micro(percentile(ours, 0.5))), p99 \(micro(percentile(ours, 0.99))); all reports p50 \(micro(percentile(allOurs, 0.5))), p99 \(micro(percentile(allOurs, 0.99)))"
    )
    print(
      String(
        format: "  latency ratio waymark/gpsd: p50 %.3f, p99 %.3f",
        percentile(ours, 0.5).seconds / max(1e-9, percentile(gpsdLatency, 0.5).seconds),
        percentile(ours, 0.99).seconds / max(1e-9, percentile(gpsdLatency, 0.99).seconds)))
    print(
      String(
        format:
          "  CPU: reference run (writer only) %.1f ms in %.1f s; with subscriber %.1f ms in %.1f s",
        referenceUsed.seconds * 1000, referenceWall.seconds, used.seconds * 1000, wall.seconds))
    print(
      String(
        format:
          "  CPU of the Waymark session: %.1f ms/s (%.2f %% of a core); gpsd itself %.1f ms/s; ratio waymark/gpsd %.2f",
        overhead.seconds * 1000 / wall.seconds, overhead.seconds * 100 / wall.seconds,
        gpsdUsed.seconds * 1000 / wall.seconds, overhead.seconds / max(1e-9, gpsdUsed.seconds)))
    print("  reader thread stopped \(micro(stopTime)) after the subscriber was cancelled")
  }

  /// Writes each epoch at its slot and returns when each epoch (by time, ms) was written.
  static func play(
    _ epochs: [[String]], interval: Duration, receiver: FakeReceiver, clock: ContinuousClock
  ) async throws -> [Int64: ContinuousClock.Instant] {
    var written: [Int64: ContinuousClock.Instant] = [:]
    let start = clock.now
    for (index, epoch) in epochs.enumerated() {
      try await clock.sleep(until: start + interval * index)
      let time = FakeReceiver.timeOfDaySeconds(of: epoch).map {
        Int64(saturating: ($0 * 1000).rounded())
      }
      let bytes = Array(epoch.joined().utf8)
      let at = ContinuousClock.now
      try await receiver.terminal.write(bytes)
      if let time { written[time] = at }
    }
    return written
  }

  /// User + system CPU time of this process.
  static func processCPU() -> Duration {
    var usage = rusage()
    getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
    return .seconds(Int64(usage.ru_utime.tv_sec + usage.ru_stime.tv_sec))
      + .microseconds(Int64(usage.ru_utime.tv_usec + usage.ru_stime.tv_usec))
  }

  /// User + system CPU time of the gpsd process, from /proc.
  static func gpsdCPU(_ gpsd: GPSDHarness) -> Duration {
    guard let pid = gpsd.processID else { return .zero }
    return .seconds(DaemonBenchmark.cpuSeconds(pid))
  }
}
