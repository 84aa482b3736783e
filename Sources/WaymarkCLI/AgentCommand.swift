import FoundationEssentials
import Glibc
import WaymarkClient
import WaymarkCore

/// `waymark agent`: answers waymarkd's authorization questions for this user's programs (for
/// every user's, when run as root), at the terminal or with a fixed answer.
enum AgentCommand: Command {
  static let name = "agent"
  static let summary = "Answer waymarkd's authorization requests (a terminal agent)."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .socket,
      .value(
        "--answer", "<grant>",
        """
        Answer every question with once, whenInUse, always or never, without
        asking.
        """),
      .reduced("With --answer: grant approximate locations only."),
    ])

  static let help = """
    USAGE: waymark agent [--socket <path>] [--answer <grant>] [--reduced]

    Registers with waymarkd as an authorization agent. When a program of the same user (of
    any user, for root's agent) sends a REQUEST and has no grant, the daemon asks here:

      waymark agent: alice:/usr/bin/gnome-maps (pid 4242) asks for whenInUse
      [o]nce, [w]hile in use, [a]lways, [d]on't allow (add r for approximate):

    The answer is read from standard input, one line per question (a terminal, or a script).
    'once' lasts as long as the program's connection; the others are recorded in the daemon's
    store. An answer counts only when this agent runs as root or in group 'waymark', or when
    polkit confirms it (its dialog names the program, the decision and the accuracy, and asks
    the person to authenticate); otherwise the program is denied this time and the agent says
    so. '--answer' (a script, not a person) is accepted from root and group 'waymark' only.
    Each question, answer and the daemon's decision is also printed as NDJSON on standard
    output. Only the programs in 'agents' of waymark.conf may be agents (by default this
    waymark), and never about themselves.

    OPTIONS:
    \(options.listing)
    Exit codes: 0 when the daemon or standard input closes, 64 usage, 69 waymarkd not
    reachable, 77 refused as an agent (not in 'agents', or '--answer' without root or group
    'waymark').

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    _ = try parsed.requirePositionals([])
    var fixed: DaemonRequest.AgentAnswer?
    if let answer = parsed.value("--answer") {
      let accuracy: AccuracyAuthorization = parsed.has("--reduced") ? .reduced : .full
      switch answer {
      case "once": fixed = .once(accuracy)
      case "whenInUse": fixed = .grant(.whenInUse, accuracy)
      case "always": fixed = .grant(.always, accuracy)
      case "never": fixed = .grant(.never, accuracy)
      default:
        throw CommandError.usage(
          "'--answer' expects once, whenInUse, always or never, got '\(answer)'.")
      }
    } else if parsed.has("--reduced") {
      throw CommandError.usage("'--reduced' goes with '--answer'.")
    }
    let (connection, messages) = try BrokerConnection.open(
      parsed.value(orDefault: "--socket"),
      // A scripted answer says so: it persists only as root or group waymark, never on polkit's
      // word (nobody may be at the keyboard to type a password).
      sending: [DaemonRequest.agent(enable: true, scripted: fixed != nil).line.string])
    let trap = SignalWatcher([SIGINT, SIGTERM]) { _ in connection.close() }
    defer { trap.cancel(restoringDefaults: true) }
    let output = OutputSink.standardOutput
    var registered = false
    for await message in messages {
      switch DaemonMessage.parse(message) {
      case .success(.agent):
        registered = true
      case .success(.ask(let ask)):
        // Client ids are program paths, chosen by whoever installed the program: nothing from
        // the daemon reaches the terminal unescaped.
        output.line(JSONLine.escapingControls(message.line))
        output.flush()
        let client = LogText.escaped(ask.clientID)
        let level = ask.level.rawValue
        let pid = " (pid \(ask.processID))"
        // A service session's purpose (protocol 1.3): the program's own words, bounded and
        // escaped like the client id.
        let purpose =
          ask.purpose.map {
            " for \"" + LogText.escaped(LogText.bounded($0, to: 200)) + "\""
          } ?? ""
        let answer: DaemonRequest.AgentAnswer
        if let fixed {
          answer = fixed
        } else {
          OutputSink.standardError.write(
            "waymark agent: \(client)\(pid) asks for \(level)\(purpose)\n"
              + "[o]nce, [w]hile in use, [a]lways, [d]on't allow (add r for approximate): ")
          OutputSink.standardError.flush()
          guard let line = readLine() else {
            connection.close()
            return .ok
          }
          answer = parseAnswer(line)
        }
        let reply = DaemonRequest.answer(id: ask.id, answer: answer)
        output.line(reply.line.string)
        output.flush()
        do {
          try connection.send(reply)
        } catch {
          throw CommandError("\(error)", code: .unavailable)
        }
      case .success(.decided(let decided)):
        output.line(message.line)
        output.flush()
        let client = LogText.escaped(decided.clientID)
        let reason = decided.reason.map(LogText.escaped)
        if !decided.recorded, decided.grant == .once {
          OutputSink.standardError.line(
            "waymark agent: the answer for \(client) counts once only (this connection of the "
              + "program), not recorded: " + (reason ?? "the daemon did not record it"))
        } else if !decided.recorded, let reason {
          OutputSink.standardError.line(
            "waymark agent: the answer for \(client) did not count; the program is denied "
              + "this time: \(reason)")
        }
      case .success(.error(let text)):
        OutputSink.standardError.line("waymarkd: \(JSONLine.escapingControls(message.line))")
        // Refused as an agent: say so with the exit status instead of waiting for questions
        // that never come.
        if !registered {
          connection.close()
          throw CommandError(
            "waymarkd refused this agent: "
              + LogText.escaped(text),
            code: .noPermission)
        }
      default:
        break
      }
    }
    return .ok
  }

  /// `o`, `w`, `a`, `d` (anything else denies), with `r` anywhere for approximate.
  static func parseAnswer(_ line: String) -> DaemonRequest.AgentAnswer {
    let word = line.lowercased().trimmedWhitespace
    let accuracy: AccuracyAuthorization = word.contains("r") ? .reduced : .full
    switch word.first {
    case "o": return .once(accuracy)
    case "w": return .grant(.whenInUse, accuracy)
    case "a": return .grant(.always, accuracy)
    default: return .grant(.never, .full)
    }
  }
}

extension BrokerConnection {
  /// Connects to waymarkd's socket at `path`, starts reading and sends `lines`: the start of
  /// `waymark agent` and `waymark watch --daemon`.
  ///
  /// - Throws: ``CommandError`` with exit code 69 when the daemon cannot be reached.
  static func open(_ path: String, sending lines: [String]) throws -> (
    BrokerConnection, AsyncStream<BrokerMessage>
  ) {
    do {
      let connection = try BrokerConnection(path: path)
      let messages = connection.messages()
      for line in lines { try connection.send(line) }
      return (connection, messages)
    } catch {
      throw CommandError("\(error)", code: .unavailable)
    }
  }
}
