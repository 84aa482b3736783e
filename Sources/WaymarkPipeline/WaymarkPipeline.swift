import Waymark
import WaymarkCore

/// The one composition after the ``LocationManager``: each fix goes through the place monitor
/// and visit recorder (``VisitTracker``) and the stay detector (a ``StayRecorder`` with a store),
/// then to every ``PipelineSink`` in order.
///
/// ```
/// FixSource ──▶ FixPipeline ──▶ (waymarkd: PipelineInbox) ──▶ WaymarkPipeline.process(fix)
///  (gpsd or     (LocationManager's  (lossless; the          VisitTracker ─▶ StayRecorder ─▶ sinks
///   a log)       gate: the grant)    reader waits)           (the output thread)
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
    set {
      recorder = newValue
      context.stayRecorder = newValue
    }
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
  /// What the sinks share: the time, the store's health, the monitor's and the stays' names.
  package let context: PipelineContext
  /// Those of ``sinks`` that see each fix before the monitor, in the same order.
  private let preMonitorSinks: [any PreMonitorSink]
  /// Fixes processed so far.
  package var processedCount: Int { processed }
  /// ``processedCount``'s storage, private for the same reason as ``recorder``.
  private var processed = 0

  /// A pipeline through `tracker` and the stays (`stayRecorder` with a store, or
  /// `stayDetector` without one) to `sinks`, which share `context` (the pipeline sets its
  /// tracker and stay recorder there).
  package init(
    tracker: VisitTracker?, stayRecorder: StayRecorder? = nil,
    stayDetector: StayDetector? = nil, context: PipelineContext = PipelineContext(),
    sinks: [any PipelineSink]
  ) {
    context.tracker = tracker
    context.stayRecorder = stayRecorder
    self.context = context
    self.tracker = tracker
    self.recorder = stayRecorder
    self.stayDetector = stayRecorder == nil ? stayDetector : nil
    detectsStays = self.stayDetector != nil
    self.sinks = sinks
    preMonitorSinks = sinks.compactMap { $0 as? any PreMonitorSink }
    // The MQTT outbox's transitions go in their event's own transaction: the tracker writes
    // what the outbox makes of each event.
    if let tracker, let outbox = sinks.lazy.compactMap({ $0 as? OutboxSink }).first {
      tracker.outboxMessages = { [weak outbox] in outbox?.transitionMessages(for: $0) ?? [] }
      tracker.outboxMaximum = outbox.settings.outboxMaximum
    }
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

  /// A part of the pipeline that could not be saved, and why.
  package struct Failure {
    /// What could not be saved, as its write is reported (such as "the open stay").
    package let part: String
    /// Why.
    package let error: any Error

    /// `part` could not be saved because of `error`.
    package init(part: String, error: any Error) {
      self.part = part
      self.error = error
    }
  }

  /// Saves what is in flight without ending anything: the monitor's state and the pending fix
  /// counts (one transaction; the held events recorded now are reported late), the open stay
  /// as it is, then each sink's own buffers (``PipelineSink/checkpoint()``, in list order).
  /// Each write's outcome goes to the context's ``PipelineContext/writes`` as it happens.
  ///
  /// The daemon calls it on its timers and at its stop; ``finish()`` saves the same parts.
  ///
  /// - Returns: the parts that could not be saved, in that order (empty when all were).
  package func checkpoint() -> [Failure] {
    var failures = saveMonitor()
    if let recorder {
      do {
        try recorder.save()
      } catch {
        try? context.noteWrite("the open stay", error)
        failures.append(Failure(part: "the open stay", error: error))
      }
    }
    for sink in sinks { failures += sink.checkpoint() }
    return failures
  }

  /// Saves the monitor's state and the pending fix counts, and reports the held events that
  /// this recorded.
  private func saveMonitor() -> [Failure] {
    guard let tracker else { return [] }
    do {
      try tracker.save()
      context.noteLate(tracker.takeLateOutcomes())
      try? context.noteWrite("the monitor state", nil)
      return []
    } catch {
      context.noteLate(tracker.takeLateOutcomes())
      try? context.noteWrite("the monitor state", error)
      return [Failure(part: "the monitor state", error: error)]
    }
  }

  /// Ends the source: saves the monitor's state, closes the stay the device had left (the
  /// open one is written as it is), then for each sink in order saves what it holds
  /// (``PipelineSink/checkpoint()``) and tells it the end. `waymark replay` calls it at the
  /// end of its log; the daemon never does (its stop is a ``checkpoint()``: a restart resumes
  /// the open visits and the open stay).
  ///
  /// - Throws: ``StoreError`` when the state, the stays or a sink's buffers cannot be written,
  ///   or what a sink threw.
  package func finish() throws {
    if let failure = saveMonitor().first { throw failure.error }
    var closed: [StayDetector.Event] = []
    var open: Stay?
    if let recorder {
      closed = try recorder.finish()
      open = recorder.openStay
    } else if stayDetector != nil {
      closed = stayDetector!.finish()
      open = stayDetector!.openStay
    }
    for sink in sinks {
      if let failure = sink.checkpoint().first { throw failure.error }
      try sink.finish(closed: closed, open: open)
    }
  }
}
