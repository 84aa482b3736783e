import FoundationEssentials
import Glibc
import WaymarkClient
import WaymarkCore

/// `waymark watch --daemon`: fixes and events from waymarkd's location socket.
struct DaemonWatch {
  let socketPath: String
  let request: String?
  let watch: String
  let json: Bool
  let limit: Int?

  init(parsed: ParsedArguments, json: Bool, limit: Int?) throws {
    socketPath = parsed.value(orDefault: "--socket")
    if let level = parsed.value("--request") {
      guard level == "whenInUse" || level == "always" else {
        throw CommandError.usage("'--request' expects whenInUse or always, got '\(level)'.")
      }
      var line = JSONLine(class: "REQUEST")
      line.add("level", level)
      request = line.string
    } else {
      request = nil
    }
    var line = JSONLine(class: "WATCH")
    line.add("enable", true)
    if parsed.has("--reduced") { line.add("accuracy", "reduced") }
    if let text = parsed.value("--distance") {
      guard let distance = Double(text), distance >= 0, distance.isFinite else {
        throw CommandError.usage("'--distance' expects metres >= 0, got '\(text)'.")
      }
      line.add("distance", distance, decimals: 1)
    }
    if parsed.has("--events") { line.add("events", true) }
    if parsed.has("--visits") { line.add("visits", true) }
    watch = line.string
    self.json = json
    self.limit = limit
  }

  func run() async throws -> ExitCode {
    let (connection, messages) = try BrokerConnection.open(
      socketPath, sending: (request.map { [$0] } ?? []) + [watch])
    let output = OutputSink.standardOutput
    let trap = SignalWatcher([SIGINT, SIGTERM]) { _ in connection.close() }
    defer { trap.cancel(restoringDefaults: true) }
    if !json { output.line(TableRow.header) }
    output.flush()
    var fixes = 0
    for await message in messages {
      if json {
        output.line(JSONLine.escapingControls(message.line))
      } else if let fix = message.fix {
        output.line(TableRow.row(fix))
      } else if message.className != "VERSION" && message.className != "WATCH" {
        OutputSink.standardError.line("waymarkd: \(JSONLine.escapingControls(message.line))")
      }
      output.flush()
      if message.className == "TPV" {
        fixes += 1
        if let limit, fixes >= limit { break }
      }
    }
    connection.close()
    return .ok
  }
}
