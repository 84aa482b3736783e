import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore
import WaymarkStore

/// `waymark auth`: shows and changes which clients may receive locations.
enum AuthCommand: Command {
  static let name = "auth"
  static let summary = "Show and change location authorization grants."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .store(
        """
        The daemon's store (default: $WAYMARK_STORE, else
        $STATE_DIRECTORY/waymark.db, else $XDG_STATE_HOME/waymark/waymark.db,
        else ~/.local/state/waymark/waymark.db; the system daemon's is
        /var/lib/waymark/waymark.db). Only root, the store's owner and members
        of group 'waymark' may change its grants (exit 77 otherwise).
        """),
      .value(
        "--state-dir", "<dir>",
        """
        Instead of the store: grants.json in <dir>, the file that applications
        reading gpsd directly (not through waymarkd) consult in-process.
        """),
      .reduced(nil),
      .flag("--always", nil),
    ])

  static let help = """
    USAGE: waymark auth <subcommand> [--store <db> | --state-dir <dir>]

    Shows and changes the per-client location grants. waymarkd enforces the grants of its
    store for every process that reads its socket; there a client is written <user>:<exe>,
    for example alice:/usr/bin/gnome-maps (the user, a colon, the real path of the program).

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
    \(options.listing)
    Location services are disabled system-wide (every client restricted) while the file
    /etc/waymark/disabled exists.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard let subcommand = parsed.positionals.first else {
      throw CommandError.usage("Missing subcommand (status, grant, revoke, reset, request).")
    }
    if parsed.value("--state-dir") != nil && parsed.value("--store") != nil {
      throw CommandError.usage("Give either '--store' or '--state-dir', not both.")
    }
    let changes = ["grant", "revoke", "reset", "request"].contains(subcommand)
    let store: any GrantStore
    let location: String
    if let directory = parsed.value("--state-dir") {
      let file = FileGrantStore(directory: URL(fileURLWithPath: directory))
      (store, location) = (file, file.fileURL.path)
    } else {
      let path = StorePath.resolve(option: parsed.value("--store"))
      if changes { try GrantPermission.check(storePath: path) }
      (store, location) = (
        DatabaseGrantStore(database: try StorePath.open(path, create: changes, personal: true)),
        path
      )
    }
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
        try status(store: store, location: location, client: try optionalClient(words))
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
    } catch let error as StoreError {
      throw StorePath.commandError(error)
    }
    return .ok
  }

  private static func optionalClient(_ words: [String]) throws -> String? {
    if words.count > 1 { throw CommandError.usage("Unexpected argument '\(words[1])'.") }
    return words.first
  }

  private static func status(store: any GrantStore, location: String, client: String?) throws {
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
    header.add("store", location)
    OutputSink.standardOutput.line(header.string)
    for grant in grants { write(grant) }
  }

  private static func grant(store: any GrantStore, words: [String], reduced: Bool) throws {
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

  private static func request(store: any GrantStore, client: String, always: Bool) async throws {
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

/// Who may change the grants of a store: root, the file's owner, and members of group `waymark`
/// (the daemon's group). File permissions enforce the same; this check gives the
/// clear message first.
enum GrantPermission {
  static func check(storePath path: String, group: String = "waymark") throws {
    let uid = getuid()
    if uid == 0 { return }
    var status = stat()
    // No store yet: the caller creates its own. Its own store: its own grants.
    guard stat(path, &status) == 0, status.st_uid != uid else { return }
    if let entry = getgrnam(group) {
      let gid = entry.pointee.gr_gid
      if getegid() == gid { return }
      let count = getgroups(0, nil)
      var groups = [gid_t](repeating: 0, count: Int(max(count, 0)))
      if count > 0, getgroups(count, &groups) >= 0, groups.contains(gid) { return }
    }
    throw CommandError(
      "only root, the owner of \(path) and members of group '\(group)' may change its grants",
      code: .noPermission)
  }
}
