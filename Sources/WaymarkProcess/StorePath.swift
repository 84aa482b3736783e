import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// Where the store lives, and opening it for a command.
package enum StorePath {
  /// Who a store path is resolved for: the three resolutions differ only in where they look.
  package enum Resolution: Sendable {
    /// A command of `waymark`: `--store`, `$WAYMARK_STORE`, `$STATE_DIRECTORY/waymark.db`,
    /// `$XDG_STATE_HOME/waymark/waymark.db`, `~/.local/state/waymark/waymark.db`.
    case command
    /// `waymark status`: as ``command``, except that when nothing chose the store (no
    /// `--store`, `$WAYMARK_STORE` or `$STATE_DIRECTORY`) and the user's store does not exist,
    /// the system daemon's (``system``) when it exists.
    case status
    /// `waymarkd`'s default: `$STATE_DIRECTORY/waymark.db`, else ``system``.
    case daemon
  }

  /// The system daemon's store, where systemd's `StateDirectory=waymark` puts it.
  package static let system = "/var/lib/waymark/waymark.db"

  /// The store file to use: `option` (from `--store`) when given, else `$WAYMARK_STORE`, else
  /// `$STATE_DIRECTORY/waymark.db` (systemd's `StateDirectory=`), else
  /// `$XDG_STATE_HOME/waymark/waymark.db`, else `~/.local/state/waymark/waymark.db`; for the
  /// daemon and `waymark status`, see ``Resolution``.
  ///
  /// Empty variables count as unset; of several colon-separated `$STATE_DIRECTORY` paths, the
  /// first is used. The one resolver of the store's path.
  package static func resolve(
    option: String? = nil,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    for resolution: Resolution = .command
  ) -> String {
    func variable(_ name: String) -> String? {
      guard let value = environment[name], !value.isEmpty else { return nil }
      return value
    }
    let stateDirectory = StateDirectory.systemd(environment: environment)
    if resolution == .daemon {
      return stateDirectory.map { PathText.join($0, "waymark.db") } ?? system
    }
    if let option, !option.isEmpty { return option }
    if let path = variable("WAYMARK_STORE") { return path }
    if let stateDirectory { return PathText.join(stateDirectory, "waymark.db") }
    let personal: String
    if let directory = variable("XDG_STATE_HOME") {
      personal = PathText.join(directory, "waymark/waymark.db")
    } else {
      let home = HomeDirectory.resolve(environment: environment)
      personal = PathText.join(home, ".local/state/waymark/waymark.db")
    }
    // Nothing chose the store: status reports the system daemon's when the user has none.
    if resolution == .status, option == nil, !FileManager.default.fileExists(atPath: personal),
      FileManager.default.fileExists(atPath: system)
    {
      return system
    }
    return personal
  }

  /// Opens the store at `path` for a command.
  ///
  /// - Parameters:
  ///   - path: the database file.
  ///   - create: create the file (and its directory) when missing; otherwise a missing file is
  ///     an error with exit code 66.
  ///   A store opened with `create` is written: one SQLite can only read (its mode or owner)
  ///   is an error with exit code 74, before anything is written.
  ///   - personal: a store of one user (the `waymark` CLI's): a new file is created 0600 and
  ///     new directories 0700 (SQLite gives the `-wal` and `-shm` files the store's mode), unless
  ///     the directory is shared with its group (group-writable and not world-writable, as
  ///     waymarkd's `/var/lib/waymark` is), where the process's umask decides as for the daemon. When `false` (the daemon),
  ///     the umask decides.
  /// - Throws: ``CommandError`` with the exit code for the failure (see ``commandError(_:)``);
  ///   a store on a read-only file system, or in a directory where SQLite cannot create its
  ///   `-wal` and `-shm` files, is exit code 74 with a message that says so.
  package static func open(_ path: String, create: Bool, personal: Bool = false)
    throws(CommandError)
    -> Database
  {
    // lstat, not stat: a dangling link is not a missing store.
    var status = stat()
    if lstat(path, &status) == 0, status.st_mode & S_IFMT == S_IFLNK {
      throw CommandError(
        "store: \(path) is a symbolic link; give the store file's own path", code: .ioError)
    }
    let exists = FileManager.default.fileExists(atPath: path)
    if !exists {
      guard create else {
        throw CommandError("no store at \(path) (import or add places first)", code: .noInput)
      }
      let directory = PathText.parent(of: path)
      if !directory.isEmpty {
        do {
          try makeDirectories(directory, mode: personal ? 0o700 : 0o777)
        } catch {
          throw CommandError("cannot create directory \(directory) for the store", code: .ioError)
        }
      }
      if personal && !isGroupShared(directory.isEmpty ? "." : directory) {
        // Created here, owner-only, before SQLite sees it: SQLite opens an empty file as a new
        // database, and creates its -wal and -shm files with the database file's mode.
        let descriptor = Glibc.open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        if descriptor >= 0 { close(descriptor) }
      }
    }
    if personal { tightenDefaultStore(path) }
    let database: Database
    do {
      database = try Database(path: path, createIfMissing: create)
    } catch {
      if let error = error as? StoreError, [8, 14].contains(error.resultCode),
        let problem = writeProblem(path)
      {
        throw CommandError("store: \(path) \(problem) (\(error.message))", code: .ioError)
      }
      throw commandError(error)
    }
    if create && database.isReadOnly {
      throw CommandError(
        "store: \(path) \(writeProblem(path) ?? "is read-only") and needs to be written",
        code: .ioError)
    }
    return database
  }

  /// The directory of the default personal store (`$XDG_STATE_HOME/waymark`, else
  /// `~/.local/state/waymark`), or `nil` when `$WAYMARK_STORE` or `$STATE_DIRECTORY` decides
  /// the default instead.
  package static func personalDirectory(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> String? {
    let resolved = resolve(environment: environment)
    let directory = PathText.parent(of: resolved)
    if let state = environment["XDG_STATE_HOME"], !state.isEmpty,
      directory == PathText.join(state, "waymark")
    {
      return directory
    }
    let home = HomeDirectory.resolve(environment: environment)
    return directory == PathText.join(home, ".local/state/waymark") ? directory : nil
  }

  /// A store in ``personalDirectory(environment:)`` made by an earlier release (0644 in a 0755
  /// directory): the directory becomes 0700 and the files 0600, when this user owns them.
  private static func tightenDefaultStore(_ path: String) {
    let directory = PathText.parent(of: path)
    guard directory == personalDirectory() else { return }
    func tighten(_ file: String, to mode: mode_t) {
      var status = stat()
      guard stat(file, &status) == 0, status.st_uid == getuid(), status.st_mode & 0o077 != 0
      else { return }
      chmod(file, mode)
    }
    tighten(directory, to: 0o700)
    for suffix in ["", "-wal", "-shm"] { tighten(path + suffix, to: 0o600) }
  }

  /// Makes `path` and its missing parents, each new one with `mode` (less the umask).
  private static func makeDirectories(_ path: String, mode: mode_t) throws {
    var status = stat()
    if stat(path, &status) == 0 { return }
    let parent = PathText.parent(of: path)
    if !parent.isEmpty && parent != path { try makeDirectories(parent, mode: mode) }
    if mkdir(path, mode) != 0 && errno != EEXIST {
      throw CommandError("mkdir \(path): \(String(cString: strerror(errno)))", code: .ioError)
    }
  }

  /// Whether `directory` is shared with its group (group-writable but not world-writable), as
  /// waymarkd's state directory is; `/tmp` is not (there, a store is the user's alone).
  private static func isGroupShared(_ directory: String) -> Bool {
    var status = stat()
    guard stat(directory, &status) == 0 else { return false }
    return status.st_mode & 0o020 != 0 && status.st_mode & 0o002 == 0
  }

  /// Why the existing store at `path` cannot be written, when its file system, the file or its
  /// directory says so; `nil` otherwise.
  static func writeProblem(_ path: String) -> String? {
    let directory = PathText.parent(of: path).isEmpty ? "." : PathText.parent(of: path)
    var fileSystem = statvfs()
    if statvfs(path, &fileSystem) == 0, fileSystem.f_flag & UInt(ST_RDONLY) != 0 {
      return "is on a read-only file system"
    }
    if access(path, F_OK) == 0, access(path, W_OK) != 0 {
      return "is read-only for this user (its mode or owner)"
    }
    if access(directory, W_OK) != 0 {
      return "is in a directory this user cannot write (\(directory)), where SQLite keeps the "
        + "store's -wal and -shm files"
    }
    return nil
  }

  /// Maps a store failure to a command error and exit code: a newer schema or a file that is not
  /// a database is bad data (65), a file that cannot be opened is 66, I/O, disk full and
  /// read-only failures are 74, a lock held too long is 69, anything else is 70.
  package static func commandError(_ error: any Error) -> CommandError {
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
