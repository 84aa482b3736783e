import NMEA
import Waymark
import WaymarkCore
import WaymarkPipeline

/// Streams a log through the decoder and writes the requested output.
///
/// The log's fixes go through the same ``WaymarkPipeline`` as waymarkd's: its place monitor
/// and visit recorder (``VisitTracker``), its stay recorder, and the replay's sinks (the NDJSON
/// printer, the MQTT outbox, the place session, the track), on the replay's output thread,
/// never on the concurrency pool. Paced, the log is an ``NMEAReplay`` source, read and decoded
/// on a thread of its own (an ``NMEAReadAhead``), paced on the injected clock and read through
/// a ``LocationManager`` (the same ``FixPipeline`` as waymarkd's gpsd), which hands each fix to
/// the output thread through a ``PipelineInbox``: the log is read only as fast as the inbox
/// has room, so a log of any size replays in bounded memory and no fix is dropped. At full
/// speed the output thread reads the log itself (or takes a fleet worker's decoded batches)
/// and, with places, a store or MQTT, gives each fix to the manager inline
/// (``FixPipeline/replayingInline(name:)``: the same manager decisions, no hand-off between
/// threads); `--fixes` or `--visits` alone give each fix to the pipeline directly (nothing
/// there to authorize or filter).
final class LogReplayer {
  let options: ReplayOptions
  private let log: ReplayLog?
  private let output: OutputSink
  private let errors: OutputSink

  /// A replay of `options.path`, or of `log` when it is already open (a fleet's), printing to
  /// `spool` (a parallel fleet's log: no progress line) or to the process's standard output and
  /// error.
  init(options: ReplayOptions, log: ReplayLog? = nil, spool: ReplaySpool? = nil) {
    self.options = options
    self.log = log
    output = spool?.output ?? OutputSink.standardOutput
    errors = spool?.errors ?? OutputSink.standardError
  }

  func run() async throws -> ExitCode {
    let log =
      try self.log
      ?? ReplayLog(
        path: options.path, defaultDate: options.defaultDate, strict: options.strict)
    let displayPath = log.displayPath
    let reader = log.reader
    let composition = try ReplayComposition(
      options: options, source: displayPath, output: output)
    let places = composition.places
    let pipeline = composition.pipeline
    let progress =
      errors === OutputSink.standardError
        && ReplayProgress.shouldShow(
          fileSize: log.fileSize,
          printsToStandardOutput: options.printFixes || places != nil || options.stays != nil)
      ? ReplayProgress(totalBytes: log.fileSize, sink: OutputSink.standardError) : nil
    // At full speed with places, a store or MQTT, the manager runs inline on the output thread
    // (a fleet's worker has run it already when the log has a manager stage).
    let inline =
      options.runsManagerInline && log.managerStage == nil
      ? FixPipeline.replayingInline(name: displayPath) : nil
    let outputs = ReplayOutputs(
      pipeline: pipeline, places: places, output: output, progress: progress, reader: reader,
      paced: options.speed != .max, mqttWaitSeconds: options.mqttWaitSeconds, inline: inline)
    if case .max = options.speed {
      if let inline { try Self.start(inline) { outputs.process($0) } }
      defer { inline?.stop() }
      if let readAhead = log.readAhead {
        try await outputs.onThread { outputs.take(from: readAhead) }
      } else {
        try await outputs.onThread { outputs.readDirectly() }
      }
    } else {
      let readAhead: NMEAReadAhead
      if let filled = log.readAhead {
        readAhead = filled
      } else {
        readAhead = NMEAReadAhead()
        readAhead.startFilling(from: reader, threadName: "replay-reader")
      }
      try await replay(readAhead, name: displayPath, through: outputs)
    }
    output.flush()
    let read = reader.progress
    progress?.finish(bytes: read.bytes, epochs: read.epochs, events: places?.eventCount)
    var summary = "waymark replay: \(displayPath)\n" + reader.statistics.summary
    summary += composition.summary
    if let badLine = reader.badLine {
      summary +=
        "Error: \(displayPath):\(badLine.line): \(Self.describe(badLine.kind)) (--strict)\n"
    }
    errors.write(summary)
    if reader.badLine != nil { return .dataError }
    return outputs.published ? .ok : .unavailable
  }

  /// Runs the decoded log through the manager and the pipeline, paced on the options' clock,
  /// and returns when its last fix has been handled.
  private func replay(
    _ readAhead: NMEAReadAhead, name: String, through outputs: ReplayOutputs
  ) async throws {
    // The output thread's wake-ups: `true` when fixes arrived, `false` at the end of the log.
    // `true`: fixes wait in the inbox; `false`: the log ended. Overflow `.wait`: the end must
    // never be dropped, and a wake-up is sent only when the inbox was empty, so 16 never wait.
    let wakes = Channel<Bool>(capacity: 16, overflow: .wait)
    // Overflow `.wait`: no fix is dropped; the log is read no faster than this thread takes.
    let inbox = PipelineInbox(
      capacity: PipelineInbox.inboxCapacity, overflow: .wait, whenNonEmpty: { wakes.send(true) })
    let source = FixPipeline.replaying(
      inbox.admitting(
        NMEAReplay.source(
          readAhead, name: name, speed: options.speed, clock: options.clock,
          whenEnded: { wakes.send(false) })))
    do {
      try Self.start(source) { inbox.sendIgnoringCapacity($0) }
    } catch {
      readAhead.cancel()
      throw error
    }
    let thrown: (any Error)?
    do {
      try await outputs.onThread { outputs.take(from: inbox, wakes: wakes) }
      thrown = nil
    } catch {
      thrown = error
    }
    source.stop()
    readAhead.cancel()
    if let failure = readAhead.failure { throw ReplayLog.commandError(failure) }
    if let thrown { throw thrown }
  }

  /// Starts `pipeline` with `output`. Its in-memory `always` grant authorizes it; a manager
  /// that is not authorized would deliver nothing, so that is an error, not an empty replay.
  static func start(
    _ pipeline: FixPipeline, output: @escaping @Sendable (Fix) -> Void
  ) throws {
    guard pipeline.manager.authorizationStatus.isAuthorized else {
      throw CommandError("the replay's location manager is not authorized", code: .software)
    }
    pipeline.start(output)
  }

  static func describe(_ kind: BadLineKind) -> String {
    switch kind {
    case .checksumMismatch: "checksum does not match"
    case .missingChecksum: "sentence has no '*hh' checksum"
    case .truncated: "sentence is truncated"
    case .junk: "not an NMEA sentence"
    case .overlong: "sentence longer than \(NMEAFraming.maximumSentenceLength) bytes"
    case .nonASCII: "non-ASCII or control bytes in the sentence"
    case .malformedField: "a field could not be read"
    }
  }
}
