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
