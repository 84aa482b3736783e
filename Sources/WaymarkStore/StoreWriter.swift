import CSQLite
import WaymarkCore

/// The one thread that uses a store's write connection (GRDB's model: one serialized writer).
///
/// Every write of a ``Database`` — the pipeline's events, visits, stays and track, the broker's
/// grants, the MQTT publisher's outbox deletions, a command's import — is a job of one
/// ``Worker``, run in order on the thread `waymark-store`, which alone holds the write
/// connection (the worker's state). A caller that needs the result (all of them today) waits
/// until its job ran; it must be a thread of its own, never the cooperative pool. Writers of one
/// process therefore never meet SQLite's busy handler; only another process (the `waymark` CLI)
/// can make the writer wait for the file's lock.
final class StoreWriter: Sendable {
  /// A value handed from the caller to the writer's thread, which takes it once.
  private final class Handoff: @unchecked Sendable {
    // @unchecked: set by `init`, taken once by the worker's thread before any job runs.
    var connection: Connection?
    init(_ connection: Connection) { self.connection = connection }
  }

  // Overflow `.wait`: no write is ever dropped or refused; every caller already waits for its
  // job, so a caller that finds 64 jobs waiting waits for room as it would have for its result.
  private let worker: Worker<Connection?>
  /// The database file, for errors.
  let path: String

  /// Starts the thread `waymark-store`, which owns `connection` until ``stop()``.
  init(connection: Connection) {
    path = connection.path
    let handoff = Handoff(connection)
    worker = Worker(threadName: "waymark-store", capacity: 64, overflow: .wait) {
      defer { handoff.connection = nil }
      return handoff.connection
    }
  }

  /// Whether the calling thread is the writer's: a job calling back into the store.
  var isCurrentThread: Bool { worker.isCurrentThread }

  /// Runs `body` on the writer's thread with the write connection and waits for it.
  ///
  /// - Returns: what `body` returns.
  /// - Throws: what `body` throws; ``StoreError`` (`SQLITE_MISUSE`) when called from a job
  ///   (it would wait for itself) or after ``stop()``.
  func perform<T>(_ body: (Connection) throws -> T) throws -> T {
    if isCurrentThread {
      throw StoreError(
        .sqlite(code: SQLITE_MISUSE),
        message: "nested database access on the same thread (read or write inside write)",
        path: path)
    }
    let outcome = try worker.performAndWait { connection -> T? in
      guard let connection else { return nil }
      return try body(connection)
    }
    guard let outcome, let result = outcome else {
      throw StoreError(
        .sqlite(code: SQLITE_MISUSE), message: "the store's writer has stopped", path: path)
    }
    return result
  }

  /// Runs the jobs already queued, then ends the thread and closes the connection; returns
  /// once the file is closed.
  func stop() {
    worker.finish(.drain)
  }
}
