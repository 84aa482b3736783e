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
      request = DaemonRequest.request(level: level == "always" ? .always : .whenInUse).line.string
    } else {
      request = nil
    }
    var options = DaemonRequest.Watch(reduced: parsed.has("--reduced"))
    if let text = parsed.value("--distance") {
      guard let distance = Double(text), distance >= 0, distance.isFinite else {
        throw CommandError.usage("'--distance' expects metres >= 0, got '\(text)'.")
      }
      options.distanceMeters = distance
    }
    options.events = parsed.has("--events")
    options.visits = parsed.has("--visits")
    watch = DaemonRequest.watch(options).line.string
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
      let typed = DaemonMessage.parse(message)
      switch (json, typed) {
      case (true, _):
        output.line(JSONLine.escapingControls(message.line))
      case (false, .success(.location(let fix))):
        output.line(TableRow.row(fix))
      case (false, .success(.version)), (false, .success(.watch)):
        break
      default:
        OutputSink.standardError.line("waymarkd: \(JSONLine.escapingControls(message.line))")
      }
      output.flush()
      if case .success(.location) = typed {
        fixes += 1
        if let limit, fixes >= limit { break }
      }
    }
    connection.close()
    return .ok
  }
}
