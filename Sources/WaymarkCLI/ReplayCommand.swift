import Foundation
import NMEA
import WaymarkCore
import WaymarkMQTT
import WaymarkService

/// `waymark replay`: replays an NMEA log through the pipeline.
enum ReplayCommand: Command {
  static let name = "replay"
  static let summary = "Replay an NMEA log through the pipeline (fixes, place events)."
  static let help = """
    USAGE: waymark replay <log> [--places <geojson>] [--store <db>] [--fixes] [--speed <factor>|max]
                          [--strict] [--date <yyyy-mm-dd>]
                          [--mqtt <host>[:<port>] [--mqtt-topic <t>] [--mqtt-tid <id>]
                          [--mqtt-interval <s>] [--mqtt-wait <s>]]

    Replays an NMEA 0183 log through the same pipeline as a live receiver. Log time drives
    everything: the same log replayed twice gives byte-identical output.

    ARGUMENTS:
      <log>                 The NMEA log to replay ('-' reads standard input).

    OPTIONS:
      --places <geojson>    Monitor these places: print ARRIVAL and DEPARTURE objects (NDJSON)
                            on stdout, each with the reason it fired.
      --store <db>          Record places, visits and events in this SQLite store (created if
                            needed; places come from it when --places is not given). Replaying
                            a log again records nothing twice; a later log resumes open visits.
      --fixes               Print one gpsd-style TPV object per epoch (NDJSON) on stdout.
      --speed <factor>|max  Replay speed: 'max' (default, no waiting) or a factor of real time
                            (1 = as recorded, 10 = ten times faster).
      --strict              Stop at the first bad line (checksum, truncation, junk, overlong,
                            non-ASCII, unreadable field) and exit 65, naming file and line.
      --date <yyyy-mm-dd>   The UTC date of a log without RMC/ZDA dates (a '# Date: yyyy-mm-dd'
                            header line does the same).
      --mqtt <host>[:<port>]
                            Also publish the log's OwnTracks messages to this MQTT broker
                            (locations every --mqtt-interval seconds of log time, default 30,
                            and a transition per place event), through the store's outbox
                            (a temporary one without --store); waits --mqtt-wait seconds (30)
                            for the broker to acknowledge them. For back-filling an OwnTracks
                            recorder.
      --mqtt-topic <t>      Base topic (default owntracks/waymark/<hostname>).
      --mqtt-tid <id>       OwnTracks tracker id (default: the host name's first 2 letters).
      --mqtt-interval <s>   Seconds of log time between location messages (0: every fix).
      -h, --help            Show this help.

    A summary (lines, sentences by type, bad lines by kind, epochs, events) goes to stderr.
    Exit codes: 0 ok, 64 usage, 65 bad line under --strict or bad places file, 66 unreadable
    log or places file, 69 MQTT broker did not take every message (they stay in the outbox),
    74 store error.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(
      arguments,
      options: [
        "--speed", "--date", "--places", "--store", "--mqtt", "--mqtt-topic", "--mqtt-tid",
        "--mqtt-interval", "--mqtt-wait",
      ],
      flags: ["--fixes", "--strict"])
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
      for option in ["--mqtt-topic", "--mqtt-tid", "--mqtt-interval", "--mqtt-wait"]
      where parsed.value(option) != nil {
        throw CommandError.usage("'\(option)' needs '--mqtt'.")
      }
    }
    let options = ReplayOptions(
      path: path, printFixes: parsed.has("--fixes"), strict: parsed.has("--strict"), speed: speed,
      defaultDate: date, placesPath: parsed.value("--places"), storePath: parsed.value("--store"),
      mqtt: mqtt, mqttWaitSeconds: mqttWait)
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
}

/// Streams a log through the decoder and writes the requested output.
final class LogReplayer {
  let options: ReplayOptions
  private let output = OutputSink.standardOutput
  private let clock = ContinuousClock()
  private var previousTime: Date?
  private var pendingFixes: [Fix] = []
  private var places: ReplayPlaceSession?

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
    if options.placesPath != nil || options.storePath != nil || options.mqtt != nil {
      places = try ReplayPlaceSession(
        placesPath: options.placesPath, storePath: options.storePath, source: displayPath,
        mqtt: options.mqtt)
    }
    var decoder = NMEADecoder(path: displayPath, defaultDate: options.defaultDate)
    var chunk = [UInt8](repeating: 0, count: 1 << 20)
    var badLine: NMEADecoder.BadLine?
    let fileSize = (status.st_mode & S_IFMT) == S_IFREG ? Int(status.st_size) : 0
    let progress =
      ReplayProgress.shouldShow(
        fileSize: fileSize, printsToStandardOutput: options.printFixes || places != nil)
      ? ReplayProgress(totalBytes: fileSize, sink: OutputSink.standardError) : nil
    var bytesRead = 0
    while badLine == nil {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw CommandError(
          "error reading '\(displayPath)': \(String(cString: strerror(errno)))", code: .ioError)
      }
      if count == 0 {
        badLine = decoder.finish(stopOnBadLine: options.strict) { pendingFixes.append($0) }
        try await drain()
        break
      }
      bytesRead += count
      defer {
        progress?.update(
          bytes: bytesRead, epochs: decoder.statistics.epochs, events: places?.eventCount)
      }
      if case .max = options.speed, places == nil {
        // Hot path: print each fix as it is finished, without buffering fixes.
        let printFixes = options.printFixes
        let output = output
        badLine = chunk.withUnsafeBytes { raw in
          decoder.decode(
            chunk: UnsafeRawBufferPointer(rebasing: raw[0..<count]), stopOnBadLine: options.strict
          ) { fix in
            guard printFixes else { return }
            output.withBuffer { fix.appendTPV(to: &$0) }
          }
        }
      } else {
        badLine = chunk.withUnsafeBytes { raw in
          decoder.decode(
            chunk: UnsafeRawBufferPointer(rebasing: raw[0..<count]), stopOnBadLine: options.strict
          ) { pendingFixes.append($0) }
        }
        try await drain()
      }
    }
    try places?.finish()
    let published = places?.publish(waitSeconds: options.mqttWaitSeconds) ?? true
    output.flush()
    progress?.finish(
      bytes: bytesRead, epochs: decoder.statistics.epochs, events: places?.eventCount)
    var summary = "waymark replay: \(displayPath)\n" + decoder.statistics.summary
    summary += places?.summary ?? ""
    if let badLine {
      summary +=
        "Error: \(displayPath):\(badLine.line): \(Self.describe(badLine.kind)) (--strict)\n"
    }
    OutputSink.standardError.write(summary)
    if badLine != nil { return .dataError }
    return published ? .ok : .unavailable
  }

  /// Handles the fixes decoded from one chunk: pacing, then output.
  private func drain() async throws {
    for fix in pendingFixes {
      if case .factor = options.speed, let time = fix.time {
        if let previousTime, let delay = options.speed.delay(from: previousTime, to: time) {
          output.flush()
          try await clock.sleep(for: delay)
        }
        previousTime = time
      }
      if options.printFixes { output.withBuffer { fix.appendTPV(to: &$0) } }
      if let places {
        var failure: (any Error)?
        output.withBuffer { buffer in
          do { try places.process(fix, output: &buffer) } catch { failure = error }
        }
        if let failure { throw failure }
      }
    }
    pendingFixes.removeAll(keepingCapacity: true)
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
