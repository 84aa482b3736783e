import NMEA
import Waymark
import WaymarkCore
import WaymarkPipeline

/// Streams a log through the decoder and writes the requested output.
///
/// The log's fixes go through the same ``WaymarkPipeline`` as waymarkd's: its place monitor
/// and visit recorder (``VisitTracker``), its stay recorder, and the replay's sinks (the NDJSON
/// printer, the MQTT outbox, the place session, the track), on the replay's output thread,
/// never on the concurrency pool. Every replay enters one way (``ReplayOutputs``): that thread
/// reads the log itself, a chunk at a time (or takes a fleet worker's decoded batches), waits
/// before each fix at a `--speed` factor (on the injected clock), and hands each fix to the
/// replay's ``LocationManager`` (``FixPipeline/replaying(name:)``: a driven source, its own
/// in-memory `always` grant, the authorization gate that waymarkd's gpsd fixes pass), whose
/// output runs the pipeline before the call returns: no hand-off between threads, so a log of
/// any size replays in bounded memory and no fix is dropped.
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
    let gate = FixPipeline.replaying(name: displayPath)
    let pacer =
      options.speed == .max ? nil : ReplayPacer(speed: options.speed, clock: options.clock)
    let outputs = ReplayOutputs(
      pipeline: pipeline, places: places, output: output, progress: progress, reader: reader,
      gate: gate, pacer: pacer, mqttWaitSeconds: options.mqttWaitSeconds)
    try Self.start(gate) { outputs.process($0) }
    defer { gate.stop() }
    if let readAhead = log.readAhead {
      try await outputs.onThread { outputs.take(from: readAhead) }
    } else {
      try await outputs.onThread { outputs.readDirectly() }
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
