import FoundationEssentials
import GPSD
import Glibc
import Waymark
import WaymarkCore
import WaymarkIdentify
import WaymarkMQTT
import WaymarkPipeline
import WaymarkProcess
import WaymarkTraccar

/// The settings of `waymarkd`, read from `/etc/waymark/waymark.conf`.
///
/// The file is a list of `key = value` lines. Blank lines and lines starting with `#` or `;`
/// are ignored; there are no sections and no inline comments (a hook command may contain `#`).
/// Spaces around the key and the value are trimmed; a value may be wrapped in double quotes to
/// keep leading or trailing spaces. Each key may appear once. Every key is optional.
///
/// The keys are rows of one table (`DaemonConfigurationKey.all`: name, default, parser and
/// documentation); the parser reads through it, and ``shippedFile`` (the shipped
/// `config/waymark.conf`, whose comments document every key, and so `waymark.conf(5)`) is
/// written from it.
package struct DaemonConfiguration: Sendable, Hashable {
  /// The default configuration file.
  package static let defaultPath = "/etc/waymark/waymark.conf"
  /// Where Debian's polkitd package installs pkcheck (`PolkitAuthority`'s default).
  package static let pkcheckPath = "/usr/bin/pkcheck"

  /// Whether pkcheck is installed where Debian puts it (the default of `polkit =`).
  package static var pkcheckIsInstalled: Bool {
    FileManager.default.isExecutableFile(atPath: pkcheckPath)
  }

  /// Where gpsd is.
  package var gpsd = GPSDEndpoint()
  /// The client id whose grant is checked; it needs `always` with full accuracy.
  package var clientID = "waymarkd"
  /// The database file.
  package var storePath: String
  /// The location socket's path, or `nil` for none.
  package var socketPath: String?
  /// The NMEA socket's path, or `nil` for none.
  package var nmeaSocketPath: String?
  /// The loopback TCP endpoint of the NMEA stream, or `nil` for none.
  package var nmeaTCP: NMEATCPEndpoint?
  /// The MQTT link, or `nil` for none.
  package var mqtt: MQTTSettings?
  /// The Traccar server, or `nil` for none.
  package var traccar: TraccarSettings?
  /// Connections the socket serves at once.
  package var socketClients = 1024
  /// Connections one uid may hold (root's are not counted).
  package var socketClientsPerUser = 64
  /// The programs that may be agents, or `nil` for the default (the `waymark` installed next to
  /// `waymarkd`, for any user).
  package var agents: [AgentRule]?
  /// Bytes a client may leave unread before it is disconnected.
  package var socketBufferBytes = 65536
  /// Seconds a REQUEST waits for an agent.
  package var agentTimeoutSeconds: Double = 30
  /// Whether polkit may confirm an agent's answers (`polkit = yes`); with `no`, only agents
  /// running as root or in group `waymark` decide, and other agents' answers deny.
  package var usesPolkit = DaemonConfiguration.pkcheckIsInstalled
  /// Detection defaults for the place monitor.
  package var detection = PlaceMonitor.Configuration()
  /// Whether stays are found and recorded anywhere (`stays`).
  package var recordsStays = true
  /// How stays are found (`visit-min-duration`).
  package var stays = StayDetector.Configuration()
  /// Shell command run on each ARRIVAL, or `nil`.
  package var arrivalHook: String?
  /// Shell command run on each DEPARTURE, or `nil`.
  package var departureHook: String?
  /// Seconds a hook may run before it is terminated.
  package var hookTimeoutSeconds: Double = 10
  /// Events that may wait for a hook; when full, the oldest waiting one is dropped.
  package var hookQueueCapacity = 32
  /// Seconds between grant checks when no change of the store can be seen (no location or NMEA
  /// socket, hence no broker, or no inotify); otherwise a change of the store triggers the
  /// check and no timer runs.
  package var authorizationCheckSeconds: Double = 30
  /// Seconds between periodic saves of the monitor state and fix counts, while they change (no
  /// save is due while no fix comes).
  package var saveIntervalSeconds: Double = 60
  /// While a visit is open, seconds of fix time between saves of the monitor state: a crash
  /// then loses at most this much of the stay (a departure found after a restart is dated by
  /// the last fix inside that was saved).
  package var saveIntervalInsideSeconds: Double = 5
  /// Seconds a fix's time may be ahead of the system clock (`fix-time-tolerance`): a fix dated
  /// further ahead (a spoofer, a broken receiver, a hostile gpsd stream) is reported and kept
  /// out of the pipeline, so that it can neither end the track's retention window nor freeze
  /// reduced releases and stays until that date.
  package var fixTimeToleranceSeconds: Double = 86_400
  /// Whether the track is recorded (`track = on`).
  package var recordsTrack = true
  /// How the track is thinned, batched and kept.
  package var track = TrackRecordingSettings()
  /// The most detailed priority logged.
  package var logLevel = LogPriority.info

  /// The default configuration for `environment` (which decides the store and socket paths).
  package init(environment: [String: String] = ProcessInfo.processInfo.environment) {
    storePath = StorePath.resolve(environment: environment, for: .daemon)
    socketPath = DaemonConfiguration.defaultSocketPath(environment: environment)
  }

  /// `$RUNTIME_DIRECTORY/waymark.sock` (systemd's `RuntimeDirectory=`, the first directory when
  /// it lists several), else `nil`: outside systemd the socket is opt-in (`socket = <path>`).
  package static func defaultSocketPath(environment: [String: String]) -> String? {
    guard let value = environment["RUNTIME_DIRECTORY"], !value.isEmpty else { return nil }
    let first = value.split(separator: ":").first.map(String.init) ?? value
    return PathText.join(first, "waymark.sock")
  }

  /// Reads and parses the file at `path`.
  ///
  /// - Throws: ``DaemonConfigurationError`` naming the file (and line) at fault.
  package static func load(
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
  package static func parse(
    _ text: String, path: String,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) throws(DaemonConfigurationError) -> DaemonConfiguration {
    var configuration = DaemonConfiguration(environment: environment)
    var seen: [String: Int] = [:]
    var mqttOptions:
      [(
        key: String, value: String, line: Int,
        apply: @Sendable (String, inout MQTTSettings) throws(DaemonConfigurationKey.Problem) -> Void
      )] = []
    var traccarOptions:
      [(
        key: String, value: String, line: Int,
        apply:
          @Sendable (String, inout TraccarSettings) throws(DaemonConfigurationKey.Problem) -> Void
      )] = []
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
      guard let row = DaemonConfigurationKey.byName[key] else {
        throw fail("unknown key '\(key)'")
      }
      do throws(DaemonConfigurationKey.Problem) {
        switch row.parser {
        case .setting(let apply): try apply(value, &configuration)
        case .mqtt(let apply): mqttOptions.append((key, value, lineNumber, apply))
        case .traccar(let apply): traccarOptions.append((key, value, lineNumber, apply))
        case .retired(let reason): throw DaemonConfigurationKey.Problem(reason)
        }
      } catch {
        throw fail("\(key): \(error.message)")
      }
    }
    if let settings = try apply(
      mqttOptions, to: configuration.mqtt, opener: "mqtt = host[:port]", path: path)
    {
      if settings.tls == false, settings.caFile != nil,
        let line = mqttOptions.first(where: { $0.key == "mqtt-tls" })?.line
      {
        throw DaemonConfigurationError(
          path: path, line: line, message: "mqtt-tls = no contradicts mqtt-cafile")
      }
      configuration.mqtt = settings
    }
    if let settings = try apply(
      traccarOptions, to: configuration.traccar, opener: "traccar = <url>", path: path)
    {
      configuration.traccar = settings
    }
    return configuration
  }

  /// Applies the keys of a group (`mqtt-*`, `traccar-*`), read after every other line, to the
  /// settings its opening key made.
  ///
  /// - Returns: the settings with the keys applied; `nil` when the group has no keys.
  /// - Throws: ``DaemonConfigurationError`` at a key that refuses its value, or at the first key
  ///   when the opening key (`opener`) is missing.
  private static func apply<Settings>(
    _ options: [(
      key: String, value: String, line: Int,
      apply: @Sendable (String, inout Settings) throws(DaemonConfigurationKey.Problem) -> Void
    )],
    to opened: Settings?, opener: String, path: String
  ) throws(DaemonConfigurationError) -> Settings? {
    guard let first = options.first else { return nil }
    guard var settings = opened else {
      throw DaemonConfigurationError(
        path: path, line: first.line, message: "\(first.key) needs \(opener)")
    }
    for (key, value, line, apply) in options {
      do throws(DaemonConfigurationKey.Problem) {
        try apply(value, &settings)
      } catch {
        throw DaemonConfigurationError(path: path, line: line, message: "\(key): \(error.message)")
      }
    }
    return settings
  }

  /// The shipped `config/waymark.conf`: every key commented out with its default (or an
  /// example), under the comment that documents it, in the order of the key table.
  package static var shippedFile: String {
    var lines = DaemonConfigurationKey.fileHeader.split(
      separator: "\n", omittingEmptySubsequences: false
    ).map(String.init)
    for key in DaemonConfigurationKey.all { lines += key.shippedLines }
    return lines.joined(separator: "\n") + "\n"
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
}

/// A configuration file that cannot be used; `waymarkd` exits 78 with it.
package struct DaemonConfigurationError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The file.
  package var path: String
  /// The 1-based line, when the error is about one line.
  package var line: Int?
  /// What is wrong.
  package var message: String

  /// `path:line: message`, or `path: message`.
  package var description: String {
    line.map { "\(path):\($0): \(message)" } ?? "\(path): \(message)"
  }
}

/// `nmea-tcp`: a loopback IPv4 address and a port.
package struct NMEATCPEndpoint: Sendable, Hashable, CustomStringConvertible {
  /// The address, in 127.0.0.0/8.
  package var host: String
  /// The port, 1...65535.
  package var port: UInt16

  /// Parses `127.x.x.x:<port>`.
  package init?(parsing text: String) {
    let parts = text.split(separator: ":", omittingEmptySubsequences: false)
    guard parts.count == 2, let port = UInt16(parts[1]), port > 0 else { return nil }
    let octets = parts[0].split(separator: ".", omittingEmptySubsequences: false).map {
      UInt8($0)
    }
    guard octets.count == 4, octets.allSatisfy({ $0 != nil }), octets[0] == 127 else { return nil }
    host = String(parts[0])
    self.port = port
  }

  package var description: String { "\(host):\(port)" }
}
