import WaymarkTesting

/// A clock that moves only when the test advances it, and reports every sleep it is asked for.
final class ManualClock: Clock, Sendable {
  struct Instant: InstantProtocol {
    var offset: Duration
    func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
    func duration(to other: Instant) -> Duration { other.offset - offset }
    static func < (lhs: Instant, rhs: Instant) -> Bool { lhs.offset < rhs.offset }
  }

  private struct Sleeper {
    var deadline: Instant
    var continuation: CheckedContinuation<Void, any Error>
  }

  private struct State {
    var now = Instant(offset: .zero)
    var sleepers: [Int: Sleeper] = [:]
    var nextID = 0
  }

  private let state = LockedValue(State())
  /// Each requested sleep duration, in order.
  let requests: AsyncStream<Duration>
  private let requestContinuation: AsyncStream<Duration>.Continuation

  init() {
    (requests, requestContinuation) = AsyncStream.makeStream(of: Duration.self)
  }

  var now: Instant { state.withLock { $0.now } }
  var minimumResolution: Duration { .zero }

  /// Sleepers waiting right now.
  var pendingSleepers: Int { state.withLock { $0.sleepers.count } }

  func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
    let id = state.withLock { state in
      state.nextID += 1
      return state.nextID
    }
    try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation {
        (continuation: CheckedContinuation<Void, any Error>) in
        let (resumeNow, requested) = state.withLock { state -> (Bool, Duration) in
          let requested = state.now.duration(to: deadline)
          if deadline <= state.now || Task.isCancelled { return (true, requested) }
          state.sleepers[id] = Sleeper(deadline: deadline, continuation: continuation)
          return (false, requested)
        }
        requestContinuation.yield(requested)
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

  /// Moves time forward and wakes the sleepers that are due.
  func advance(by duration: Duration) {
    let due = state.withLock { state -> [Sleeper] in
      state.now = state.now.advanced(by: duration)
      let now = state.now
      let due = state.sleepers.filter { $0.value.deadline <= now }
      for key in due.keys { state.sleepers[key] = nil }
      return Array(due.values)
    }
    for sleeper in due { sleeper.continuation.resume() }
  }
}
