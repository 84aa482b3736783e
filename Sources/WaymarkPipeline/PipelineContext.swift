import Waymark
import WaymarkCore

/// What the sinks of one ``WaymarkPipeline`` share, instead of calling each other or the
/// program that composed them: the time, where each write's outcome goes (the daemon's store
/// health), and what the pipeline's parts know (a place's name, the declared place of a stay,
/// the track and its waiting points).
///
/// The composer makes it, hands it to each sink that needs it, then to the pipeline, which
/// sets its monitor and stay recorder here (and keeps the recorder current when a reload
/// replaces it). Like the sinks, it belongs to the pipeline's output thread.
package final class PipelineContext {
  /// Dates what the sinks write (the outbox's age limit).
  package let time: TimeSource
  /// Where each write's outcome goes (the daemon's store health, itself a sink of the
  /// pipeline, which keeps it alive); `nil`: a failed write is thrown (a replay stops at it).
  package weak var writes: (any WriteOutcomeReporter)?
  /// The place monitor and visit recorder of the pipeline, `nil` without one.
  package internal(set) var tracker: VisitTracker?
  /// The stay recorder of the pipeline, `nil` without one.
  package internal(set) var stayRecorder: StayRecorder?
  /// The track being recorded (``TrackSink`` records into it), `nil` while it is not.
  package var track: TrackRecorder?

  /// A context dated by `time`, recording `track`.
  package init(time: TimeSource = .system, track: TrackRecorder? = nil) {
    self.time = time
    self.track = track
  }

  /// The name of the monitored place `id`, `nil` when it is not monitored.
  package func placeName(of id: String) -> String? {
    tracker?.monitor.name(of: id)
  }

  /// The declared place `stay` names, as it is now; `nil` at no declared place or without a
  /// stay recorder.
  package func place(of stay: Stay) -> Place? {
    stayRecorder?.place(of: stay)
  }

  /// Track points waiting for their batch.
  package var waitingTrackPoints: Int { track?.pendingCount ?? 0 }

  /// Reports the outcome of a write of `what` (`error` is `nil` when it was written).
  ///
  /// - Throws: `error` when there is no ``writes`` to report it to.
  package func noteWrite(_ what: String, _ error: (any Error)?) throws {
    if let writes {
      writes.noteWrite(what, error)
    } else if let error {
      throw error
    }
  }

  /// Reports the held events recorded late (nothing without ``writes``).
  package func noteLate(_ outcomes: [VisitTracker.Outcome]) {
    writes?.noteLate(outcomes)
  }
}
