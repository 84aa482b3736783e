import WaymarkProcess

/// `waymarkd`: follows gpsd, monitors the places of the store, records visits, runs hooks, and
/// talks to systemd (readiness, status, watchdog).
///
/// Its command line is declared here, beside its configuration, so that `waymark` renders
/// `waymarkd(8)` without linking the daemon; `main` (module `WaymarkDaemon`) runs it.
package enum WaymarkDaemon {
  /// The usage line.
  package static let usage = "USAGE: waymarkd [--config <file>]"

  /// The daemon's options, declared once: its parser, ``help`` and `waymarkd(8)` read them.
  package static let options = OptionTable(
    column: 20,
    [
      .value(
        "--config", "<file>", default: DaemonConfiguration.defaultPath,
        """
        Configuration file (default /etc/waymark/waymark.conf; a missing
        default file means all defaults).
        """),
      .flag("--version", "Print the release and exit."),
    ])

  /// The help text, printed by `--help`.
  package static let help = """
    USAGE: waymarkd [--config <file>]

    The Waymark daemon: follows gpsd, watches the places in the store, records arrivals,
    departures and visits, and runs hook commands. Meant to run under systemd
    (waymarkd.service); logs go to standard error with <N> priority prefixes.

    OPTIONS:
    \(options.listing)
    SIGNALS:
      SIGTERM, SIGINT   Stop cleanly; open visits stay open and resume at the next start.
      SIGHUP            Reload the configuration and the places, re-check the grant.

    The client id (default 'waymarkd') needs an 'always' grant with full accuracy:
      waymark auth grant waymarkd always --store /var/lib/waymark/waymark.db

    With 'socket = <path>' (under systemd: $RUNTIME_DIRECTORY/waymark.sock), other processes
    get locations from the daemon over that Unix socket, under the grants of the store.

    EXIT CODES: 0 stopped, 64 usage, 65 the store is not a database or has a newer
    schema, 66 it cannot be opened, 69 it is locked, 74 an I/O error, a full disk or a
    read-only store (file, directory or file system), 78 configuration.

    """
}
