import FoundationEssentials
import Glibc
import NMEA
import Waymark
import WaymarkCore
import WaymarkMQTT
import WaymarkStore

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
      .store(
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
      .visitMinDuration,
      .visitMaxGap,
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
        "--device", "<name>",
        """
        The device every log is from (default 'local', waymarkd's own):
        the store keeps each device's visits, events, stays, track, monitor
        state and last fix apart, and a log continues its own device's
        (open visits, open stay, track segment) only. A name is 1 to 64
        ASCII letters, digits, '.', '_' and '-', starting with a letter or
        digit.
        """),
      .value(
        "--device-from", "stem|dir",
        """
        Name each log's device from its path: 'stem' is the file name up to
        its first '.' (trucks/van-3.2026-12-01.nmea: 'van-3'), 'dir' the
        directory it is in (fleet/van-3/monday.nmea: 'van-3'). A name that
        is not a device name is a usage error naming the log.
        """),
      .value(
        "--jobs", "<n>", default: "1",
        """
        Threads that read and decode the logs ahead (default 1); with logs
        of several devices (--device-from), also the devices replayed at
        once, each on its own pipeline into the store's one writer. One
        device's logs go one after another in the order given; each log's
        output is held and printed in that order, so the output and the
        store are the same for any <n>. With --mqtt the logs go one at a
        time. A log that fails is reported (file and line) and the others
        are replayed; the exit code is the first failure's.
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
    USAGE: waymark replay <log>... [--places <geojson>] [--store <db>] [--fixes]
                          [--speed <factor>|max] [--strict] [--date <yyyy-mm-dd>] [--jobs <n>]
                          [--device <name> | --device-from stem|dir]
                          [--visits [--visit-min-duration <s>] [--visit-max-gap <s>]]
                          [--mqtt <host>[:<port>] [--mqtt-topic <t>] [--mqtt-tid <id>]
                          [--mqtt-client-id <id>] [--mqtt-interval <s>] [--mqtt-wait <s>]]

    Replays an NMEA 0183 log through the same pipeline as a live receiver. Log time drives
    everything: the same log replayed twice gives byte-identical output.

    ARGUMENTS:
      <log>...              The NMEA log(s) to replay ('-' reads standard input). Several logs
                            are replayed one after another in the order given, each as if
                            alone: with --store, a log that starts after its device's last fix
                            stored resumes the state that device's logs before it left; other
                            devices' history is never touched (--device, --device-from).

    OPTIONS:
    \(options.listing)
    A summary (lines, sentences by type, bad lines by kind, epochs, events) goes to stderr.
    Exit codes: 0 ok, 64 usage, 65 bad line under --strict or bad places file, 66 unreadable
    log or places file, 69 MQTT broker did not take every message (they stay in the outbox) or
    another client took the client id, 74 store error.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard let path = parsed.positionals.first else { throw CommandError.usage("Missing <log>.") }
    if parsed.positionals.count > 1 && parsed.positionals.contains("-") {
      throw CommandError.usage("'-' (standard input) cannot be one of several logs.")
    }
    var jobs = 1
    if let text = parsed.value("--jobs") {
      guard let value = Int(text), value >= 1, value <= 256 else {
        throw CommandError.usage("'--jobs' expects a whole number from 1 to 256, got '\(text)'.")
      }
      jobs = value
    }
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
      stays = try CommandOption.stayConfiguration(parsed)
    } else {
      for option in ["--visit-min-duration", "--visit-max-gap"] where parsed.value(option) != nil {
        throw CommandError.usage("'\(option)' needs '--visits'.")
      }
    }
    let devices = try ReplayDevices.names(
      of: parsed.positionals,
      rule: ReplayDevices.rule(
        device: parsed.value("--device"), from: parsed.value("--device-from")))
    var options = ReplayOptions(
      path: path, printFixes: parsed.has("--fixes"), strict: parsed.has("--strict"), speed: speed,
      defaultDate: date, placesPath: parsed.value("--places"), storePath: parsed.value("--store"),
      mqtt: mqtt, mqttWaitSeconds: mqttWait, stays: stays)
    options.device = devices[0]
    if parsed.positionals.count == 1 && parsed.value("--jobs") == nil {
      return try await LogReplayer(options: options).run()
    }
    return await ReplayFleet(
      paths: parsed.positionals, devices: devices, jobs: jobs, options: options
    ).run()
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
  /// The device the log is from (``StoreDevice``): whose history in the store it continues.
  var device = StoreDevice.local
  /// The store at `storePath`, already open: a parallel fleet's logs share its one writer.
  /// `nil`: each replay opens it.
  var store: Database?
  /// The clock a paced replay (`--speed <factor>`) waits on.
  var clock: any Clock<Duration> = ContinuousClock()
}
