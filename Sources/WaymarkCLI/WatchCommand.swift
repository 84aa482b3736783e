import FoundationEssentials
import GPSD
import Glibc
import WaymarkCore

/// `waymark watch`: live fixes from gpsd, like `cgps` (table) or `gpspipe -w` (`--json`).
enum WatchCommand: Command {
  static let name = "watch"
  static let summary = "Show live fixes from gpsd (table, or TPV NDJSON with --json)."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 24,
    [
      .json("One gpsd-style TPV object per fix (NDJSON), like 'gpspipe -w'."),
      .value("--count", "<n>", "Exit after <n> fixes."),
      .flag("--daemon", "Watch through waymarkd instead of gpsd."),
      .socket,
      .value("--request", "<level>", "Ask for whenInUse or always first (an agent answers)."),
      .reduced("Ask for approximate positions only."),
      .value("--distance", "<m>", "Only fixes at least <m> metres from the last one printed."),
      .flag("--events", "Place ARRIVAL/DEPARTURE objects too (needs an always grant)."),
      .flag(
        "--visits",
        """
        A VISIT object when a stay opens and when it closes (needs an
        always grant and 'stays = on').
        """),
    ])

  static let help = """
    USAGE: waymark watch [<host>[:<port>[:<device>]]] [--json] [--count <n>]
           waymark watch --daemon [--socket <path>] [--request whenInUse|always] [--reduced]
                         [--distance <m>] [--events] [--visits] [--json] [--count <n>]

    Shows live fixes from gpsd, one line per report, and keeps running across gpsd restarts
    and receiver unplugs (it reconnects by itself). Health changes (gpsd reachable, device
    present, fix mode, reconnect attempts) go to stderr. SIGINT or SIGTERM ends it cleanly.

    ARGUMENTS:
      <host>[:<port>[:<device>]]
                            gpsd to watch (default localhost:2947); with a device path, only
                            that device. IPv6 hosts in brackets: [::1]:2947.

    With --daemon, fixes come from waymarkd's location socket instead, under this program's
    grant (client <user>:<exe>): VERSION, AUTHORIZATION, TPV, ARRIVAL/DEPARTURE, VISIT and
    ERROR objects are printed as the daemon sends them (with --json), or AUTHORIZATION changes on
    stderr and fixes as a table.

    OPTIONS:
    \(options.listing)
    Exit codes: 0 ok, 64 usage, 69 waymarkd not reachable (--daemon).

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard parsed.positionals.count <= 1 else {
      throw CommandError.usage("Unexpected argument '\(parsed.positionals[1])'.")
    }
    var count: Int?
    if let text = parsed.value("--count") {
      guard let value = Int(text), value > 0 else {
        throw CommandError.usage("'--count' expects a positive whole number, got '\(text)'.")
      }
      count = value
    }
    let limit = count
    let json = parsed.has("--json")
    if parsed.has("--daemon") {
      if let host = parsed.positionals.first {
        throw CommandError.usage("'\(host)': a gpsd endpoint does not go with '--daemon'.")
      }
      return try await DaemonWatch(parsed: parsed, json: json, limit: limit).run()
    }
    for option in ["--socket", "--request", "--distance"] where parsed.value(option) != nil {
      throw CommandError.usage("'\(option)' needs '--daemon'.")
    }
    for flag in ["--reduced", "--events", "--visits"] where parsed.has(flag) {
      throw CommandError.usage("'\(flag)' needs '--daemon'.")
    }
    let endpoint = try GPSDEndpoint.parseArgument(parsed.positionals.first)
    let source = GPSDSource(configuration: GPSDConfiguration(endpoint: endpoint))
    let work = Task {
      await withTaskGroup(of: Void.self) { group in
        group.addTask { await reportHealth(of: source, endpoint: endpoint) }
        group.addTask { await printFixes(of: source, json: json, limit: limit) }
        await group.next()
        group.cancelAll()
      }
    }
    let trap = SignalWatcher([SIGINT, SIGTERM]) { _ in work.cancel() }
    await work.value
    trap.cancel(restoringDefaults: true)
    OutputSink.standardOutput.flush()
    return .ok
  }

  private static func printFixes(of source: GPSDSource, json: Bool, limit: Int?) async {
    let output = OutputSink.standardOutput
    var count = 0
    if !json { output.line(TableRow.header) }
    output.flush()
    for await fix in source.fixes() {
      if json {
        var line = fix.tpv()
        if case .device(let path) = fix.provenance { line.add("device", path) }
        output.withBuffer { line.write(to: &$0) }
      } else {
        output.line(TableRow.row(fix))
      }
      output.flush()
      count += 1
      if let limit, count >= limit { return }
    }
  }

  private static func reportHealth(of source: GPSDSource, endpoint: GPSDEndpoint) async {
    for await health in source.health() where health.service != .unknown {
      OutputSink.standardError.line("gpsd \(endpoint): \(health.summary)")
    }
  }
}

/// The `cgps`-like table of `waymark watch`.
enum TableRow {
  static let header =
    "TIME                      MODE  LATITUDE       LONGITUDE       ALT(m)    SPEED(m/s)  "
    + "TRACK   EPH(m)  DEVICE"

  static func row(_ fix: Fix) -> String {
    func column(_ value: Double?, _ decimals: Int, width: Int) -> String {
      var bytes: [UInt8] = []
      if let value, value.isFinite { JSONLine.appendFixed(value, decimals: decimals, to: &bytes) }
      let text = bytes.isEmpty ? "-" : String(decoding: bytes, as: UTF8.self)
      return text.padded(toLength: max(width, text.count))
    }
    let time = (fix.time.map(Timestamp.format) ?? "-").padded(toLength: 26)
    let mode: String
    switch fix.mode {
    case .unknown: mode = "-"
    case .noFix: mode = "none"
    case .twoDimensional: mode = "2D"
    case .threeDimensional: mode = "3D"
    }
    var device = ""
    if case .device(let path) = fix.provenance { device = path }
    let position = fix.mode.hasPosition ? fix.coordinate : nil
    return time + mode.padded(toLength: 6)
      + column(position?.latitude, 9, width: 15) + column(position?.longitude, 9, width: 16)
      + column(fix.mode == .threeDimensional ? fix.altitudeMSL : nil, 1, width: 10)
      + column(fix.speed, 2, width: 12) + column(fix.track, 1, width: 8)
      + column(fix.horizontalError, 1, width: 8) + device
  }
}

extension GPSDEndpoint {
  /// Parses the optional `<host>[:<port>[:<device>]]` argument of `watch` and `status`.
  static func parseArgument(_ text: String?) throws -> GPSDEndpoint {
    guard let text else { return GPSDEndpoint() }
    guard let endpoint = GPSDEndpoint(parsing: text) else {
      throw CommandError.usage("'\(text)' is not <host>[:<port>[:<device>]].")
    }
    return endpoint
  }
}

extension SourceHealth {
  /// One line for people: `reachable; device /dev/ttyACM0 present; mode 3D`.
  var summary: String {
    var parts: [String] = []
    switch service {
    case .unknown: parts.append("connecting")
    case .reachable: parts.append("reachable")
    case .unreachable: parts.append("unreachable")
    }
    if service == .reachable {
      switch devicePresent {
      case true?: parts.append("device \(device ?? "?") present")
      case false?: parts.append(device.map { "device \($0) absent" } ?? "no device")
      case nil: break
      }
      if mode != .unknown { parts.append("mode \(mode.label)") }
    }
    if service == .unreachable, reconnectAttempt > 0 {
      parts.append("retry \(reconnectAttempt)")
    }
    if service == .unreachable, let lastError { parts.append(lastError) }
    return parts.joined(separator: "; ")
  }
}

extension FixMode {
  /// `no fix`, `2D`, `3D`, or `unknown`.
  var label: String {
    switch self {
    case .unknown: return "unknown"
    case .noFix: return "no fix"
    case .twoDimensional: return "2D"
    case .threeDimensional: return "3D"
    }
  }
}
