/// Where the sinks of a ``WaymarkPipeline`` report their writes to the store, through their
/// ``PipelineContext``: the daemon's store health (it logs an episode of failed writes once and
/// its end). A replay has none: its sinks throw a failed write instead, which stops it.
package protocol WriteOutcomeReporter: AnyObject {
  /// Notes the outcome of a write of `what` (such as "the track"); `error` is `nil` when it
  /// was written.
  func noteWrite(_ what: String, _ error: (any Error)?)

  /// Notes the held events that were recorded (or failed for good) now, late.
  func noteLate(_ outcomes: [VisitTracker.Outcome])
}
