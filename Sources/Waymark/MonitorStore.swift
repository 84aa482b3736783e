import FoundationEssentials
import Glibc
import WaymarkCore

/// Where a ``Monitor`` keeps its conditions and records: one JSON file per monitor,
/// `<name>.json`, in a directory of mode 0700 (by default `monitors/` in the ``StateDirectory``,
/// that is `$XDG_STATE_HOME/waymark/monitors`, else `~/.local/state/waymark/monitors`).
///
/// The file (mode 0600) is replaced atomically: written in full to a temporary file, flushed to
/// the disk, renamed over the old one, and the directory flushed, so a crash leaves the old or
/// the new contents, never a mix. While a monitor is open its store holds an exclusive
/// `flock(2)` on `<name>.lock`, so a second monitor of the same name, in this process or
/// another, is refused instead of overwriting the first one's records.
final class MonitorStore: Sendable {
  /// The longest name accepted, in UTF-8 bytes (a file name holds 255).
  static let maximumNameBytes = 200

  /// The monitor's name.
  let name: String
  /// The directory of the monitors' files.
  let directory: URL
  /// The monitor's file.
  var fileURL: URL { directory.appendingPathComponent("\(name).json") }
  private var temporaryURL: URL { directory.appendingPathComponent(".\(name).json.new") }
  private var lockURL: URL { directory.appendingPathComponent("\(name).lock") }
  /// The descriptor holding the lock; -1 once closed.
  private let lock = Locked<Int32>(-1)

  /// The default directory: `monitors` in the state directory of `environment`.
  static func defaultDirectory(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> URL {
    StateDirectory.resolve(environment: environment).appendingPathComponent("monitors")
  }

  /// Why `name` cannot name a monitor; `nil` when it can.
  static func problem(with name: String) -> String? {
    if name.isEmpty { return "it is empty" }
    if name.utf8.count > maximumNameBytes {
      return "it is longer than \(maximumNameBytes) bytes"
    }
    if name.contains("/") { return "it contains a /" }
    if name.contains("..") { return "it contains .." }
    if name.hasPrefix(".") { return "it starts with a dot" }
    if name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) {
      return "it contains a control character"
    }
    return nil
  }

  /// Opens the store of the monitor `name` in `directory` (created with mode 0700 if absent)
  /// and takes its lock.
  ///
  /// - Throws: ``MonitorError/invalidName(_:reason:)``, ``MonitorError/inUse(_:)`` or
  ///   ``MonitorError/unwritable(path:reason:)``.
  init(name: String, directory: URL) throws(MonitorError) {
    if let problem = Self.problem(with: name) { throw .invalidName(name, reason: problem) }
    self.name = name
    self.directory = directory
    do {
      try FileManager.default.createDirectory(
        at: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw .unwritable(path: directory.path, reason: String(describing: error))
    }
    let path = lockURL.path
    let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else { throw .unwritable(path: path, reason: Self.lastError()) }
    while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
      let code = errno
      guard code == EINTR else {
        close(descriptor)
        if code == EWOULDBLOCK { throw .inUse(name) }
        throw .unwritable(path: path, reason: String(cString: strerror(code)))
      }
    }
    lock.withLock { $0 = descriptor }
  }

  deinit { release() }

  /// Releases the lock; later calls do nothing.
  func release() {
    let descriptor = lock.withLock { descriptor in
      defer { descriptor = -1 }
      return descriptor
    }
    if descriptor >= 0 { close(descriptor) }
  }

  /// The saved state; `nil` when the monitor has never been saved.
  ///
  /// - Throws: ``MonitorError/unreadable(path:reason:)`` or ``MonitorError/corrupt(path:reason:)``.
  func load() throws(MonitorError) -> MonitorState.Saved? {
    let path = fileURL.path
    guard FileManager.default.fileExists(atPath: path) else { return nil }
    let data: Data
    do {
      data = try Data(contentsOf: fileURL)
    } catch {
      throw .unreadable(path: path, reason: String(describing: error))
    }
    let file: JSONObjectReader
    do {
      file = try JSONObjectReader(parsing: Array(data))
    } catch {
      throw .corrupt(path: path, reason: error.description)
    }
    // A version this code does not know may have another shape: say so first.
    if let version = try? file.integer("version"), version != MonitorState.version {
      throw .corrupt(path: path, reason: "unknown version \(version)")
    }
    do {
      return try MonitorState.Saved(json: file)
    } catch {
      throw .corrupt(path: path, reason: error.description)
    }
  }

  /// Replaces the saved state with `saved`, atomically.
  ///
  /// - Throws: ``MonitorError/unwritable(path:reason:)``.
  func save(_ saved: MonitorState.Saved) throws(MonitorError) {
    let json = saved.json
    guard !json.hasNonFiniteNumber else {
      throw .unwritable(path: fileURL.path, reason: "cannot encode: a number is not finite")
    }
    var data: [UInt8] = []
    json.write(to: &data)
    let temporary = temporaryURL.path
    unlink(temporary)
    let descriptor = open(
      temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
    guard descriptor >= 0 else { throw .unwritable(path: temporary, reason: Self.lastError()) }
    var written = 0
    var failure: String?
    data.withUnsafeBytes { bytes in
      while written < bytes.count {
        let count = write(descriptor, bytes.baseAddress! + written, bytes.count - written)
        if count < 0 {
          if errno == EINTR { continue }
          failure = Self.lastError()
          return
        }
        written += count
      }
    }
    if failure == nil, fsync(descriptor) != 0 { failure = Self.lastError() }
    close(descriptor)
    if let failure {
      unlink(temporary)
      throw .unwritable(path: temporary, reason: failure)
    }
    guard rename(temporary, fileURL.path) == 0 else {
      let reason = Self.lastError()
      unlink(temporary)
      throw .unwritable(path: fileURL.path, reason: reason)
    }
    let directoryDescriptor = open(directory.path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
    if directoryDescriptor >= 0 {
      fsync(directoryDescriptor)
      close(directoryDescriptor)
    }
  }

  private static func lastError() -> String { String(cString: strerror(errno)) }
}
