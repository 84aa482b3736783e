import WaymarkCore
import WaymarkPipeline

/// The location manager of one log of a fleet replay (`waymark replay <logs…> --jobs N` at
/// full speed with places, a store or MQTT), run by the fleet worker that decodes the log,
/// beside the decoding, instead of on the replay's output thread.
///
/// It is the same inline manager a replay of the log alone runs
/// (``FixPipeline/replayingInline(name:)``, its own `always` grant, its own state), given the
/// same fixes in the same order, so its output (every source fix, in order) is the same; only
/// the thread differs. What it passes on is what the read-ahead hands to the pipeline. The
/// manager depends on nothing but its log (not on the store, nor on the logs before), which is
/// why it can run ahead, in parallel with the other logs, while the pipeline and the store
/// still take the logs one at a time, in order.
final class ReplayManagerStage: @unchecked Sendable {
  // @unchecked: `passed` is written by the manager's output, which runs inside `ingest` on the
  // thread that calls `pass(_:)` (one fleet worker), and read there after each call.
  private let pipeline: FixPipeline
  private var passed: [Fix] = []

  /// Starts the manager of the log `name`.
  ///
  /// - Throws: ``CommandError`` when the manager is not authorized (it would pass nothing on).
  init(name: String) throws {
    let pipeline = FixPipeline.replayingInline(name: name)
    self.pipeline = pipeline
    try LogReplayer.start(pipeline) { [unowned self] fix in self.passed.append(fix) }
  }

  /// Runs `batch` through the manager, in order, and returns the fixes it passed on.
  func pass(_ batch: [Fix]) -> [Fix] {
    passed.reserveCapacity(batch.count)
    for fix in batch { pipeline.ingest(fix) }
    defer { passed = [] }
    return passed
  }

  /// Stops the manager (after the last batch, or when the log is given up).
  func stop() { pipeline.stop() }
}
