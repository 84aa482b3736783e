import WaymarkCore

/// Hands the fixes from the thread or task that reads the source to the pipeline's output
/// thread, losing none: the ``LocationManager`` pushes each fix here (``push(_:)``, which never
/// drops and never blocks), and the output thread takes them all at once (``take()``).
///
/// **Back-pressure, not loss.** A source read through ``admitting(_:)`` is read no faster than
/// the output thread takes: while ``capacity`` fixes wait, the reading task suspends (it does
/// not block a thread of the concurrency pool) until the next ``take()``; a log is then read
/// at the outputs' pace. A source read on a thread of its own waits in ``waitForRoom()``
/// instead (`waymarkd`'s gpsd reader: gpsd buffers meanwhile).
///
/// `wake` is called when the inbox goes from empty to non-empty, outside the lock: one wake-up
/// for a batch, never one per fix.
package final class PipelineInbox: Sendable {
  private struct State {
    var fixes: [Fix] = []
    var waiters: [CheckedContinuation<Bool, Never>] = []
    var closed = false
    var highWater = 0
  }

  private let state = Locked(State())
  private let wake: @Sendable () -> Void
  /// How many fixes may wait before the source is held back.
  package let capacity: Int

  /// An empty inbox; `wake` is told when fixes arrive into an empty inbox.
  package init(capacity: Int = 4096, wake: @escaping @Sendable () -> Void) {
    self.capacity = max(1, capacity)
    self.wake = wake
  }

  /// Appends `fix` (never dropping one) and wakes the output thread if it was idle.
  package func push(_ fix: Fix) {
    let wasEmpty = state.withLock { state -> Bool in
      state.fixes.append(fix)
      state.highWater = max(state.highWater, state.fixes.count)
      return state.fixes.count == 1
    }
    if wasEmpty { wake() }
  }

  /// Every waiting fix, oldest first; lets a held-back source go on.
  package func take() -> [Fix] {
    let (fixes, waiters, wasFull) = state.withLock { state in
      defer {
        state.fixes = []
        state.waiters = []
      }
      return (state.fixes, state.waiters, state.fixes.count >= capacity)
    }
    for waiter in waiters { waiter.resume(returning: true) }
    if wasFull { state.signal() }
    return fixes
  }

  /// Blocks the calling thread while ``capacity`` fixes wait: the back-pressure of a source
  /// read on a thread of its own (gpsd's reader in `waymarkd`), as ``admit()`` is for a task.
  ///
  /// - Returns: `false` once the inbox is closed (the outputs stopped: read no more).
  package func waitForRoom() -> Bool {
    let capacity = self.capacity
    return state.withLock(
      waitingUntil: { $0.closed || $0.fixes.count < capacity }, { !$0.closed })
  }

  /// Waits (suspended) while ``capacity`` fixes wait.
  ///
  /// - Returns: `false` once the inbox is closed (the outputs stopped: read no more).
  package func admit() async -> Bool {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> Bool? in
        if state.closed { return false }
        if state.fixes.count < capacity { return true }
        state.waiters.append(continuation)
        return nil
      }
      if let ready { continuation.resume(returning: ready) }
    }
  }

  /// Closes the inbox: a held-back source is let go and reads no more (``admit()`` is `false`).
  package func close() {
    let waiters = state.withLock { state in
      state.closed = true
      defer { state.waiters = [] }
      return state.waiters
    }
    state.signal()
    for waiter in waiters { waiter.resume(returning: false) }
  }

  /// The most fixes that waited at once (a diagnostic of how far the outputs fell behind).
  package var highWater: Int { state.withLock { $0.highWater } }

  /// `source`, read only while the inbox has room (ends when the inbox is closed).
  package func admitting(_ source: FixSource) -> FixSource {
    FixSource(
      name: source.name, health: { source.health() },
      fixes: {
        let iterator = SourceIterator(source.fixes().makeAsyncIterator())
        return AsyncStream(unfolding: { [self] in
          guard await admit() else { return nil }
          return await iterator.next()
        })
      })
  }
}

/// The iterator of a source's stream, advanced by one unfolding closure at a time.
private final class SourceIterator: @unchecked Sendable {
  // @unchecked: `AsyncStream(unfolding:)` calls its closure once at a time, so `next()` never
  // overlaps itself.
  private var base: AsyncStream<Fix>.Iterator

  init(_ base: AsyncStream<Fix>.Iterator) { self.base = base }

  func next() async -> Fix? { await base.next() }
}
