import FoundationEssentials
import WaymarkCore

/// The thread that writes every ``Monitor``'s file: `MonitorStore.save` (write, fsync,
/// rename, fsync of the directory) blocks on the disk, so it never runs on a monitor's actor,
/// that is on the concurrency pool. One ``Worker`` for the process (`monitor-writer`), started
/// on the first save and then waiting for jobs (no timer, no polling); saves run in the order
/// they were handed over, so the last one handed over for a monitor is the one on disk. It
/// lives as long as the process and is never finished.
final class MonitorWriter: Sendable {
  /// The process's writer.
  static let shared = MonitorWriter()

  // Overflow `.wait`: no save is ever dropped; a save that finds 64 waiting suspends its task
  // (never blocking a thread of the pool) as it would have for its result.
  private let worker = Worker(threadName: "monitor-writer", capacity: 64, overflow: .wait) { () }

  private init() {}

  /// Saves `saved` in `store` on the writer's thread and returns once it is on disk.
  ///
  /// - Throws: ``MonitorError/unwritable(path:reason:)``.
  func save(_ saved: MonitorState.Saved, in store: MonitorStore) async throws(MonitorError) {
    let failure = await worker.performAndWait { _ -> MonitorError? in
      do throws(MonitorError) {
        try store.save(saved)
        return nil
      } catch {
        return error
      }
    }
    // `nil`: the job did not run, which a worker never finished and never dropping cannot do.
    if let failure, let failure { throw failure }
  }
}
