import Waymark
import WaymarkCore

/// What one fix did in the ``WaymarkPipeline``, as every ``PipelineSink`` receives it.
public struct PipelineStep {
  /// The fix, as the source gave it (usable or not).
  public let fix: Fix
  /// The place events the fix caused, each committed to the store or reported failed; with
  /// ``VisitTracker/holdsFailedEvents``, held events written now come first, marked late.
  public var places: [VisitTracker.Outcome] = []
  /// The stays the fix began or ended (named after the declared place they lie in, when the
  /// stays are recorded).
  public var stays: [StayDetector.Event] = []
  /// Why the stays of this fix could not be written, or `nil`.
  public var stayFailure: (any Error)?
  /// Whether the stay recorder wrote a transaction for this fix.
  public var stayWrote = false

  /// The step of `fix`, before the monitor and the stay detector saw it.
  public init(fix: Fix) {
    self.fix = fix
  }
}
