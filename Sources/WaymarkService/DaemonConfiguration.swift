import FoundationEssentials
import GPSD
import Glibc
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkMQTT

/// The settings of `waymarkd`, read from `/etc/waymark/waymark.conf`.
///
/// The file is a list of `key = value` lines. Blank lines and lines starting with `#` or `;`
/// are ignored; there are no sections and no inline comments (a hook command may contain `#`).
/// Spaces around the key and the value are trimmed; a value may be wrapped in double quotes to
/// keep leading or trailing spaces. Each key may appear once. Every key is optional:
///
/// | Key | Default | Meaning |
/// |---|---|---|
/// | `gpsd` | `localhost:2947` | gpsd endpoint, `host[:port[:device]]` |
/// | `client` | `waymarkd` | client id that needs an `always` grant |
/// | `store` | `$STATE_DIRECTORY/waymark.db`, else `/var/lib/waymark/waymark.db` | database |
/// | `socket` | `$RUNTIME_DIRECTORY/waymark.sock` under systemd, else none | the location socket; `none` disables it |
/// | `nmea-socket` | none | NMEA 0183 per fix for GeoClue and other NMEA readers (same grants) |
/// | `nmea-tcp` | none | `127.x.x.x:<port>`: the NMEA stream on loopback TCP (same grants) |
/// | `mqtt` | none | `host[:port]` of an MQTT broker: OwnTracks messages through the outbox |
/// | `mqtt-topic`, `mqtt-tid`, `mqtt-qos`, `mqtt-interval`, `mqtt-username`, `mqtt-password-file`, `mqtt-tls`, `mqtt-cafile`, `mqtt-remote-commands`, `mqtt-client-id`, `mqtt-outbox-max` | see docs/guide/fleets.md | the MQTT link |
/// | `socket-clients` | 1024 | connections the socket serves at once |
/// | `socket-clients-per-user` | 64 | connections one uid may hold (root's are not counted) |
/// | `agents` | `*:<dir>/waymark`, `<dir>` being waymarkd's | programs that may answer requests (`<user>:<exe>`, `*` for any user; comma-separated; `none`) |
/// | `socket-buffer` | 65536 | bytes a client may leave unread before it is disconnected |
/// | `agent-timeout` | 30 | seconds a REQUEST waits for an agent before it is answered `denied` |
/// | `polkit` | `yes` when `/usr/bin/pkcheck` exists | ask polkit whether an agent's answer persists (``PolkitAuthority``) |
/// | `maximum-accuracy` | 50 | metres; worse fixes are ignored |
/// | `assumed-accuracy` | 25 | metres, for fixes without an estimate |
/// | `exit-radius-factor` | 1.2 | exit radius = max(radius × factor, radius + margin) |
/// | `exit-margin` | 30 | metres |
/// | `confirmations` | 3 | consecutive fixes to confirm a change |
/// | `dwell` | 0 | seconds of fix time a change must hold |
/// | `fix-loss` | 30 | seconds without fixes that count as a loss |
/// | `stays` | `on` | find and record stays anywhere (``StayDetector``), not only at places |
/// | `visit-min-duration` | 120 | seconds of fix time a stay must last |
/// | `arrival-hook`, `departure-hook` | none | shell command run on each event |
/// | `hook-timeout` | 10 | seconds before a hook is killed |
/// | `hook-queue` | 32 | events waiting for hooks; beyond it the oldest is dropped |
/// | `authorization-check` | 30 | seconds between grant checks when the store cannot be watched (no socket) |
/// | `save-interval` | 60 | seconds between saves of a changed monitor state |
/// | `save-interval-inside` | 5 | while a visit is open, seconds of fix time between saves |
/// | `track` | `on` | record the track (``TrackRecorder``); `off` disables it |
/// | `track-min-distance` | 10 | metres from the last kept point that keep a fix (0: every fix) |
/// | `track-min-interval` | 30 | seconds of fix time after the last kept point that keep a fix |
/// | `track-gap` | 10 | seconds without an accepted fix that end a segment |
/// | `track-maximum-accuracy` | 50 | metres; worse fixes are not recorded |
/// | `track-batch` | 100 | points per write transaction |
/// | `track-batch-interval` | 30 | seconds of fix time a point may wait for its batch |
/// | `track-retention-days` | 30 | days of track kept before the latest point; 0 keeps all |
/// | `log-level` | `info` | `err`, `warning`, `notice`, `info` or `debug` (coordinates) |
public struct DaemonConfiguration: Sendable, Hashable {
  /// The default configuration file.
  public static let defaultPath = "/etc/waymark/waymark.conf"

