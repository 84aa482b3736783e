import FoundationEssentials
import Glibc
import NMEA
import Waymark
import WaymarkCore
import WaymarkMQTT
import WaymarkService

/// `waymark replay`: replays an NMEA log through the pipeline.
enum ReplayCommand: Command {
  static let name = "replay"
  static let summary = "Replay an NMEA log through the pipeline (fixes, place events)."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 24,
    [
      .value(
        "--places", "<geojson>",
        """
        Monitor these places: print ARRIVAL and DEPARTURE objects (NDJSON)
        on stdout, each with the reason it fired.
        """),
      .value(
        "--store", "<db>",
        """
        Record places, visits, events and the track in this SQLite store
        (created if needed; places come from it when --places is not
        given). Replaying a log again records nothing twice; a later log
        resumes open visits.
        """),
      .flag("--fixes", "Print one gpsd-style TPV object per epoch (NDJSON) on stdout."),
      .flag(
        "--visits",
        """
        Find stays from the fixes alone (no place needed) and print each as
        a VISIT object (NDJSON, the shape of 'waymark visits') when it ends,
        and the open one at the end of the log: "place" names the declared
        place the stay lies in (--places or the store's), null at none;
        lat/lon are the stay's centre. With --store, also records them
        ('waymark visits' lists them; replaying again adds nothing).
        """),
      .value(
        "--visit-min-duration", "<s>",
        "Seconds a stay must last (default 120: a red light is no visit)."),
      .value(
        "--speed", "<factor>|max",
        """
        Replay speed: 'max' (default, no waiting) or a factor of real time
        (1 = as recorded, 10 = ten times faster).
        """),
      .flag(
        "--strict",
        """
        Stop at the first bad line (checksum, truncation, junk, overlong,
        non-ASCII, unreadable field) and exit 65, naming file and line.
        """),
      .value(
        "--date", "<yyyy-mm-dd>",
        """
        The UTC date of a log without RMC/ZDA dates (a '# Date: yyyy-mm-dd'
        header line does the same).
        """),
      .value(
        "--mqtt", "<host>[:<port>]",
        """
        Also publish the log's OwnTracks messages to this MQTT broker
        (locations every --mqtt-interval seconds of log time, default 30,
        and a transition per place event), through the store's outbox
        (a temporary one without --store); waits --mqtt-wait seconds (30)
        for the broker to acknowledge them. For back-filling an OwnTracks
        recorder.
        TLS on port 8883 (verified against the system's CAs).
        """),
      .value(
        "--mqtt-topic", "<t>",
        """
        Base topic (default owntracks/waymark/<device>: this machine's, see
        'waymark status'). Back-filling another device's log: its topic.
        """),
      .value("--mqtt-tid", "<id>", "OwnTracks tracker id (default: this machine's)."),
      .value(
        "--mqtt-client-id", "<id>",
        """
        MQTT client id (default: one unique to this run, so that runs at
        once never take each other's session).
        """),
      .value(
        "--mqtt-interval", "<s>", "Seconds of log time between location messages (0: every fix)."),
      .value(
        "--mqtt-wait", "<s>", "Seconds to wait for the broker to acknowledge the messages (30)."),
    ])

  static let help = """
    USAGE: waymark replay <log> [--places <geojson>] [--store <db>] [--fixes] [--speed <factor>|max]
                          [--strict] [--date <yyyy-mm-dd>] [--visits [--visit-min-duration <s>]]
                          [--mqtt <host>[:<port>] [--mqtt-topic <t>] [--mqtt-tid <id>]
                          [--mqtt-client-id <id>] [--mqtt-interval <s>] [--mqtt-wait <s>]]

    Replays an NMEA 0183 log through the same pipeline as a live receiver. Log time drives
    everything: the same log replayed twice gives byte-identical output.

    ARGUMENTS:
      <log>                 The NMEA log to replay ('-' reads standard input).

    OPTIONS:
    \(options.listing)
    A summary (lines, sentences by type, bad lines by kind, epochs, events) goes to stderr.
    Exit codes: 0 ok, 64 usage, 65 bad line under --strict or bad places file, 66 unreadable
    log or places file, 69 MQTT broker did not take every message (they stay in the outbox) or
    another client took the client id, 74 store error.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    let path = try parsed.requirePositionals(["<log>"])[0]
    var speed = ReplaySpeed.max
    if let text = parsed.value("--speed") {
      guard let value = ReplaySpeed(text) else {
        throw CommandError.usage("'--speed' expects 'max' or a positive number, got '\(text)'.")
      }
      speed = value
    }
    var date: UTCDate?
    if let text = parsed.value("--date") {
      guard let value = UTCDate(iso: text) else {
        throw CommandError.usage("'--date' expects yyyy-mm-dd, got '\(text)'.")
      }
      date = value
    }
    var mqtt: MQTTSettings?
    var mqttWait = 30.0
    if let text = parsed.value("--mqtt") {
      guard var settings = MQTTSettings(parsing: text) else {
        throw CommandError.usage("'--mqtt' expects <host>[:<port>], got '\(text)'.")
      }
      if let topic = parsed.value("--mqtt-topic") { settings.topic = topic }
      if let tid = parsed.value("--mqtt-tid") { settings.tid = tid }
      if let id = parsed.value("--mqtt-client-id") {
        guard !id.isEmpty else { throw CommandError.usage("'--mqtt-client-id' is empty.") }
        settings.clientID = id
      } else {
        // Unique to the run: back-fills at once (or beside this machine's daemon) never take
        // each other's session.
        let run = String(UInt64.random(in: 0...UInt64.max), radix: 16)
        settings.clientID = "waymark-replay-\(getpid())-\(run)"
      }
      if let text = parsed.value("--mqtt-interval") {
        guard let seconds = Double(text), seconds >= 0 else {
          throw CommandError.usage("'--mqtt-interval' expects seconds >= 0, got '\(text)'.")
        }
        settings.intervalSeconds = seconds
      }
      mqtt = settings
      if let text = parsed.value("--mqtt-wait") {
        guard let seconds = Double(text), seconds > 0, seconds <= 86_400 else {
          throw CommandError.usage("'--mqtt-wait' expects seconds in (0, 86400], got '\(text)'.")
        }
        mqttWait = seconds
      }
    } else {
      for option in [
        "--mqtt-topic", "--mqtt-tid", "--mqtt-client-id", "--mqtt-interval", "--mqtt-wait",
      ]
      where parsed.value(option) != nil {
        throw CommandError.usage("'\(option)' needs '--mqtt'.")
      }
    }
    var stays: StayDetector.Configuration?
    if parsed.has("--visits") {
      var configuration = StayDetector.Configuration()
      if let text = parsed.value("--visit-min-duration") {
        guard let seconds = Double(text), seconds >= 0, seconds <= 86_400 else {
          throw CommandError.usage(
            "'--visit-min-duration' expects seconds in [0, 86400], got '\(text)'.")
        }
        configuration.minimumDurationSeconds = seconds
      }
      stays = configuration
    } else if parsed.value("--visit-min-duration") != nil {
      throw CommandError.usage("'--visit-min-duration' needs '--visits'.")
    }
    let options = ReplayOptions(
      path: path, printFixes: parsed.has("--fixes"), strict: parsed.has("--strict"), speed: speed,
      defaultDate: date, placesPath: parsed.value("--places"), storePath: parsed.value("--store"),
      mqtt: mqtt, mqttWaitSeconds: mqttWait, stays: stays)
    return try await LogReplayer(options: options).run()
  }
}

/// What `waymark replay` was asked to do.
struct ReplayOptions {
  var path: String
  var printFixes: Bool
  var strict: Bool
  var speed: ReplaySpeed
  var defaultDate: UTCDate?
  var placesPath: String?
  var storePath: String?
  var mqtt: MQTTSettings?
  var mqttWaitSeconds = 30.0
  /// `--visits`: the stay detector's settings; `nil` without it.
  var stays: StayDetector.Configuration?
}

/// Streams a log through the decoder and writes the requested output.
///
/// The log's fixes go through the same ``WaymarkPipeline`` as waymarkd's: its place monitor
/// and visit recorder (``VisitTracker``), its stay recorder, and the replay's sinks (the NDJSON
/// printer, the MQTT outbox, the place session, the track). With places, a store or MQTT (or
/// a paced replay) the log is a ``FixSource`` read through a ``LocationManager`` (the same
/// ``FixPipeline`` as waymarkd's gpsd), which hands each fix to the pipeline's output thread
/// through a ``PipelineInbox``: the next chunk of the log is decoded only when the inbox has
/// room, so a log of any size replays in bounded memory and no fix is dropped. `--fixes` or
/// `--visits` alone at full speed reads the log on the output thread and gives each fix to
/// the pipeline directly (nothing there to authorize or filter). Either way the outputs run on
/// a thread of their own, never on the concurrency pool.
final class LogReplayer {
  let options: ReplayOptions
  private let output = OutputSink.standardOutput

  init(options: ReplayOptions) {
    self.options = options
  }

  func run() async throws -> ExitCode {
    let descriptor: Int32 = options.path == "-" ? 0 : open(options.path, O_RDONLY)
    guard descriptor >= 0 else {
      throw CommandError(
        "cannot read '\(options.path)': \(String(cString: strerror(errno)))", code: .noInput)
    }
    defer { if descriptor > 0 { close(descriptor) } }
    var status = stat()
    if fstat(descriptor, &status) == 0, (status.st_mode & S_IFMT) == S_IFDIR {
      throw CommandError("cannot read '\(options.path)': Is a directory", code: .noInput)
    }
    let displayPath = options.path == "-" ? "<stdin>" : options.path
    var places: ReplayPlaceSession?
    if options.placesPath != nil || options.storePath != nil || options.mqtt != nil {
      places = try ReplayPlaceSession(
        placesPath: options.placesPath, storePath: options.storePath, source: displayPath,
        mqtt: options.mqtt)
    }
    var stayRecorder: StayRecorder?
    if let configuration = options.stays, let database = places?.store {
      do {
        stayRecorder = try StayRecorder(
          database: database, places: .list(places?.places ?? []), configuration: configuration,
          source: displayPath, resumes: false, saveIntervalSeconds: .infinity)
      } catch {
        throw StorePath.commandError(error)
      }
    }
    let printer = NDJSONPrinterSink(
      output: output, printsFixes: options.printFixes, printsEvents: places != nil,
      stayPlaces: options.stays == nil ? nil : places?.places ?? [], source: displayPath)
    let pipeline = WaymarkPipeline(
      tracker: places?.tracker, stayRecorder: stayRecorder,
      stayDetector: options.stays.map { StayDetector(configuration: $0) },
      sinks: [printer] + (places?.sinks ?? []))
    let fileSize = (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
    let progress =
      ReplayProgress.shouldShow(
        fileSize: fileSize,
        printsToStandardOutput: options.printFixes || places != nil || options.stays != nil)
      ? ReplayProgress(totalBytes: fileSize, sink: OutputSink.standardError) : nil
    let reader = LogReader(
      descriptor: descriptor, path: displayPath, defaultDate: options.defaultDate,
      strict: options.strict)
    let outputs = ReplayOutputs(
      pipeline: pipeline, places: places, output: output, progress: progress, reader: reader,
      paced: options.speed != .max, mqttWaitSeconds: options.mqttWaitSeconds)
    if case .max = options.speed, places == nil {
      try await outputs.onThread { outputs.readDirectly() }
    } else {
      try await Self.replay(reader, speed: options.speed, through: outputs)
    }
    output.flush()
    progress?.finish(bytes: reader.bytesRead, epochs: reader.epochs, events: places?.eventCount)
    var summary = "waymark replay: \(displayPath)\n" + reader.statistics.summary
    summary += places?.summary ?? ""
    if options.stays != nil {
      summary += "visits: \(printer.stayCount)"
      if let stayRecorder { summary += "; store: \(stayRecorder.inserted) new stay(s)" }
      summary += "\n"
    }
    if let badLine = reader.badLine {
      summary +=
        "Error: \(displayPath):\(badLine.line): \(Self.describe(badLine.kind)) (--strict)\n"
    }
    OutputSink.standardError.write(summary)
    if reader.badLine != nil { return .dataError }
    return outputs.published ? .ok : .unavailable
  }

  /// Runs the log through the pipeline and returns when its last fix has been handled.
  private static func replay(
    _ reader: LogReader, speed: ReplaySpeed, through outputs: ReplayOutputs
  ) async throws {
    // The output thread's wake-ups: `true` when fixes arrived, `false` at the end of the log.
    let wakes = BlockingQueue<Bool>(capacity: 16)
    let inbox = PipelineInbox { wakes.push(true) }
    let feed = LogFeed(reader: reader, speed: speed, inbox: inbox)
    let source = FixPipeline.replaying(
      FixSource(name: reader.path) { AsyncStream(unfolding: { await feed.next() }) })
    guard source.manager.authorizationStatus.isAuthorized else {
      throw CommandError("the replay's location manager is not authorized", code: .software)
    }
    feed.whenEnded { wakes.push(false) }
    source.start { inbox.push($0) }
    let thrown: (any Error)?
    do {
      try await outputs.onThread { outputs.take(from: inbox, wakes: wakes) }
      thrown = nil
    } catch {
      thrown = error
    }
    source.stop()
    if let failure = feed.failure ?? thrown { throw failure }
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

/// Reads a log chunk by chunk through the NMEA decoder.
final class LogReader: @unchecked Sendable {
  // @unchecked: used by one thread or task at a time (the output thread, or the reading task).
  let path: String
  private let descriptor: Int32
  private let strict: Bool
  private var decoder: NMEADecoder
  private var chunk = [UInt8](repeating: 0, count: 1 << 20)
  private(set) var bytesRead = 0
  private(set) var badLine: NMEADecoder.BadLine?
  private var ended = false

  init(descriptor: Int32, path: String, defaultDate: UTCDate?, strict: Bool) {
    self.descriptor = descriptor
    self.path = path
    self.strict = strict
    decoder = NMEADecoder(path: path, defaultDate: defaultDate)
  }

  var statistics: NMEAStatistics { decoder.statistics }
  var epochs: Int { decoder.statistics.epochs }

  /// Decodes the next chunk, handing each finished fix to `body`.
  ///
  /// - Returns: `false` at the end of the log or after a bad line under `--strict` (the last
  ///   fixes, if any, were handed over).
  /// - Throws: ``CommandError`` when the log cannot be read.
  func readChunk(_ body: (Fix) -> Void) throws -> Bool {
    guard !ended else { return false }
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw CommandError(
          "error reading '\(path)': \(String(cString: strerror(errno)))", code: .ioError)
      }
      if count == 0 {
        badLine = decoder.finish(stopOnBadLine: strict, emit: body)
        ended = true
        return false
      }
      bytesRead += count
      badLine = chunk.withUnsafeBytes { raw in
        decoder.decode(
          chunk: UnsafeRawBufferPointer(rebasing: raw[0..<count]), stopOnBadLine: strict, emit: body
        )
      }
      ended = badLine != nil
      return !ended
    }
  }
}

/// The replay's source side: hands the pipeline one fix at a time, decoding the next chunk when
/// the last one is used up, no faster than the output thread takes them (the inbox admits),
/// and waits between fixes at a paced `--speed`.
private final class LogFeed: @unchecked Sendable {
  // @unchecked: `next()` is called by the pipeline's reading task alone, one call at a time;
  // `ended` is locked, and `failure` is read after the source has ended.
  private let reader: LogReader
  private let speed: ReplaySpeed
  private let inbox: PipelineInbox
  private let clock = ContinuousClock()
  private var pending: [Fix] = []
  private var index = 0
  private var previousTime: Date?
  private let ended = Locked<(done: Bool, action: (@Sendable () -> Void)?)>((false, nil))
  private(set) var failure: (any Error)?

  init(reader: LogReader, speed: ReplaySpeed, inbox: PipelineInbox) {
    self.reader = reader
    self.speed = speed
    self.inbox = inbox
  }

  /// Calls `action` once the log is used up (at once if it already is).
  func whenEnded(_ action: @escaping @Sendable () -> Void) {
    let done = ended.withLock { state -> Bool in
      if !state.done { state.action = action }
      return state.done
    }
    if done { action() }
  }

  /// The next fix, or `nil` at the end (or once the outputs stopped): by then every earlier fix
  /// is in the inbox.
  func next() async -> Fix? {
    guard await inbox.admit() else { return end() }
    while index == pending.count {
      pending.removeAll(keepingCapacity: true)
      index = 0
      do {
        let more = try reader.readChunk { pending.append($0) }
        if pending.isEmpty && !more { return end() }
      } catch {
        failure = error
        return end()
      }
    }
    let fix = pending[index]
    index += 1
    if case .factor = speed, let time = fix.time {
      if let previousTime, let delay = speed.delay(from: previousTime, to: time) {
        try? await clock.sleep(for: delay)
      }
      previousTime = time
    }
    return fix
  }

  private func end() -> Fix? {
    let action = ended.withLock { state in
      defer { (state.done, state.action) = (true, nil) }
      return state.done ? nil : state.action
    }
    action?()
    return nil
  }
}
