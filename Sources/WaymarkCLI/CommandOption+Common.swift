import WaymarkClient
import WaymarkProcess

/// Options that several commands share, declared once for all of them.
extension CommandOption {
  /// `--store <db>`: the store of a command that reads or writes it (``StorePath`` resolves it
  /// when the option is not given).
  static let store = CommandOption.value(
    "--store", "<db>",
    """
    The store (default $WAYMARK_STORE, $STATE_DIRECTORY/waymark.db,
    $XDG_STATE_HOME/waymark/waymark.db, ~/.local/state/waymark/waymark.db).
    """)

  /// `--socket <path>`: waymarkd's location socket.
  static let socket = CommandOption.value(
    "--socket", "<path>", default: BrokerConnection.defaultPath,
    "waymarkd's socket (default /run/waymark/waymark.sock).")
}

/// Options that several commands declare with help of their own: the name, the placeholder
/// and (where there is one) the default are written here once.
extension CommandOption {
  /// `--store <db>`, with what the command does with the store.
  static func store(_ help: String) -> CommandOption { .value("--store", "<db>", help) }

  /// `--socket <path>` (default waymarkd's socket), with what the command asks there.
  static func socket(_ help: String) -> CommandOption {
    .value("--socket", "<path>", default: BrokerConnection.defaultPath, help)
  }

  /// A time bound such as `--since <time>`: ISO 8601 UTC or a date, read by
  /// `VisitsCommand.time(_:_:)`.
  static func time(_ name: String, _ help: String) -> CommandOption {
    .value(name, "<time>", help)
  }

  /// `--format <format>`: the output format, `nil` for one chosen otherwise.
  static func format(default value: String? = nil, _ help: String) -> CommandOption {
    .value("--format", "<format>", default: value, help)
  }

  /// `--json`: NDJSON output instead of text.
  static func json(_ help: String?) -> CommandOption { .flag("--json", help) }

  /// `--reduced`: approximate locations only.
  static func reduced(_ help: String?) -> CommandOption { .flag("--reduced", help) }

  /// `--place <id>`: one place of the store, by id.
  static func place(_ help: String) -> CommandOption { .value("--place", "<id>", help) }
}
