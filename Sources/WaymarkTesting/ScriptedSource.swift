import Foundation
import WaymarkCore

/// A fix source driven by a test: the test sends fixes and health reports, and every run of the
/// source (every call to `FixSource.fixes()`) receives the values sent while it is live.
///
/// ```swift
/// let scripted = ScriptedSource()
/// let manager = LocationManager(source: scripted.source, ...)
/// manager.startUpdatingLocation()
/// await scripted.waitForRuns(1)
/// scripted.send(ScriptedSource.fix(at: home, time: t0))
/// ```
package final class ScriptedSource: Sendable {
  private struct State {
    var nextID = 0
    var fixRuns: [Int: AsyncStream<Fix>.Continuation] = [:]
    var healthRuns: [Int: AsyncStream<SourceHealth>.Continuation] = [:]
    var runsStarted = 0
    var runWaiters: [(Int, CheckedContinuation<Void, Never>)] = []
    var latestHealth: SourceHealth?
  }

  private let state = Locked(State())
  /// Serializes the sends, so that every run sees the same order; never taken by a run's end
  /// (`onTermination` runs under the ending task's status lock, which a `yield` may need: no
  /// lock a run's end takes is held across a `yield`).
  private let delivery = Locked(())
  /// The name given to the source.
  package let name: String

  /// Creates a scripted source.
  package init(name: String = "scripted") { self.name = name }

  /// The source value to hand to the code under test.
  package var source: FixSource {
    FixSource(
      name: name,
      health: { [self] in makeHealth() },
      fixes: { [self] in makeFixes() }
    )
  }

  /// Runs started since creation.
  package var runsStarted: Int { state.withLock { $0.runsStarted } }

  /// Sends `fix` to every live run.
  package func send(_ fix: Fix) {
    delivery.withLock { _ in
      let runs = state.withLock { Array($0.fixRuns.values) }
      for continuation in runs { continuation.yield(fix) }
    }
  }

  /// Sends several fixes in order.
  package func send(_ fixes: [Fix]) {
    for fix in fixes { send(fix) }
  }

  /// Sends a health report to every live health stream; later health streams start with it.
  package func send(health: SourceHealth) {
    delivery.withLock { _ in
      let runs = state.withLock { state in
        state.latestHealth = health
        return Array(state.healthRuns.values)
      }
      for continuation in runs { continuation.yield(health) }
    }
  }

  /// Ends every live run (as a replay reaching the end of its log).
  package func finish() {
    let (fixes, health) = state.withLock { state in
      defer {
        state.fixRuns.removeAll()
        state.healthRuns.removeAll()
      }
      return (Array(state.fixRuns.values), Array(state.healthRuns.values))
    }
    for continuation in fixes { continuation.finish() }
    for continuation in health { continuation.finish() }
  }

  /// Returns once at least `count` runs have started in total.
  package func waitForRuns(_ count: Int = 1) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state -> Bool in
        if state.runsStarted >= count { return true }
        state.runWaiters.append((count, continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private func makeFixes() -> AsyncStream<Fix> {
    let (stream, continuation) = AsyncStream.makeStream(of: Fix.self)
    let ready = state.withLock { state -> [CheckedContinuation<Void, Never>] in
      let id = state.nextID
      state.nextID += 1
      state.runsStarted += 1
      state.fixRuns[id] = continuation
      continuation.onTermination = { [weak self] _ in
        _ = self?.state.withLock { $0.fixRuns.removeValue(forKey: id) }
      }
      let started = state.runsStarted
      var ready: [CheckedContinuation<Void, Never>] = []
      state.runWaiters.removeAll { waiter in
        guard started >= waiter.0 else { return false }
        ready.append(waiter.1)
        return true
      }
      return ready
    }
    for waiter in ready { waiter.resume() }
    return stream
  }

  private func makeHealth() -> AsyncStream<SourceHealth> {
    let (stream, continuation) = AsyncStream.makeStream(of: SourceHealth.self)
    delivery.withLock { _ in
      let latest = state.withLock { state in
        let id = state.nextID
        state.nextID += 1
        state.healthRuns[id] = continuation
        continuation.onTermination = { [weak self] _ in
          _ = self?.state.withLock { $0.healthRuns.removeValue(forKey: id) }
        }
        return state.latestHealth
      }
      if let latest { continuation.yield(latest) }
    }
    return stream
  }
}

extension ScriptedSource {
  /// A 3D GPS fix at `coordinate` and `time` with `accuracy` metres of horizontal error.
  package static func fix(
    at coordinate: Coordinate, time: Date, accuracy: Double? = 5, name: String = "scripted"
  ) -> Fix {
    Fix(
      time: time, mode: .threeDimensional, status: .gps, coordinate: coordinate,
      altitudeMSL: 50, geoidSeparation: 47, horizontalError: accuracy, verticalError: accuracy,
      provenance: .simulated(name))
  }

  /// `count` fixes along a straight line: one per `interval` seconds, `stepMeters` apart,
  /// heading `bearingDegrees`, starting at `start` and `time`.
  package static func walk(
    from start: Coordinate, time: Date, count: Int, stepMeters: Double,
    bearingDegrees: Double = 90, interval: TimeInterval = 1, accuracy: Double? = 5
  ) -> [Fix] {
    (0..<count).map { index in
      fix(
        at: start.offset(by: stepMeters * Double(index), bearingDegrees: bearingDegrees),
        time: time.addingTimeInterval(interval * Double(index)), accuracy: accuracy)
    }
  }

  /// A source that yields `fixes` to each run, then ends the run.
  package static func finite(_ fixes: [Fix], name: String = "finite") -> FixSource {
    FixSource(name: name) {
      AsyncStream { continuation in
        for fix in fixes { continuation.yield(fix) }
        continuation.finish()
      }
    }
  }
}
