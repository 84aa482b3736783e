import Glibc
import Synchronization

/// The one way to run blocking work on a thread of its own: a named thread that owns its state
/// and runs the jobs handed to it, one at a time, in the order they were handed over.
///
/// The state is made on the worker's thread (`makeState`) and only its jobs touch it, so it
/// needs no lock and need not be `Sendable` (a write connection, a libcurl handle). Jobs wait
/// in a ``Channel`` whose capacity and ``ChannelOverflow`` policy the owner chooses (and says
/// why) where it makes the worker. ``finish(_:timeoutMilliseconds:)`` ends the thread by a
/// stated rule: ``Finish/drain`` runs the jobs already handed over, ``Finish/abandon`` drops
/// them; either way it returns once the thread has ended and the state is released (or the
/// timeout passed). A worker released without ``finish(_:timeoutMilliseconds:)`` drains and
/// ends.
///
/// ```swift
/// let counter = Worker(threadName: "counter", capacity: 16, overflow: .wait) { 0 }
/// counter.perform { $0 += 1 }
/// let total = counter.performAndWait { $0 }  // 1
/// counter.finish(.drain)
/// ```
package final class Worker<State>: Sendable {
  /// How ``finish(_:timeoutMilliseconds:)`` treats the jobs still waiting.
  package enum Finish: Sendable {
    /// Run them, then end.
    case drain
    /// Drop them (each one's `ifDropped` is told ``Drop/abandoned``), end after the running one.
    case abandon
  }

  /// Why a job handed over will not run.
  package enum Drop: Sendable {
    /// The queue was full (policy ``ChannelOverflow/dropOldest``) and a newer job took its place.
    case overflowed
    /// ``finish(_:timeoutMilliseconds:)`` abandoned it.
    case abandoned
  }

  private struct Job: Sendable {
    let run: @Sendable (inout State) -> Void
    let drop: @Sendable (Drop) -> Void
  }

  /// The thread's id (`pthread_self()`), shared with the thread's closure.
  private final class ThreadIdentity: Sendable {
    let value = Atomic<UInt>(0)
  }

  private let jobs: Channel<Job>
  private let ended = Locked(false)
  private let identity = ThreadIdentity()
  /// The thread's name, as `top -H` shows it (Linux keeps the first 15 bytes).
  package let threadName: String

  /// Starts the thread `threadName`, which makes its state with `makeState` and then waits for
  /// jobs.
  ///
  /// - Parameters:
  ///   - threadName: the thread's name.
  ///   - capacity: the jobs that may wait (at least 1).
  ///   - overflow: what handing over a job does while `capacity` wait.
  ///   - makeState: run first on the new thread; what it returns is the state the jobs share.
  package init(
    threadName: String, capacity: Int, overflow: ChannelOverflow,
    state makeState: @escaping @Sendable () -> State
  ) {
    self.threadName = threadName
    let jobs = Channel<Job>(capacity: capacity, overflow: overflow)
    self.jobs = jobs
    let ended = ended
    let identity = identity
    DetachedThread.start(name: threadName) {
      identity.value.store(UInt(pthread_self()), ordering: .releasing)
      do {
        // Released at the end of this scope: before `finish` returns.
        var state = makeState()
        while let job = jobs.receive() { job.run(&state) }
      }
      ended.withLock { $0 = true }
      ended.signal()
    }
  }

  deinit { jobs.close() }

  /// Whether the calling thread is this worker's (a job calling back into its owner).
  package var isCurrentThread: Bool {
    identity.value.load(ordering: .acquiring) == UInt(pthread_self())
  }

  /// How many jobs wait.
  package var waitingCount: Int { jobs.count }

  /// How many jobs were dropped because the queue was full.
  package var droppedCount: Int { jobs.dropped }

  /// Changes how many jobs may wait; jobs already waiting over a smaller capacity stay.
  package func setCapacity(_ capacity: Int) { jobs.setCapacity(capacity) }

  /// Hands `job` to the worker's thread and returns; with the policy ``ChannelOverflow/wait``
  /// it blocks the calling thread while the queue is full (never call it so from one of this
  /// worker's jobs, nor from the concurrency pool: use the async variant).
  ///
  /// - Parameters:
  ///   - job: runs on the worker's thread with its state.
  ///   - ifDropped: called when the job was queued but will not run (on the thread that
  ///     dropped it, outside any lock).
  /// - Returns: whether the job was queued: `false` when the queue was full (policy
  ///   ``ChannelOverflow/refuse``) or the worker is finishing (`ifDropped` is not called).
  @discardableResult
  package func perform(
    _ job: @escaping @Sendable (inout State) -> Void,
    ifDropped: @escaping @Sendable (Drop) -> Void = { _ in }
  ) -> Bool {
    hand(jobs.send(Job(run: job, drop: ifDropped)))
  }

  /// Hands `job` to the worker's thread, suspending the calling task (never blocking its
  /// thread) while the queue is full with the policy ``ChannelOverflow/wait``.
  ///
  /// - Returns: whether the job was queued (as ``perform(_:ifDropped:)``).
  @discardableResult
  package func perform(
    _ job: @escaping @Sendable (inout State) -> Void,
    ifDropped: @escaping @Sendable (Drop) -> Void = { _ in }
  ) async -> Bool {
    hand(await jobs.send(Job(run: job, drop: ifDropped)))
  }

  private func hand(_ outcome: Channel<Job>.SendOutcome) -> Bool {
    switch outcome {
    case .sent: return true
    case .sentDroppingOldest(let dropped):
      dropped.drop(.overflowed)
      return true
    case .full, .closed: return false
    }
  }

  /// Runs `body` on the worker's thread and blocks the calling thread until it ran.
  ///
  /// - Returns: what `body` returns; `nil` when it did not run: the worker is finishing, the
  ///   job was dropped or refused, or the caller is the worker's own thread (it would wait for
  ///   itself).
  /// - Throws: what `body` throws.
  package func performAndWait<T>(_ body: (inout State) throws -> T) throws -> T? {
    guard !isCurrentThread else { return nil }
    // nil: not run yet; .some(nil): will not run.
    let outcome = Locked<Result<T, any Error>??>(nil)
    return try withoutActuallyEscaping(body) { body in
      // The caller waits below until the job ran or was dropped: `body` does not outlive this
      // call (`Call` lets go of it before the caller wakes).
      let call = Call(body)
      let queued = perform(
        { state in
          let result = call.run(&state)
          outcome.withLock { $0 = .some(result) }
          outcome.signal()
        },
        ifDropped: { _ in
          call.release()
          outcome.withLock { $0 = .some(nil) }
          outcome.signal()
        })
      guard queued else {
        call.release()
        return nil
      }
      return try outcome.withLock(waitingUntil: { $0 != nil }, { $0! })?.get()
    }
  }

  /// Runs `body` on the worker's thread and suspends the calling task until it ran.
  ///
  /// - Returns: what `body` returns; `nil` when it did not run (the worker is finishing, or the
  ///   job was dropped or refused).
  package func performAndWait<T: Sendable>(
    _ body: @escaping @Sendable (inout State) -> T
  ) async -> T? {
    let reply = Reply<T>()
    let queued = await perform(
      { state in reply.fulfil(body(&state)) }, ifDropped: { _ in reply.fulfil(nil) })
    guard queued else { return nil }
    return await reply.value()
  }

  /// Ends the thread: later jobs are refused; the waiting ones run (``Finish/drain``) or are
  /// dropped (``Finish/abandon``); returns once the thread has ended and released its state,
  /// or when `timeoutMilliseconds` passed. Called again (say ``Finish/abandon`` after a
  /// ``Finish/drain`` that timed out), it applies the new rule to what still waits.
  ///
  /// - Parameter timeoutMilliseconds: the longest wait for the thread (monotonic clock); `nil`
  ///   waits until it ends. A job of this worker calling it does not wait (it would wait for
  ///   itself).
  /// - Returns: whether the thread has ended, and how many waiting jobs were abandoned.
  @discardableResult
  package func finish(
    _ rule: Finish, timeoutMilliseconds: Int? = nil
  ) -> (ended: Bool, abandoned: Int) {
    jobs.close()
    var abandoned = 0
    if rule == .abandon {
      let left = jobs.receiveAll()
      abandoned = left.count
      for job in left { job.drop(.abandoned) }
    }
    guard !isCurrentThread else { return (false, abandoned) }
    let hasEnded = ended.withLock(
      waitingUntil: { $0 }, timeoutMilliseconds: timeoutMilliseconds, { $0 })
    return (hasEnded, abandoned)
  }

  /// Whether the thread has ended.
  package var hasEnded: Bool { ended.withLock { $0 } }
}

