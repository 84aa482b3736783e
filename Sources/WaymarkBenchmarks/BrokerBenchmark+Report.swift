import Foundation

// The broker benchmark's report: latency and CPU per configuration, and the probes.
extension BrokerBenchmark {
  static func report(_ outcomes: [Outcome], rate: Double) {
    guard let baseline = outcomes.first(where: { $0.brokerWatchers == 0 }) else { return }
    func micro(_ values: [Int64], _ p: Double) -> String {
      guard !values.isEmpty else { return "–" }
      let value = values[
        min(values.count - 1, Int(saturating: (Double(values.count - 1) * p).rounded()))]
      return String(format: "%.0f", Double(value) / 1000)
    }
    func difference(_ p: Double, _ outcome: Outcome) -> String {
      guard !outcome.direct.isEmpty, !outcome.broker.isEmpty else { return "–" }
      let b = outcome.broker[Int(saturating: (Double(outcome.broker.count - 1) * p).rounded())]
      let a = outcome.direct[Int(saturating: (Double(outcome.direct.count - 1) * p).rounded())]
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
      let value = values[
        min(values.count - 1, Int(saturating: (Double(values.count - 1) * p).rounded()))]
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

}
