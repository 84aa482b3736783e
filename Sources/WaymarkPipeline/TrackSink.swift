import Waymark
import WaymarkCore

/// The track: each fix to the context's ``PipelineContext/track`` (its thinning rule keeps
/// some, written in batches), after the fix's place events are committed and published.
package final class TrackSink: PipelineSink {
  private let context: PipelineContext

  /// A sink recording into the track of `context` (nothing while it has none); each batch's
  /// outcome goes to its ``PipelineContext/writes``.
  package init(context: PipelineContext) {
    self.context = context
  }

  /// Records the step's fix.
  ///
  /// - Throws: ``StoreError`` when a batch cannot be written and the context has no
  ///   ``PipelineContext/writes`` to report it to.
  package func receive(_ step: PipelineStep) throws {
    guard let recorder = context.track else { return }
    let written = recorder.inserted
    do {
      try recorder.record(step.fix)
      if recorder.inserted > written { try context.noteWrite("the track", nil) }
    } catch {
      try context.noteWrite("the track (\(recorder.pendingCount) point(s) wait)", error)
    }
  }

  /// Writes the points waiting for their batch.
  package func checkpoint() -> [WaymarkPipeline.Failure] {
    guard let recorder = context.track else { return [] }
    let waiting = recorder.pendingCount
    do {
      try recorder.flush()
      if waiting > 0 { try? context.noteWrite("the track", nil) }
      return []
    } catch {
      let part = "the track (\(recorder.pendingCount) point(s) wait)"
      try? context.noteWrite(part, error)
      return [WaymarkPipeline.Failure(part: part, error: error)]
    }
  }
}
