import Foundation
import Waymark
import WaymarkCore
import WaymarkService

/// `waymark auth`: shows and changes which clients may receive locations.
enum AuthCommand: Command {
  static let name = "auth"
  static let summary = "Show and change location authorization grants."
  static let help = """
    USAGE: waymark auth <subcommand> [--state-dir <dir>]

    Shows and changes the per-client location grants that LocationManager honours.

    SUBCOMMANDS:
      status [<client>]                   Location services and every grant (or one client's
                                          authorization status), as NDJSON.
      grant <client> <level> [--reduced]  Records a grant. <level>: never, whenInUse, always.
                                          --reduced grants approximate locations only.
      revoke <client>                     Removes a client's grant (it is asked again).
      reset                               Removes every grant.
      request <client> [--always]         Asks as an application would: a prompt when standard
                                          input and output are a terminal, otherwise denied.

    OPTIONS:
      --state-dir <dir>   Directory of grants.json. Default: $STATE_DIRECTORY, else
                          $XDG_STATE_HOME/waymark, else ~/.local/state/waymark.
      -h, --help          Show this help.

    Location services are disabled system-wide (every client restricted) while the file
    /etc/waymark/disabled exists.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(
      arguments, options: ["--state-dir"], flags: ["--reduced", "--always"])
    guard let subcommand = parsed.positionals.first else {
      throw CommandError.usage("Missing subcommand (status, grant, revoke, reset, request).")
    }
    let store =
      parsed.value("--state-dir").map { FileGrantStore(directory: URL(fileURLWithPath: $0)) }
      ?? FileGrantStore.standard()
    let words = Array(parsed.positionals.dropFirst())
    let allowed: Set<String> =
      switch subcommand {
      case "grant": ["--reduced"]
      case "request": ["--always"]
      default: []
      }
    for flag in ["--reduced", "--always"] where parsed.has(flag) && !allowed.contains(flag) {
      throw CommandError.usage("'\(flag)' does not apply to 'auth \(subcommand)'.")
    }
    do {
      switch subcommand {
      case "status":
        try status(store: store, client: try optionalClient(words))
      case "grant":
        try grant(store: store, words: words, reduced: parsed.has("--reduced"))
      case "revoke":
        let client = try ParsedArguments.require(words, ["<client>"])[0]
        var line = JSONLine(class: "REVOKE")
        line.add("client", client)
        line.add("removed", try store.removeGrant(for: client))
        OutputSink.standardOutput.line(line.string)
      case "reset":
        _ = try ParsedArguments.require(words, [])
        let count = try store.allGrants().count
        try store.removeAll()
        var line = JSONLine(class: "RESET")
        line.add("removed", count)
        OutputSink.standardOutput.line(line.string)
      case "request":
        let client = try ParsedArguments.require(words, ["<client>"])[0]
        try await request(store: store, client: client, always: parsed.has("--always"))
      default:
        throw CommandError.usage("Unknown subcommand '\(subcommand)'.")
      }
    } catch let error as GrantStoreError {
      switch error {
      case .corrupt: throw CommandError(error.description, code: .dataError)
      case .unreadable, .unwritable: throw CommandError(error.description, code: .ioError)
      }
    }
    return .ok
  }

  private static func optionalClient(_ words: [String]) throws -> String? {
    if words.count > 1 { throw CommandError.usage("Unexpected argument '\(words[1])'.") }
    return words.first
  }

  private static func status(store: FileGrantStore, client: String?) throws {
    let services = LocationServicesSwitch.file()
    if let client {
      let center = AuthorizationCenter(store: store, services: services)
      _ = try store.grant(for: client)  // report a broken store as an error, not "restricted"
      write(center.state(for: client), client: client)
      return
    }
    let grants = try store.allGrants()
    var header = JSONLine(class: "SERVICES")
    header.add("enabled", services.isEnabled)
    header.add("switch", LocationServicesSwitch.defaultPath)
    header.add("store", store.fileURL.path)
    OutputSink.standardOutput.line(header.string)
    for grant in grants { write(grant) }
  }

  private static func grant(store: FileGrantStore, words: [String], reduced: Bool) throws {
    let values = try ParsedArguments.require(words, ["<client>", "<level>"])
    guard !values[0].isEmpty else { throw CommandError.usage("The client id is empty.") }
    guard let level = GrantLevel(parsing: values[1]) else {
      throw CommandError.usage(
        "Unknown level '\(values[1])': expected never, whenInUse or always.")
    }
    let grant = Grant(
      clientID: values[0], level: level, accuracy: reduced ? .reduced : .full, grantedAt: Date())
    try store.save(grant)
    write(grant)
  }

  private static func request(store: FileGrantStore, client: String, always: Bool) async throws {
    let center = AuthorizationCenter(store: store, agent: DefaultAuthorizationAgent.make())
    _ = try store.grant(for: client)
    let state = await center.request(always ? .always : .whenInUse, for: client)
    write(state, client: client)
  }

  private static func write(_ grant: Grant) {
    var line = JSONLine(class: "GRANT")
    line.add("client", grant.clientID)
    line.add("level", grant.level.rawValue)
    line.add("accuracy", grant.accuracy.rawValue)
    line.add("grantedAt", grant.grantedAt)
    OutputSink.standardOutput.line(line.string)
  }

  private static func write(_ state: AuthorizationState, client: String) {
    var line = JSONLine(class: "AUTHORIZATION")
    line.add("client", client)
    line.add("status", state.status.rawValue)
    line.add("accuracy", state.accuracy.rawValue)
    OutputSink.standardOutput.line(line.string)
  }
}
