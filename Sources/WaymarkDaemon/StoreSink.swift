import Waymark
import WaymarkCore
import WaymarkPipeline

/// The daemon's store: whether each fix's writes (place events, stays; the other sinks and
/// the pipeline's checkpoints report here too, as their context's ``PipelineContext/writes``)
/// were committed. It logs the start and the end of an episode of failed writes once each (a
/// full disk), an event held until it can be written, and the held events recorded later.
package final class StoreSink: PipelineSink, WriteOutcomeReporter {
  private let log: DaemonLog
  private let tracker: VisitTracker
  /// The track's waiting points (for the end-of-episode line).
  private let context: PipelineContext
  private var health = StoreWriteHealth()
  /// Held events recorded since the current episode of failed writes began.
  private var lateEvents = 0

  /// A sink reporting the writes of `tracker` (and of the other sinks) to `log`; it becomes
  /// the ``PipelineContext/writes`` of `context`.
  package init(log: DaemonLog, tracker: VisitTracker, context: PipelineContext) {
    self.log = log
    self.tracker = tracker
    self.context = context
    context.writes = self
  }

  package func receive(_ step: PipelineStep) {
    noteLate(step.places)
    for outcome in step.places where !outcome.isLate {
      let what = "the \(outcome.event.className) of '\(outcome.event.placeID)'"
      if let failure = outcome.failure {
        if outcome.isHeld {
          noteWrite(what, failure)
          log.info("store: \(what) is held until it can be written")
        } else {
          log.error("store: cannot record \(what): \(failure)")
        }
      } else if tracker.recorder != nil {
        noteWrite(what, nil)
      }
    }
    // Only a write that happened ends an episode of failed writes: a fix that wrote nothing
    // says nothing about the store.
    if let failure = step.stayFailure {
      noteWrite("the stays", failure)
    } else if step.stayWrote {
      noteWrite("the stays", nil)
    }
  }

  /// Notes a write's outcome (`error` is `nil` for success) and logs the start and the end of
  /// an episode of failed writes, once each.
  package func noteWrite(_ what: String, _ error: (any Error)?) {
    if let error {
      if let message = health.failed(what, error) { log.error(message) }
      return
    }
    // An episode ends when nothing is held any more: a write of something else (the track,
    // the stays) that succeeds before the held events are tried again, at the next fix, does
    // not end it, so that its closing line counts every held event recorded.
    guard tracker.heldCount == 0 else { return }
    let held =
      "\(lateEvents) held event(s) recorded, \(tracker.heldCount) still held, "
      + "\(context.waitingTrackPoints) track point(s) waiting for their batch"
    if let message = health.succeeded(held: held) {
      log.notice(message)
      lateEvents = 0
    }
  }

  /// Counts the held events that were recorded now, and notes their writes. One that failed
  /// for good when tried again (its place was removed meanwhile) is logged and dropped.
  package func noteLate(_ outcomes: [VisitTracker.Outcome]) {
    let late = outcomes.filter(\.isLate)
    guard !late.isEmpty else { return }
    for outcome in late {
      let what = "the held \(outcome.event.className) of '\(outcome.event.placeID)'"
      if let failure = outcome.failure {
        log.error("store: cannot record \(what): \(failure)")
      } else {
        lateEvents += 1
        log.info("store: recorded \(what)")
      }
    }
    noteWrite("held events", nil)
  }
}
