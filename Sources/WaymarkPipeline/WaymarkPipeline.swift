import Waymark
import WaymarkCore

/// The one composition after the ``LocationManager``: each fix goes through the place monitor
/// and visit recorder (``VisitTracker``) and the stay detector (a ``StayRecorder`` with a store),
/// then to every ``PipelineSink`` in order.
///
/// ```
/// FixSource ──▶ LocationManager ──▶ PipelineInbox ──▶ WaymarkPipeline.process(fix)
///  (gpsd or     (its run task:      (lossless; the       VisitTracker ─▶ StayRecorder ─▶ sinks
///   a log)       authorization)      source waits)       (the output thread)
/// ```
///
/// `waymarkd` and `waymark replay` differ only in their source and their sinks. ``process(_:)``
/// loses nothing: every fix it is given reaches the monitor and every sink, in order. It blocks
/// on the disk (fsync'd writes) and is not thread-safe: one caller, on a thread of its own
/// (the daemon's main loop, the replay's output thread), never on the concurrency pool.
package final class WaymarkPipeline {
  /// The place monitor and visit recorder, `nil` when no place is monitored (a replay of fixes
  /// or stays alone).
  package let tracker: VisitTracker?
  /// The stay recorder (stays found and written to the store), or `nil`; replaced when a
  /// reload changes the stay settings.
  package var stayRecorder: StayRecorder? {
    get { recorder }
    set { recorder = newValue }
  }
  /// ``stayRecorder``'s storage. Private, and never accessed across a call, so whole-module
  /// optimization drops its run-time exclusivity checks (a public stored `var` of a class has
  /// one on every read: one per fix in ``process(_:)``).
  private var recorder: StayRecorder?
  /// The stay detector without a store (a replay's `--visits` alone), or `nil`.
  private var stayDetector: StayDetector?
  /// Whether there is a `stayDetector` (it is set once, at the start).
  private let detectsStays: Bool
  /// The outputs, called in this order.
  package let sinks: [any PipelineSink]
  /// Those of ``sinks`` that see each fix before the monitor, in the same order.
  private let preMonitorSinks: [any PreMonitorSink]
  /// Fixes processed so far.
  package var processedCount: Int { processed }
  /// ``processedCount``'s storage, private for the same reason as ``recorder``.
  private var processed = 0

  /// A pipeline through `tracker` and the stays (`stayRecorder` with a store, or
  /// `stayDetector` without one) to `sinks`.
  package init(
    tracker: VisitTracker?, stayRecorder: StayRecorder? = nil,
    stayDetector: StayDetector? = nil, sinks: [any PipelineSink]
  ) {
    self.tracker = tracker
    self.recorder = stayRecorder
    self.stayDetector = stayRecorder == nil ? stayDetector : nil
    detectsStays = self.stayDetector != nil
    self.sinks = sinks
    preMonitorSinks = sinks.compactMap { $0 as? any PreMonitorSink }
  }

  /// Runs one fix through the monitor, the stays and every sink.
  ///
  /// The fix is taken over (`consuming`): it moves into the step the sinks receive, so a
  /// caller that hands its own fix over (a decoder's) makes no copy of it.
  ///
  /// - Throws: the first error a sink threw (the later sinks did not see the fix).
  package func process(_ fix: consuming Fix) throws {
    // Each fix passes here: the fix moves into the step (no copy), the step is never returned
    // (a copy), and the stay detector is looked at only when there is one (reading a class's
    // optional struct `var` is a run-time exclusivity check and a copy of the struct).
    let sinks = self.sinks
    processed &+= 1
    var step = PipelineStep(fix: fix)
    for sink in preMonitorSinks { try sink.willMonitor(step.fix) }
    if let tracker { step.places = tracker.process(step.fix) }
    if let recorder {
      let written = recorder.writeCount
      do { step.stays = try recorder.process(step.fix) } catch { step.stayFailure = error }
      step.stayWrote = recorder.writeCount > written
    } else if detectsStays, let location = Location(step.fix) {
      step.stays = stayDetector!.process(location)
    }
    for sink in sinks { try sink.receive(step) }
  }

  /// Ends the source: saves the monitor's state, closes the stay the device had left (the
  /// open one is written as it is) and tells every sink.
  ///
  /// - Throws: ``StoreError`` when the state or the stays cannot be written, or what a sink
  ///   threw.
  package func finish() throws {
    try tracker?.save()
    var closed: [StayDetector.Event] = []
    var open: Stay?
    if let recorder {
      closed = try recorder.finish()
      open = recorder.openStay
    } else if stayDetector != nil {
      closed = stayDetector!.finish()
      open = stayDetector!.openStay
    }
    for sink in sinks { try sink.finish(closed: closed, open: open) }
  }
}
