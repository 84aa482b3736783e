import WaymarkCore

/// Why a ``Monitor`` could not be opened, read or saved.
public enum MonitorError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The name cannot name a monitor: the name and why (empty, too long, a `/`, a `..`, a
  /// leading dot or a control character).
  case invalidName(String, reason: String)
  /// Another monitor of this name is open, in this process or another.
  case inUse(String)
  /// The monitor's file exists but could not be read.
  case unreadable(path: String, reason: String)
  /// The monitor's file is not a valid monitor file.
  case corrupt(path: String, reason: String)
  /// The monitor's directory or file could not be written.
  case unwritable(path: String, reason: String)
  /// A monitor held by waymarkd: the daemon cannot be reached, has gone, or refused the
  /// monitor (no `always` grant with full accuracy, a bound passed); its message.
  case daemon(String)

  /// The error for a person; outside text (the name, a path) escaped for a terminal or a log.
  public var description: String {
    switch self {
    case .invalidName(let name, let reason):
      "\"\(LogText.escaped(name))\" cannot name a monitor: \(reason)"
    case .inUse(let name):
      "the monitor \"\(LogText.escaped(name))\" is already open"
    case .unreadable(let path, let reason):
      "cannot read \(LogText.escaped(path)): \(reason)"
    case .corrupt(let path, let reason):
      "\(LogText.escaped(path)) is not a valid monitor file: \(reason)"
    case .unwritable(let path, let reason):
      "cannot write \(LogText.escaped(path)): \(reason)"
    case .daemon(let message):
      "waymarkd: \(LogText.escaped(message))"
    }
  }
}
