import CSQLite
import Glibc
import Synchronization
import WaymarkCore

/// The one thread that uses a store's write connection (GRDB's model: one serialized writer).
///
/// Every write of a ``Database`` — the pipeline's events, visits, stays and track, the broker's
/// grants, the MQTT publisher's outbox deletions, a command's import — is a job in one
/// first-in, first-out ``BlockingQueue``, run in order on the thread `waymark-store`, which alone
/// holds the write connection. A caller that needs the result (all of them today) waits on a
/// condition until its job ran; it must be a thread of its own, never the cooperative pool.
/// Writers of one process therefore never meet SQLite's busy handler; only another process
/// (the `waymark` CLI) can make the writer wait for the file's lock.
final class StoreWriter: Sendable {
  /// A unit of work run on the writer's thread with the write connection.
  private struct Job: Sendable {
    let run: @Sendable (Connection) -> Void
  }

  /// A value handed from the caller to the writer's thread while the caller waits: only one
  /// thread touches it at a time.
  private final class Handoff<Value>: @unchecked Sendable {
    var value: Value
    init(_ value: Value) { self.value = value }
  }

  /// A caller's closure handed to the writer's thread; it lets go of the closure once run, so
  /// nothing holds it when the caller wakes (`withoutActuallyEscaping` checks that).
  private final class Call<T>: @unchecked Sendable {
    private var body: ((Connection) throws -> T)?
    init(_ body: @escaping (Connection) throws -> T) { self.body = body }

    func run(_ connection: Connection) -> Result<T, any Error> {
      guard let body else { return .failure(CancellationError()) }
      self.body = nil
      return Result { try body(connection) }
    }
  }

  private let jobs = BlockingQueue<Job>(capacity: 64, isEvictable: { _ in false })
  /// A thread's id (`pthread_self()`) that closures can share.
  private final class ThreadID: Sendable {
    let value = Atomic<UInt>(0)
  }

  /// The writer thread's id, 0 until it runs.
  private let threadID = ThreadID()
  /// Whether the thread ended and closed the connection.
  private let finished = Locked(false)
  /// The database file, for errors.
  let path: String

  /// Starts the thread `waymark-store`, which owns `connection` until ``stop()``.
  init(connection: Connection) {
    path = connection.path
    let handoff = Handoff<Connection?>(connection)
    DetachedThread.start(name: "waymark-store") { [jobs, threadID, finished] in
      threadID.value.store(UInt(pthread_self()), ordering: .releasing)
      do {
        // Released at the end of this scope: the file is closed before `stop()` returns.
        let connection = handoff.value!
        handoff.value = nil
        while let job = jobs.next() { job.run(connection) }
      }
      finished.withLock { $0 = true }
      finished.signal()
    }
  }

  /// Whether the calling thread is the writer's: a job calling back into the store.
  var isCurrentThread: Bool {
    threadID.value.load(ordering: .acquiring) == UInt(pthread_self())
  }

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
    let outcome = Locked<Result<T, any Error>?>(nil)
    return try withoutActuallyEscaping(body) { body in
      // The caller waits below until the job ran: `body` does not outlive this call.
      let call = Call(body)
      let job = Job { connection in
        let result = call.run(connection)
        outcome.withLock { $0 = result }
        outcome.signal()
      }
      if case .refused = jobs.push(job) {
        throw StoreError(
          .sqlite(code: SQLITE_MISUSE), message: "the store's writer has stopped", path: path)
      }
      return try outcome.withLock(waitingUntil: { $0 != nil }, { $0! }).get()
    }
  }

  /// Runs the jobs already queued, then ends the thread and closes the connection; returns
  /// once the file is closed.
  func stop() {
    jobs.close()
    finished.withLock(waitingUntil: { $0 }, { _ in })
  }
}
