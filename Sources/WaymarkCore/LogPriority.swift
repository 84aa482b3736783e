/// How important a log record is: the syslog priorities (`syslog(3)`) Waymark writes, most
/// severe first. The one severity type of the daemon's log, the broker and the MQTT publisher;
/// its raw value is the `<N>` prefix journald reads.
public enum LogPriority: Int32, Sendable, Hashable, Comparable, CaseIterable {
  /// The daemon cannot go on (`err`).
  case error = 3
  /// Something is wrong but the daemon goes on.
  case warning = 4
  /// A normal but significant event: start, stop, arrival, departure.
  case notice = 5
  /// Routine information.
  case info = 6
  /// Details for debugging, including coordinates.
  case debug = 7

  /// Parses `err`/`error`, `warning`/`warn`, `notice`, `info`, `debug`, or a digit 3...7.
  public init?(name: String) {
    switch name.lowercased() {
    case "err", "error", "3": self = .error
    case "warning", "warn", "4": self = .warning
    case "notice", "5": self = .notice
    case "info", "6": self = .info
    case "debug", "7": self = .debug
    default: return nil
    }
  }

  public static func < (lhs: LogPriority, rhs: LogPriority) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}
