import FoundationEssentials
import WaymarkCore

/// The thread that writes every ``Monitor``'s file: `MonitorStore.save` (write, fsync,
/// rename, fsync of the directory) blocks on the disk, so it never runs on a monitor's actor,
/// that is on the concurrency pool. One thread for the process, started on the first save and
/// then waiting on its queue (no timer, no polling); saves run in the order they were handed
/// over, so the last one handed over for a monitor is the one on disk.
final class MonitorWriter: Sendable {
  private struct Job: Sendable {
    let store: MonitorStore
    let saved: MonitorState.Saved
    let done: CheckedContinuation<MonitorError?, Never>
  }

  /// The process's writer.
  static let shared = MonitorWriter()

  // No job is ever dropped: a save that waits is a caller that waits.
  private let jobs = BlockingQueue<Job>(capacity: 64, isEvictable: { _ in false })

  private init() {
    let jobs = jobs
    DetachedThread.start(name: "monitor-writer") {
      while let job = jobs.next() {
        do throws(MonitorError) {
          try job.store.save(job.saved)
          job.done.resume(returning: nil)
        } catch {
          job.done.resume(returning: error)
        }
      }
    }
  }

  /// Saves `saved` in `store` on the writer's thread and returns once it is on disk.
  ///
  /// - Throws: ``MonitorError/unwritable(path:reason:)``.
  func save(_ saved: MonitorState.Saved, in store: MonitorStore) async throws(MonitorError) {
    let failure = await withCheckedContinuation { continuation in
      jobs.push(Job(store: store, saved: saved, done: continuation))
    }
    if let failure { throw failure }
  }
}