  /// Where gpsd is.
  public var gpsd = GPSDEndpoint()
  /// The client id whose grant is checked; it needs `always` with full accuracy.
  public var clientID = "waymarkd"
  /// The database file.
  public var storePath: String
  /// The location socket's path, or `nil` for none.
  public var socketPath: String?
  /// The NMEA socket's path, or `nil` for none.
  public var nmeaSocketPath: String?
  /// The loopback TCP endpoint of the NMEA stream, or `nil` for none.
  public var nmeaTCP: NMEATCPEndpoint?
  /// The MQTT link, or `nil` for none.
  public var mqtt: MQTTSettings?
  /// Connections the socket serves at once.
  public var socketClients = 1024
  /// Connections one uid may hold (root's are not counted).
  public var socketClientsPerUser = 64
  /// The programs that may be agents, or `nil` for the default (the `waymark` installed next to
  /// `waymarkd`, for any user).
  public var agents: [AgentRule]?
  /// Bytes a client may leave unread before it is disconnected.
  public var socketBufferBytes = 65536
  /// Seconds a REQUEST waits for an agent.
  public var agentTimeoutSeconds: Double = 30
  /// Whether polkit may authorize an agent's lasting answers (`polkit = yes`); with `no`, only
  /// agents running as root or in group `waymark` make lasting grants.
  public var usesPolkit = PolkitAuthority.isInstalled
  /// Detection defaults for the place monitor.
  public var detection = PlaceMonitor.Configuration()
  /// Whether stays are found and recorded anywhere (`stays`).
  public var recordsStays = true
  /// How stays are found (`visit-min-duration`).
  public var stays = StayDetector.Configuration()
  /// Shell command run on each ARRIVAL, or `nil`.
  public var arrivalHook: String?
  /// Shell command run on each DEPARTURE, or `nil`.
  public var departureHook: String?
  /// Seconds a hook may run before it is terminated.
  public var hookTimeoutSeconds: Double = 10
  /// Events that may wait for a hook; when full, the oldest waiting one is dropped.
  public var hookQueueCapacity = 32
  /// Seconds between grant checks when no change of the store can be seen (no location or NMEA
  /// socket, hence no broker, or no inotify); otherwise a change of the store triggers the
  /// check and no timer runs.
  public var authorizationCheckSeconds: Double = 30
  /// Seconds between periodic saves of the monitor state and fix counts, while they change (no
  /// save is due while no fix comes).
  public var saveIntervalSeconds: Double = 60
  /// While a visit is open, seconds of fix time between saves of the monitor state: a crash
  /// then loses at most this much of the stay (a departure found after a restart is dated by
  /// the last fix inside that was saved).
  public var saveIntervalInsideSeconds: Double = 5
  /// Whether the track is recorded (`track = on`).
  public var recordsTrack = true
  /// How the track is thinned, batched and kept.
  public var track = TrackRecordingSettings()
  /// The most detailed priority logged.
  public var logLevel = LogPriority.info

