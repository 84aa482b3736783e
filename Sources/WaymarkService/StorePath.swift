import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// Where the store lives, and opening it for a command.
public enum StorePath {
  /// The store file to use: `option` (from `--store`) when given, else `$WAYMARK_STORE`, else
  /// `$STATE_DIRECTORY/waymark.db` (systemd's `StateDirectory=`), else
  /// `$XDG_STATE_HOME/waymark/waymark.db`, else `~/.local/state/waymark/waymark.db`.
  ///
  /// Empty variables count as unset. The daemon's default
  /// (``DaemonConfiguration/defaultStorePath(environment:)``) looks only at `$STATE_DIRECTORY`.
  public static func resolve(
    option: String? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String {
    func variable(_ name: String) -> String? {
      guard let value = environment[name], !value.isEmpty else { return nil }
      return value
    }
    if let option, !option.isEmpty { return option }
    if let path = variable("WAYMARK_STORE") { return path }
    if let directory = StateDirectory.systemd(environment: environment) {
      return PathText.join(directory, "waymark.db")
    }
    if let directory = variable("XDG_STATE_HOME") {
      return PathText.join(directory, "waymark/waymark.db")
    }
    let home = HomeDirectory.resolve(environment: environment)
    return PathText.join(home, ".local/state/waymark/waymark.db")
  }

  /// Opens the store at `path` for a command.
  ///
  /// - Parameters:
  ///   - path: the database file.
  ///   - create: create the file (and its directory) when missing; otherwise a missing file is
  ///     an error with exit code 66.
  /// - Throws: ``CommandError`` with the exit code for the failure (see ``commandError(_:)``).
  public static func open(_ path: String, create: Bool) throws(CommandError) -> Database {
    let exists = FileManager.default.fileExists(atPath: path)
    if !exists {
      guard create else {
        throw CommandError("no store at \(path) (import or add places first)", code: .noInput)
      }
      let directory = PathText.parent(of: path)
      if !directory.isEmpty {
        do {
          try FileManager.default.createDirectory(
            atPath: directory, withIntermediateDirectories: true)
        } catch {
          throw CommandError("cannot create directory \(directory) for the store", code: .ioError)
        }
      }
    }
    do {
      return try Database(path: path, createIfMissing: create)
    } catch {
      throw commandError(error)
    }
  }

  /// Maps a store failure to a command error and exit code: a newer schema or a file that is not
  /// a database is bad data (65), a file that cannot be opened is 66, I/O, disk full and
  /// read-only failures are 74, a lock held too long is 69, anything else is 70.
  public static func commandError(_ error: any Error) -> CommandError {
    if let error = error as? CommandError { return error }
    guard let error = error as? StoreError else {
      return CommandError("\(error)", code: .software)
    }
    let code: ExitCode
    switch error.kind {
    case .newerSchema, .corruptRow: code = .dataError
    case .notFound: code = .dataError
    case .sqlite:
      switch error.resultCode ?? 0 {
      case 26, 11: code = .dataError  // SQLITE_NOTADB, SQLITE_CORRUPT
      case 14: code = .noInput  // SQLITE_CANTOPEN
      case 8, 10, 13: code = .ioError  // SQLITE_READONLY, SQLITE_IOERR, SQLITE_FULL
      case 5, 6: code = .unavailable  // SQLITE_BUSY, SQLITE_LOCKED
      default: code = .software
      }
    }
    return CommandError("store: \(error)", code: code)
  }
}
