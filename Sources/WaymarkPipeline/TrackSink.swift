import Waymark
import WaymarkCore

/// The track: each fix to the ``TrackRecorder`` (its thinning rule keeps some, written in
/// batches), after the fix's place events are committed and published.
package final class TrackSink: PipelineSink {
  /// The recorder; `nil` while the track is not recorded (`track = off`).
  package var recorder: TrackRecorder?
  /// Told each batch's outcome (`nil` error: written); `nil` to throw instead.
  package var onWrite: ((String, (any Error)?) -> Void)?

  /// A sink recording into `recorder`.
  ///
  /// - Parameter onWrite: told each batch's outcome (`nil` error: written); `nil` to throw
  ///   instead.
  package init(recorder: TrackRecorder?, onWrite: ((String, (any Error)?) -> Void)? = nil) {
    self.recorder = recorder
    self.onWrite = onWrite
  }

  package func receive(_ step: PipelineStep) throws {
    guard let recorder else { return }
    let written = recorder.inserted
    do {
      try recorder.record(step.fix)
      if recorder.inserted > written { onWrite?("the track", nil) }
    } catch {
      guard let onWrite else { throw error }
      onWrite("the track (\(recorder.pendingCount) point(s) wait)", error)
    }
  }

  package func finish(closed: [StayDetector.Event], open: Stay?) throws {
    try recorder?.flush()
  }
}