  /// The default configuration for `environment` (which decides the store and socket paths).
  public init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    storePath = StorePath.resolve(environment: environment, for: .daemon)
    socketPath = DaemonConfiguration.defaultSocketPath(environment: environment)
  }

  /// `$RUNTIME_DIRECTORY/waymark.sock` (systemd's `RuntimeDirectory=`, the first directory when
  /// it lists several), else `nil`: outside systemd the socket is opt-in (`socket = <path>`).
  public static func defaultSocketPath(environment: [String: String]) -> String? {
    guard let value = environment["RUNTIME_DIRECTORY"], !value.isEmpty else { return nil }
    let first = value.split(separator: ":").first.map(String.init) ?? value
    return PathText.join(first, "waymark.sock")
  }

  /// Reads and parses the file at `path`.
  ///
  /// - Throws: ``DaemonConfigurationError`` naming the file (and line) at fault.
  public static func load(
    path: String, environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(DaemonConfigurationError) -> DaemonConfiguration {
    guard let data = FileManager.default.contents(atPath: path) else {
      let reason = FileManager.default.fileExists(atPath: path) ? "cannot be read" : "not found"
      throw DaemonConfigurationError(path: path, line: nil, message: reason)
    }
    guard let text = String(data: data, encoding: .utf8) else {
      throw DaemonConfigurationError(path: path, line: nil, message: "not UTF-8 text")
    }
    return try parse(text, path: path, environment: environment)
  }

  /// Parses configuration text.
  ///
  /// - Parameters:
  ///   - text: the file's contents.
  ///   - path: named in errors.
  ///   - environment: decides the default store path.
  /// - Throws: ``DaemonConfigurationError`` with the 1-based line number.
  public static func parse(
    _ text: String, path: String,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(DaemonConfigurationError) -> DaemonConfiguration {
    var configuration = DaemonConfiguration(environment: environment)
    var seen: [String: Int] = [:]
    var mqttOptions: [(key: String, value: String, line: Int)] = []
    // Split on the scalar: in Swift "\r\n" is one Character, so splitting the characters on
    // "\n" would leave a CRLF file one long line (the fuzzer found it).
    let lines = text.unicodeScalars.split(separator: "\n", omittingEmptySubsequences: false)
    for (index, rawLine) in lines.enumerated() {
      let lineNumber = index + 1
      func fail(_ message: String) -> DaemonConfigurationError {
        DaemonConfigurationError(path: path, line: lineNumber, message: message)
      }
      var line = Substring(rawLine)
      if line.hasSuffix("\r") { line = line.dropLast() }
      let trimmed = line.trimmedWhitespace
      if trimmed.isEmpty || trimmed.hasPrefix("#") || trimmed.hasPrefix(";") { continue }
      guard let equals = trimmed.firstIndex(of: "=") else {
        throw fail("expected 'key = value'")
      }
      let key = trimmed[..<equals].trimmedWhitespace.lowercased()
      var value = String(trimmed[trimmed.index(after: equals)...].trimmedWhitespace)
      guard !key.isEmpty else { throw fail("missing key before '='") }
      if value.count >= 2, value.hasPrefix("\""), value.hasSuffix("\"") {
        value = String(value.dropFirst().dropLast())
      }
      if let first = seen[key] { throw fail("'\(key)' is already set on line \(first)") }
      seen[key] = lineNumber
      switch key {
      case "gpsd":
        guard let endpoint = GPSDEndpoint(parsing: value), !endpoint.host.isEmpty else {
          throw fail("gpsd: expected host[:port[:device]] with a port in 1...65535")
        }
        configuration.gpsd = endpoint
      case "client":
        guard !value.isEmpty, !value.contains(where: { $0.isWhitespace }) else {
          throw fail("client: expected a client id without spaces")
        }
        configuration.clientID = value
      case "store":
        guard value.hasPrefix("/") else { throw fail("store: expected an absolute path") }
        configuration.storePath = value
      case "grants":
        throw fail(
          "grants: no longer used; grants are kept in the store "
            + "(waymark auth grant <client> <level> --store <db>)")
      case "socket":
        configuration.socketPath = try socketPath(value, key, fail)
      case "nmea-socket":
        configuration.nmeaSocketPath = try socketPath(value, key, fail)
      case "nmea-tcp":
        if value.isEmpty || value == "none" {
          configuration.nmeaTCP = nil
        } else {
          guard let endpoint = NMEATCPEndpoint(parsing: value) else {
            throw fail(
              "nmea-tcp: expected 127.x.x.x:<port> (loopback only: peers are identified "
                + "through /proc), or none")
          }
          configuration.nmeaTCP = endpoint
        }
      case "mqtt":
        guard let settings = MQTTSettings(parsing: value) else {
          throw fail("mqtt: expected host[:port] with a port in 1...65535")
        }
        configuration.mqtt = settings
      case "mqtt-topic", "mqtt-tid", "mqtt-qos", "mqtt-interval", "mqtt-username",
        "mqtt-password-file", "mqtt-tls", "mqtt-cafile", "mqtt-remote-commands", "mqtt-client-id",
        "mqtt-outbox-max":
        mqttOptions.append((key, value, lineNumber))
      case "socket-clients":
        guard let count = Int(value), count >= 1, count <= 100_000 else {
          throw fail("socket-clients: expected a whole number in 1...100000")
        }
        configuration.socketClients = count
      case "socket-clients-per-user":
        guard let count = Int(value), count >= 1, count <= 100_000 else {
          throw fail("socket-clients-per-user: expected a whole number in 1...100000")
        }
        configuration.socketClientsPerUser = count
      case "agents":
        var rules: [AgentRule] = []
        if value != "none" {
          for item in value.split(whereSeparator: { $0 == "," || $0 == " " || $0 == "\t" }) {
            guard let rule = AgentRule(parsing: String(item)) else {
              throw fail(
                "agents: expected <user>:<absolute path> or *:<absolute path>, "
                  + "comma-separated, or none")
            }
            rules.append(rule)
          }
        }
        configuration.agents = rules
      case "socket-buffer":
        guard let count = Int(value), count >= 1024, count <= 64 << 20 else {
          throw fail("socket-buffer: expected a whole number of bytes in 1024...67108864")
        }
        configuration.socketBufferBytes = count
      case "agent-timeout":
        configuration.agentTimeoutSeconds = try number(value, key, fail, above: 0)
      case "polkit":
        switch value.lowercased() {
        case "yes", "on", "true": configuration.usesPolkit = true
        case "no", "off", "false": configuration.usesPolkit = false
        default: throw fail("polkit: expected yes or no")
        }
      case "maximum-accuracy":
        configuration.detection.maximumAccuracyMeters = try number(value, key, fail, above: 0)
      case "assumed-accuracy":
        configuration.detection.assumedAccuracyMeters = try number(value, key, fail, above: 0)
      case "exit-radius-factor":
        let factor = try number(value, key, fail, above: 0)
        guard factor >= 1 else { throw fail("exit-radius-factor: expected a number >= 1") }
        configuration.detection.exitRadiusFactor = factor
      case "exit-margin":
        configuration.detection.exitMarginMeters = try number(value, key, fail, atLeast: 0)
      case "confirmations":
        guard let count = Int(value), count >= 1, count <= 1000 else {
          throw fail("confirmations: expected a whole number in 1...1000")
        }
        configuration.detection.confirmations = count
      case "dwell":
        configuration.detection.dwellSeconds = try number(value, key, fail, atLeast: 0)
      case "fix-loss":
        configuration.detection.fixLossSeconds = try number(value, key, fail, above: 0)
      case "stays":
        switch value.lowercased() {
        case "on", "yes", "true": configuration.recordsStays = true
        case "off", "no", "false": configuration.recordsStays = false
        default: throw fail("stays: expected on or off")
        }
      case "visit-min-duration":
        let seconds = try number(value, key, fail, atLeast: 0)
        guard seconds <= 86_400 else { throw fail("visit-min-duration: expected at most 86400") }
        configuration.stays.minimumDurationSeconds = seconds
      case "arrival-hook":
        configuration.arrivalHook = value.isEmpty ? nil : value
      case "departure-hook":
        configuration.departureHook = value.isEmpty ? nil : value
      case "hook-timeout":
        configuration.hookTimeoutSeconds = try number(value, key, fail, above: 0)
      case "hook-queue":
        guard let count = Int(value), count >= 1, count <= 10_000 else {
          throw fail("hook-queue: expected a whole number in 1...10000")
        }
        configuration.hookQueueCapacity = count
      case "authorization-check":
        configuration.authorizationCheckSeconds = try number(value, key, fail, above: 0)
      case "save-interval":
        configuration.saveIntervalSeconds = try number(value, key, fail, above: 0)
      case "save-interval-inside":
        configuration.saveIntervalInsideSeconds = try number(value, key, fail, above: 0)
      case "track":
        switch value.lowercased() {
        case "on", "yes", "true": configuration.recordsTrack = true
        case "off", "no", "false": configuration.recordsTrack = false
        default: throw fail("track: expected on or off")
        }
      case "track-min-distance":
        configuration.track.rule.minimumDistanceMeters = try number(
          value, key, fail, atLeast: 0)
      case "track-min-interval":
        configuration.track.rule.minimumIntervalSeconds = try number(
          value, key, fail, atLeast: 0)
      case "track-gap":
        configuration.track.rule.gapSeconds = try number(value, key, fail, above: 0)
      case "track-maximum-accuracy":
        configuration.track.rule.maximumAccuracyMeters = try number(value, key, fail, above: 0)
      case "track-batch":
        guard let count = Int(value), count >= 1, count <= 100_000 else {
          throw fail("track-batch: expected a whole number of points in 1...100000")
        }
        configuration.track.batchPoints = count
      case "track-batch-interval":
        configuration.track.batchSeconds = try number(value, key, fail, above: 0)
      case "track-retention-days":
        guard let days = Int(value), days >= 0, days <= 36_500 else {
          throw fail("track-retention-days: expected a whole number of days in 0...36500")
        }
        configuration.track.retentionDays = days
      case "log-level":
        guard let level = LogPriority(name: value) else {
          throw fail("log-level: expected err, warning, notice, info or debug")
        }
        configuration.logLevel = level
      default:
        throw fail("unknown key '\(key)'")
      }
    }
    if !mqttOptions.isEmpty {
      guard var settings = configuration.mqtt else {
        let first = mqttOptions[0]
        throw DaemonConfigurationError(
          path: path, line: first.line, message: "\(first.key) needs mqtt = host[:port]")
      }
      for (key, value, line) in mqttOptions {
        func fail(_ message: String) -> DaemonConfigurationError {
          DaemonConfigurationError(path: path, line: line, message: message)
        }
        try applyMQTT(key, value, to: &settings, fail)
      }
      if settings.tls == false, settings.caFile != nil,
        let line = mqttOptions.first(where: { $0.key == "mqtt-tls" })?.line
      {
        throw DaemonConfigurationError(
          path: path, line: line, message: "mqtt-tls = no contradicts mqtt-cafile")
      }
      configuration.mqtt = settings
    }
    return configuration
  }

  /// A socket path (absolute, under the 108 bytes of `sun_path`), or `nil` for `none` or empty.
  private static func socketPath(
    _ value: String, _ key: String, _ fail: (String) -> DaemonConfigurationError
  ) throws(DaemonConfigurationError) -> String? {
    if value.isEmpty || value == "none" { return nil }
    guard value.hasPrefix("/"), value.utf8.count < 108 else {
      throw fail("\(key): expected an absolute path under 108 bytes, or none")
    }
    return value
  }

  private static func applyMQTT(
    _ key: String, _ value: String, to settings: inout MQTTSettings,
    _ fail: (String) -> DaemonConfigurationError
  ) throws(DaemonConfigurationError) {
    switch key {
    case "mqtt-topic":
      guard !value.isEmpty, !value.contains("#"), !value.contains("+"), !value.hasSuffix("/")
      else { throw fail("mqtt-topic: expected a topic without wildcards or a trailing '/'") }
      settings.topic = value
    case "mqtt-tid":
      guard (1...2).contains(value.count) else {
        throw fail("mqtt-tid: expected 1 or 2 characters")
      }
      settings.tid = value
    case "mqtt-qos":
      guard let qos = Int(value), (0...2).contains(qos) else {
        throw fail("mqtt-qos: expected 0, 1 or 2")
      }
      settings.qos = qos
    case "mqtt-interval":
      settings.intervalSeconds = try number(value, key, fail, atLeast: 0)
    case "mqtt-username":
      settings.username = value.isEmpty ? nil : value
    case "mqtt-password-file":
      if let problem = secretFileProblem(value) { throw fail("mqtt-password-file: \(problem)") }
      guard let data = FileManager.default.contents(atPath: value),
        let text = String(data: data, encoding: .utf8)
      else { throw fail("mqtt-password-file: cannot read '\(value)'") }
      settings.password = String(text.trimmedWhitespace)
    case "mqtt-tls":
      settings.tls = try yesOrNo(value, key, fail)
    case "mqtt-remote-commands":
      settings.acceptsRemoteCommands = try yesOrNo(value, key, fail)
    case "mqtt-cafile":
      guard FileManager.default.isReadableFile(atPath: value) else {
        throw fail("mqtt-cafile: cannot read '\(value)'")
      }
      settings.caFile = value
    case "mqtt-client-id":
      guard !value.isEmpty else {
        throw fail("mqtt-client-id: expected a client id")
      }
      settings.clientID = value
    default:  // mqtt-outbox-max
      guard let count = Int(value), count >= 100 else {
        throw fail("mqtt-outbox-max: expected a whole number >= 100")
      }
      settings.outboxMaximum = count
    }
  }

  /// `yes`, `on` or `true`; `no`, `off` or `false` (as `track`).
  private static func yesOrNo(
    _ value: String, _ key: String, _ fail: (String) -> DaemonConfigurationError
  ) throws(DaemonConfigurationError) -> Bool {
    switch value.lowercased() {
    case "yes", "on", "true": return true
    case "no", "off", "false": return false
    default: throw fail("\(key): expected yes or no, found '\(value)'")
    }
  }

  /// Why the file at `path`, which holds a secret, must not be used, or `nil`: as ssh does with
  /// a private key, a file that group or others may read or write is refused, naming the file
  /// and its mode.
  static func secretFileProblem(_ path: String) -> String? {
    var status = stat()
    guard stat(path, &status) == 0 else { return nil }  // the read reports it
    let mode = status.st_mode & 0o7777
    guard mode & 0o077 != 0 else { return nil }
    let octal = String(mode, radix: 8)
    return "'\(path)' is accessible by group or others (mode "
      + "\(String(repeating: "0", count: max(0, 4 - octal.count)) + octal)); it holds a "
      + "password: chmod 600 it (owned by the daemon's user)"
  }

  private static func number(
    _ value: String, _ key: String, _ fail: (String) -> DaemonConfigurationError,
    above lower: Double? = nil, atLeast minimum: Double? = nil
  ) throws(DaemonConfigurationError) -> Double {
    guard let number = Double(value), number.isFinite else {
      throw fail("\(key): expected a number, found '\(value)'")
    }
    if let lower, number <= lower { throw fail("\(key): expected a number > \(Int(lower))") }
    if let minimum, number < minimum {
      throw fail("\(key): expected a number >= \(Int(minimum))")
    }
    return number
  }
}

/// A configuration file that cannot be used; `waymarkd` exits 78 with it.
public struct DaemonConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The file.
  public var path: String
  /// The 1-based line, when the error is about one line.
  public var line: Int?
  /// What is wrong.
  public var message: String

  /// `path:line: message`, or `path: message`.
  public var description: String {
    line.map { "\(path):\($0): \(message)" } ?? "\(path): \(message)"
  }
}

/// `nmea-tcp`: a loopback IPv4 address and a port.
public struct NMEATCPEndpoint: Sendable, Hashable, CustomStringConvertible {
  /// The address, in 127.0.0.0/8.
  public var host: String
  /// The port, 1...65535.
  public var port: UInt16

  /// Parses `127.x.x.x:<port>`.
  public init?(parsing text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let port = UInt16(parts[1]), port > 0 else { return nil }
    let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false).map {
      UInt8($0)
    }
    guard octets.count == 4, octets.allSatisfy({ $0 != nil }), octets[0] == 127 else { return nil }
    host = String(parts[0])
    self.port = port
  }

  public var description: String { "\(host):\(port)" }
}
