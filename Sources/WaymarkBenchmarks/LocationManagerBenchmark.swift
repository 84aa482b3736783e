import Foundation
import Waymark
import WaymarkCore
import WaymarkProcess
import WaymarkTesting

/// `waymark-bench manager [--fixes N] [--rounds R]`: fixes per second through a
/// `LocationManager` to 1, 10 and 100 subscribers, against a bare `AsyncStream` fan-out of the
/// same fixes (the reference) in the same run.
///
/// Every subscriber buffers all fixes, so nothing is dropped and each must receive every
/// location; a run is timed from the first fix sent to the last subscriber's last location.
/// The best of `R` rounds is reported.
enum LocationManagerBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--fixes", default: "20000", "Fixes per round"),
    .rounds,
  ])

  static func run(_ options: BenchmarkArguments) async {
    let fixCount = max(1, options.int("--fixes"))
    let rounds = max(1, options.int("--rounds"))
    let fixes = ScriptedSource.walk(
      from: Coordinate(latitude: 48.8566, longitude: 2.3522),
      time: Date(timeIntervalSince1970: 1_796_000_000), count: fixCount, stepMeters: 1,
      interval: 0.1)
    print("location-manager: \(fixCount) fixes, best of \(rounds) rounds, release build")
    print(
      "subscribers | reference fixes/s | manager fixes/s | manager deliveries/s"
        + " | manager/reference")
    for subscribers in [1, 10, 100] {
      var reference = Duration.seconds(1_000_000)
      var manager = Duration.seconds(1_000_000)
      for _ in 0..<rounds {
        reference = min(reference, await bareFanOut(fixes, subscribers: subscribers))
        manager = min(manager, await throughManager(fixes, subscribers: subscribers))
      }
      let referenceRate = Double(fixCount) / reference.seconds
      let managerRate = Double(fixCount) / manager.seconds
      print(
        "\(pad(subscribers, 11)) | \(pad(Int(referenceRate), 17)) | \(pad(Int(managerRate), 15))"
          + " | \(pad(Int(managerRate) * subscribers, 20))"
          + " | \(String(format: "%.2f", managerRate / referenceRate))")
    }
  }

  /// The reference: one producer yielding each fix into one `AsyncStream` per subscriber.
  static func bareFanOut(_ fixes: [Fix], subscribers: Int) async -> Duration {
    let streams = (0..<subscribers).map { _ in AsyncStream.makeStream(of: Fix.self) }
    let clock = ContinuousClock()
    let start = clock.now
    return await withTaskGroup(of: Int.self) { group in
      for (stream, _) in streams {
        group.addTask {
          var count = 0
          for await _ in stream { count += 1 }
          return count
        }
      }
      group.addTask {
        for fix in fixes {
          for (_, continuation) in streams { continuation.yield(fix) }
        }
        for (_, continuation) in streams { continuation.finish() }
        return -1
      }
      var received = 0
      for await count in group where count >= 0 { received += count }
      precondition(received == fixes.count * subscribers, "reference lost values")
      return start.duration(to: clock.now)
    }
  }

  /// The manager: a source yielding the fixes, `subscribers` iterations of `locations`.
  static func throughManager(_ fixes: [Fix], subscribers: Int) async -> Duration {
    let source = FixSource(name: "benchmark") {
      AsyncStream { continuation in
        for fix in fixes { continuation.yield(fix) }
      }
    }
    let center = AuthorizationCenter(
      store: InMemoryGrantStore([
        Grant(clientID: "bench", level: .whenInUse, grantedAt: Date(timeIntervalSince1970: 0))
      ]),
      services: .enabled)
    let manager = LocationManager(clientID: "bench", source: source, authorization: center)
    let total = fixes.count
    let updates = manager.locations(bufferingNewest: total)
    let clock = ContinuousClock()
    var start = clock.now
    let received = await withTaskGroup(of: Int.self) { group in
      for _ in 0..<subscribers {
        group.addTask {
          var count = 0
          for await _ in updates {
            count += 1
            if count == total { break }
          }
          return count
        }
      }
      // Every subscription must be live before the first fix.
      while manager.locationSubscriberCount < subscribers { await Task.yield() }
      start = clock.now
      manager.startUpdatingLocation()
      var received = 0
      for await count in group { received += count }
      return received
    }
    let elapsed = start.duration(to: clock.now)
    manager.stopUpdatingLocation()
    precondition(received == total * subscribers, "manager lost values")
    return elapsed
  }

  private static func pad(_ value: Int, _ width: Int) -> String {
    let text = String(value)
    return String(repeating: " ", count: max(0, width - text.count)) + text
  }
}
