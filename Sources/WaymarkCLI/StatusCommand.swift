import FoundationEssentials
import GPSD
import Glibc
import WaymarkClient
import WaymarkCore
import WaymarkDaemonConfiguration

/// `waymark status`: a one-shot report of gpsd, its devices and the current fix.
enum StatusCommand: Command {
  static let name = "status"
  static let summary = "Report gpsd, its devices and the current fix once."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 24,
    [
      .json("NDJSON: a STATUS object, then the fix as a TPV object if any."),
      .value("--timeout", "<seconds>", default: "3", "How long to wait for a fix (default 3)."),
      .socket(
        "waymarkd's location socket (default /run/waymark/waymark.sock)."),
      .store(
        """
        waymarkd's store (default $WAYMARK_STORE, $STATE_DIRECTORY/waymark.db,
        else /var/lib/waymark/waymark.db when it exists, else the user's).
        """),
      .value(
        "--config", "<file>", default: DaemonConfiguration.defaultPath,
        """
        waymarkd's configuration, for the MQTT identity (default
        /etc/waymark/waymark.conf).
        """),
    ])

  static let help = """
    USAGE: waymark status [<host>[:<port>[:<device>]]] [--json] [--timeout <seconds>]
                          [--socket <path>] [--store <db>] [--config <file>]

    Connects to gpsd once, waits up to the timeout for its device list and a fix, then asks
    waymarkd on its socket (running, release, clients, the latest fix) and reads its store
    (places, open visits, the MQTT outbox's depth), and names the MQTT identity in use (client
    id, topic, tracker id: the configuration's, else this machine's, unique per machine);
    prints what it found and exits. The daemon's part is printed also when gpsd is unreachable.

    ARGUMENTS:
      <host>[:<port>[:<device>]]
                            gpsd to ask (default localhost:2947).

    OPTIONS:
    \(options.listing)
    Exit codes: 0 ok, 64 usage, 69 gpsd unreachable.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard parsed.positionals.count <= 1 else {
      throw CommandError.usage("Unexpected argument '\(parsed.positionals[1])'.")
    }
    let endpoint = try GPSDEndpoint.parseArgument(parsed.positionals.first)
    let timeout = try parsed.double(orDefault: "--timeout")
    guard timeout > 0 else { throw CommandError.usage("'--timeout' must be positive.") }

    let source = GPSDSource(configuration: GPSDConfiguration(endpoint: endpoint))
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(timeout)
    let health = source.health()
    var fix: Fix?
    let fixes = Task {
      var latest: Fix?
      for await fix in source.fixes() {
        latest = fix
        if fix.isUsable { break }
      }
      return latest
    }
    defer { fixes.cancel() }
    // The first decided reachability.
    var state = SourceHealth()
    for await report in health {
      state = report
      if report.service != .unknown { break }
    }
    let daemon = await DaemonStatus.gather(
      socketPath: parsed.value(orDefault: "--socket"),
      storePath: StorePath.resolve(option: parsed.value("--store"), for: .status),
      configPath: parsed.value(orDefault: "--config"), timeout: .seconds(2))
    let now = Date()
    guard state.service == .reachable else {
      let output = OutputSink.standardOutput
      if parsed.has("--json") {
        output.withBuffer { daemon.jsonLine(now: now).write(to: &$0) }
      } else {
        for line in daemon.lines(now: now) { output.line(line) }
      }
      output.flush()
      throw CommandError(
        "gpsd is not reachable at \(endpoint) (\(state.lastError ?? "no answer")).",
        code: .unavailable)
    }
    // Wait for a usable fix, or until the deadline.
    let waiter = Task {
      try? await clock.sleep(until: deadline)
      fixes.cancel()
    }
    fix = await fixes.value
    waiter.cancel()
    state = source.currentHealth
    let devices = source.devices
    let output = OutputSink.standardOutput
    if parsed.has("--json") {
      var line = JSONLine(class: "STATUS")
      line.add("gpsd", endpoint.description)
      line.add("release", source.serverVersion)
      line.add("reachable", true)
      line.add("devices", rawJSON: "[" + devices.map(jsonString).joined(separator: ",") + "]")
      line.add("mode", (fix?.mode ?? state.mode).rawValue)
      line.add("lastFix", fix?.time)
      output.withBuffer { line.write(to: &$0) }
      if let fix {
        var tpv = fix.tpv()
        if case .device(let path) = fix.provenance { tpv.add("device", path) }
        output.withBuffer { tpv.write(to: &$0) }
      }
      output.withBuffer { daemon.jsonLine(now: now).write(to: &$0) }
    } else {
      // What gpsd says is outside text: escaped for the terminal.
      let release = LogText.escaped(source.serverVersion ?? "unknown")
      output.line("gpsd      \(endpoint) (release \(release))")
      let names = devices.map { LogText.escaped($0) }
      output.line("devices   \(names.isEmpty ? "none" : names.joined(separator: ", "))")
      if let fix {
        output.line("mode      \(fix.mode.label)")
        output.line("time      \(fix.time.map(Timestamp.format) ?? "unknown")")
        if fix.mode.hasPosition, let coordinate = fix.coordinate {
          output.line("position  \(coordinate.latitude), \(coordinate.longitude)")
        }
        if let error = fix.horizontalError { output.line("accuracy  \(error) m") }
      } else {
        output.line("fix       none within \(timeout) s")
      }
      for line in daemon.lines(now: now) { output.line(line) }
    }
    output.flush()
    return .ok
  }

  private static func jsonString(_ text: String) -> String {
    var bytes: [UInt8] = []
    JSONLine.appendString(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }
}
