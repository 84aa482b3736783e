import WaymarkCore

/// A `Clock` that only moves when a test says so.
///
/// Code under test sleeps on it like on any clock; the test waits until the expected number of
/// sleepers is parked (``waitForSleepers(_:)``), then moves time with ``advance(by:)``, which
/// wakes every sleeper whose deadline has come, in deadline order. Nothing sleeps for real.
///
/// ```swift
/// let clock = ManualClock()
/// let task = Task { try await clock.sleep(for: .seconds(5)) }
/// await clock.waitForSleepers(1)
/// clock.advance(by: .seconds(5))   // the task wakes
/// ```
package final class ManualClock: Clock, Sendable {
  /// A point on the manual time line: a duration since the clock was created.
  package struct Instant: InstantProtocol, Sendable, Hashable, Comparable {
    /// Time since the clock's origin.
    package var offset: Duration

    /// Creates an instant `offset` after the origin.
    package init(offset: Duration) { self.offset = offset }

    package func advanced(by duration: Duration) -> Instant {
      Instant(offset: offset + duration)
    }

    package func duration(to other: Instant) -> Duration { other.offset - offset }

    package static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    var deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct Waiter {
    var count: Int
    var continuation: CheckedContinuation<Void, Never>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var nextID = 0
    var sleepers: [Int: Sleeper] = [:]
    var waiters: [Waiter] = []
  }

  private let state = Locked(State())
  private let requestContinuation: AsyncStream<Duration>.Continuation

  /// Each requested sleep, as the duration from the clock's time when it was asked, in order.
  /// Lets a test see a backoff schedule without real time passing.
  package let requests: AsyncStream<Duration>

  /// Creates a clock at instant zero.
  package init() {
    (requests, requestContinuation) = AsyncStream.makeStream(of: Duration.self)
  }

  /// The current manual time.
  package var now: Instant { state.withLock { $0.now } }

  /// The smallest step: one nanosecond.
  package var minimumResolution: Duration { .nanoseconds(1) }

  /// How many tasks are sleeping on the clock now.
  package var sleeperCount: Int { state.withLock { $0.sleepers.count } }

  /// Suspends until `deadline` is reached by ``advance(by:)`` or ``advance(to:)``.
  ///
  /// - Throws: `CancellationError` when the sleeping task is cancelled.
  package func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state -> Int in
      defer { state.nextID += 1 }
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let (resumeNow, waiters, requested) = state.withLock {
          state -> (Bool, [CheckedContinuation<Void, Never>], Duration) in
          let requested = state.now.duration(to: deadline)
          if deadline <= state.now || Task.isCancelled { return (true, [], requested) }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return (false, Self.readyWaiters(&state), requested)
        }
        requestContinuation.yield(requested)
        for waiter in waiters { waiter.resume() }
        if resumeNow {
          if Task.isCancelled {
            continuation.resume(throwing: CancellationError())
          } else {
            continuation.resume()
          }
        }
      }
    } onCancel: {
      let sleeper = state.withLock { $0.sleepers.removeValue(forKey: id) }
      sleeper?.continuation.resume(throwing: CancellationError())
    }
  }

  /// Moves time forward by `duration` and wakes the sleepers whose deadline has come.
  package func advance(by duration: Duration) {
    advance(to: now.advanced(by: duration))
  }

  /// Moves time forward to `instant` (never backwards) and wakes the due sleepers, earliest
  /// deadline first.
  package func advance(to instant: Instant) {
    let due = state.withLock { state -> [Sleeper] in
      if instant > state.now { state.now = instant }
      let now = state.now
      let ids = state.sleepers.filter { $0.value.deadline <= now }.keys
      var due = ids.compactMap { state.sleepers.removeValue(forKey: $0) }
      due.sort { $0.deadline < $1.deadline }
      return due
    }
    for sleeper in due { sleeper.continuation.resume() }
  }

  /// Returns once at least `count` tasks are sleeping on the clock.
  package func waitForSleepers(_ count: Int = 1) async {
    await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
      let ready = state.withLock { state -> Bool in
        if state.sleepers.count >= count { return true }
        state.waiters.append(Waiter(count: count, continuation: continuation))
        return false
      }
      if ready { continuation.resume() }
    }
  }

  private static func readyWaiters(_ state: inout State) -> [CheckedContinuation<Void, Never>] {
    var ready: [CheckedContinuation<Void, Never>] = []
    state.waiters.removeAll { waiter in
      guard state.sleepers.count >= waiter.count else { return false }
      ready.append(waiter.continuation)
      return true
    }
    return ready
  }
}
