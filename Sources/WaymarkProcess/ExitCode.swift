/// Process exit codes, from BSD's `sysexits.h`.
package enum ExitCode: Int32, Sendable {
  /// Success.
  case ok = 0
  /// Generic failure that fits no other code.
  case failure = 1
  /// The command line was wrong: unknown option, missing argument.
  case usage = 64
  /// The input data was wrong: a bad NMEA line under `--strict`, a bad place file.
  case dataError = 65
  /// An input file could not be opened.
  case noInput = 66
  /// A service (gpsd) is not available.
  case unavailable = 69
  /// An internal error.
  case software = 70
  /// An input/output error while reading or writing.
  case ioError = 74
  /// Not allowed: changing grants without being root or in group `waymark`.
  case noPermission = 77
  /// The configuration is wrong.
  case config = 78
}

/// An error that ends a command with a message on stderr and an exit code.
package struct CommandError: Error, Sendable {
  /// What went wrong, for a person.
  package var message: String
  /// The process exit code.
  package var code: ExitCode
  /// Whether to print the command's usage after the message (for usage errors).
  package var showsUsage: Bool

  /// Creates an error.
  package init(_ message: String, code: ExitCode, showsUsage: Bool = false) {
    self.message = message
    self.code = code
    self.showsUsage = showsUsage
  }

  /// A usage error (exit 64), printed with the command's usage.
  package static func usage(_ message: String) -> CommandError {
    CommandError(message, code: .usage, showsUsage: true)
  }
}
