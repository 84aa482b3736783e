import Waymark
import WaymarkCore

/// What one fix did in the ``WaymarkPipeline``, as every ``PipelineSink`` receives it.
package struct PipelineStep {
  /// The fix, as the source gave it (usable or not).
  package let fix: Fix
  /// The place events the fix caused, each committed to the store or reported failed; with
  /// ``VisitTracker/holdsFailedEvents``, held events written now come first, marked late.
  package var places: [VisitTracker.Outcome] = []
  /// The stays the fix began or ended (named after the declared place they lie in, when the
  /// stays are recorded).
  package var stays: [StayDetector.Event] = []
  /// Why the stays of this fix could not be written, or `nil`.
  package var stayFailure: (any Error)?
  /// Whether the stay recorder wrote a transaction for this fix.
  package var stayWrote = false

  /// The step of `fix`, before the monitor and the stay detector saw it.
  package init(fix: Fix) {
    self.fix = fix
  }
}