/// A caller's closure handed to a worker's thread; it lets go of the closure once run (or
/// dropped), so nothing holds it when the caller wakes (`withoutActuallyEscaping` checks that).
private final class Call<State, T>: @unchecked Sendable {
  // @unchecked: the caller hands it over and waits; one thread at a time touches `body`.
  private let body: Locked<((inout State) throws -> T)?>

  init(_ body: @escaping (inout State) throws -> T) { self.body = Locked(body) }

  func run(_ state: inout State) -> Result<T, any Error> {
    guard let body = body.withLock({ $0.take() }) else { return .failure(CancellationError()) }
    return Result { try body(&state) }
  }

  func release() { body.withLock { $0 = nil } }
}

/// The one answer to a task that waits for a job: fulfilled once, by the job or by its drop.
private final class Reply<T: Sendable>: Sendable {
  private struct Slot {
    var isFulfilled = false
    var value: T?
    var waiter: CheckedContinuation<T?, Never>?
  }

  private let slot = Locked(Slot())

  func fulfil(_ value: T?) {
    let waiter = slot.withLock { slot -> CheckedContinuation<T?, Never>? in
      guard !slot.isFulfilled else { return nil }
      slot.isFulfilled = true
      slot.value = value
      defer { slot.waiter = nil }
      return slot.waiter
    }
    waiter?.resume(returning: value)
  }

  func value() async -> T? {
    await withCheckedContinuation { continuation in
      let ready = slot.withLock { slot -> T?? in
        if slot.isFulfilled { return .some(slot.value) }
        slot.waiter = continuation
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }
}
