import Glibc
import WaymarkCore

/// Decoded fixes handed from the thread that reads a log to one consumer, a batch (one chunk
/// of the log) at a time, in order and without loss.
///
/// Bounded: while ``capacity`` batches wait, the reading thread blocks in ``fill(from:through:)``
/// (back-pressure: a log of any size is read in bounded memory, at the consumer's pace). The
/// consumer takes batches with ``next()`` (suspending, for a task) or ``nextBlocking()`` (for a
/// thread of its own); either returns `nil` after the last batch. Blocking reads and decoding
/// thus stay on the reading thread, never on the concurrency pool. The batches go through
/// WaymarkCore's `Channel` (policy `wait`), the one hand-off between threads.
public final class NMEAReadAhead: Sendable {
  /// The batches, policy ``ChannelOverflow/wait``: a decoded batch is never dropped, and the
  /// reading thread waits for room (the back-pressure above). Closed at the end of the log and
  /// by ``cancel()``.
  private let batches: Channel<[Fix]>
  /// The read error that ended the log, set before `batches` is closed.
  private let readFailure = Locked<NMEALogReader.ReadError?>(nil)
  /// How many batches may wait before the reading thread blocks.
  public let capacity: Int

  /// An empty read-ahead holding at most `capacity` batches.
  public init(capacity: Int = 4) {
    self.capacity = max(1, capacity)
    batches = Channel(capacity: self.capacity, overflow: .wait)
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
          // Not sent: cancelled (the channel is closed); read no more.
          guard batches.send(stage?(batch) ?? batch).isSent else { return }
          batch = []
        }
      }
      end(failure: nil)
    } catch {
      if !batch.isEmpty { batches.send(stage?(batch) ?? batch) }
      end(failure: error as? NMEALogReader.ReadError)
    }
  }

  /// Starts a thread named `threadName` that fills this read-ahead from `reader`.
  public func startFilling(from reader: NMEALogReader, threadName: String = "nmea-read") {
    DetachedThread.start(name: threadName) { self.fill(from: reader) }
  }

  private func end(failure: NMEALogReader.ReadError?) {
    readFailure.withLock { $0 = failure }
    batches.close()
  }

  /// The next batch, suspending until there is one; `nil` after the last (or once cancelled).
  /// One consumer at a time.
  public func next() async -> [Fix]? { await batches.receive() }

  /// The next batch, blocking the calling thread until there is one; `nil` after the last (or
  /// once cancelled).
  public func nextBlocking() -> [Fix]? { batches.receive() }

  /// Stops the reading: the reading thread's next hand-over fails and it returns; a waiting
  /// consumer gets `nil`.
  public func cancel() { batches.close() }

  /// The read error that ended the log early, `nil` when it was read to its end (read it after
  /// ``next()`` returned `nil`).
  public var failure: NMEALogReader.ReadError? { readFailure.withLock { $0 } }
}
