import Glibc
import WaymarkCore

/// Decoded fixes handed from the thread that reads a log to one consumer, a batch (one chunk
/// of the log) at a time, in order and without loss.
///
/// Bounded: while ``capacity`` batches wait, the reading thread blocks in ``fill(from:through:)``
/// (back-pressure: a log of any size is read in bounded memory, at the consumer's pace). The
/// consumer takes batches with ``next()`` (suspending, for a task) or ``nextBlocking()`` (for a
/// thread of its own); either returns `nil` after the last batch. Blocking reads and decoding
/// thus stay on the reading thread, never on the concurrency pool.
public final class NMEAReadAhead: Sendable {
  private struct State {
    /// At most `capacity` batches: removing the first is cheap.
    var batches: [[Fix]] = []
    var ended = false
    var cancelled = false
    var failure: NMEALogReader.ReadError?
    var waiter: CheckedContinuation<[Fix]?, Never>?

    var waiting: Int { batches.count }

    mutating func removeFirst() -> [Fix]? {
      batches.isEmpty ? nil : batches.removeFirst()
    }
  }

  private let state = Locked(State())
  /// How many batches may wait before the reading thread blocks.
  public let capacity: Int

  /// An empty read-ahead holding at most `capacity` batches.
  public init(capacity: Int = 4) {
    self.capacity = max(1, capacity)
  }

  /// Reads the whole log through `reader` into this read-ahead, blocking while it is full,
  /// then ends it. Call it on the thread that should do the reading (a thread of its own, or
  /// a worker); it returns at the end of the log, at a read error (``failure``) or once the
  /// consumer cancelled.
  ///
  /// - Parameters:
  ///   - reader: the log's reader (read by this thread alone until this returns).
  ///   - stage: called on this thread with each decoded batch (one chunk of the log), in order;
  ///     what it returns is handed over instead (`nil`: the batch as decoded). A fleet replay
  ///     runs each log's location manager here, beside the decoding.
  public func fill(from reader: NMEALogReader, through stage: (([Fix]) -> [Fix])? = nil) {
    var batch: [Fix] = []
    do {
      var more = true
      while more {
        more = try reader.readChunk { batch.append($0) }
        if !batch.isEmpty {
          guard put(stage?(batch) ?? batch) else { return }
          batch = []
        }
      }
      end(failure: nil)
    } catch {
      if !batch.isEmpty { _ = put(stage?(batch) ?? batch) }
      end(failure: error as? NMEALogReader.ReadError)
    }
  }

  /// Starts a thread named `threadName` that fills this read-ahead from `reader`.
  public func startFilling(from reader: NMEALogReader, threadName: String = "nmea-read") {
    DetachedThread.start(name: threadName) { self.fill(from: reader) }
  }

  /// Appends a batch (blocking while ``capacity`` wait). Returns `false` once cancelled.
  private func put(_ batch: [Fix]) -> Bool {
    let outcome = state.withLock(
      waitingUntil: { $0.cancelled || $0.waiter != nil || $0.waiting < capacity },
      { state -> (accepted: Bool, waiter: CheckedContinuation<[Fix]?, Never>?) in
        if state.cancelled { return (false, nil) }
        if let waiter = state.waiter {
          state.waiter = nil
          return (true, waiter)
        }
        state.batches.append(batch)
        return (true, nil)
      })
    state.signal()
    outcome.waiter?.resume(returning: batch)
    return outcome.accepted
  }

  private func end(failure: NMEALogReader.ReadError?) {
    let waiter = state.withLock { state in
      state.ended = true
      state.failure = failure
      defer { state.waiter = nil }
      return state.waiter
    }
    state.signal()
    waiter?.resume(returning: nil)
  }

  /// The next batch, suspending until there is one; `nil` after the last (or once cancelled).
  /// One consumer at a time.
  public func next() async -> [Fix]? {
    await withCheckedContinuation { continuation in
      let ready = state.withLock { state -> [Fix]?? in
        if let batch = state.removeFirst() { return .some(batch) }
        if state.ended || state.cancelled { return .some(nil) }
        state.waiter = continuation
        return nil
      }
      state.signal()
      if let ready { continuation.resume(returning: ready) }
    }
  }

  /// The next batch, blocking the calling thread until there is one; `nil` after the last (or
  /// once cancelled).
  public func nextBlocking() -> [Fix]? {
    let batch = state.withLock(
      waitingUntil: { $0.waiting > 0 || $0.ended || $0.cancelled }, { $0.removeFirst() })
    state.signal()
    return batch
  }

  /// Stops the reading: the reading thread's next hand-over fails and it returns; a waiting
  /// consumer gets `nil`.
  public func cancel() {
    let waiter = state.withLock { state in
      state.cancelled = true
      defer { state.waiter = nil }
      return state.waiter
    }
    state.signal()
    waiter?.resume(returning: nil)
  }

  /// The read error that ended the log early, `nil` when it was read to its end (read it after
  /// ``next()`` returned `nil`).
  public var failure: NMEALogReader.ReadError? { state.withLock { $0.failure } }
}
