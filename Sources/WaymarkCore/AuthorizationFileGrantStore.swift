import FoundationEssentials
import Glibc

/// Where Waymark keeps its state: the first of `$STATE_DIRECTORY` (set by systemd's
/// `StateDirectory=`; the daemon uses `/var/lib/waymark`), `$XDG_STATE_HOME/waymark`, and
/// `~/.local/state/waymark`.
public enum StateDirectory {
  /// Resolves the state directory from `environment`.
  ///
  /// `$STATE_DIRECTORY` may hold several colon-separated paths (systemd); the first is used.
  public static func resolve(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> URL {
    if let directory = systemd(environment: environment) {
      return URL(fileURLWithPath: directory, isDirectory: true)
    }
    if let value = environment["XDG_STATE_HOME"], value.hasPrefix("/") {
      return URL(fileURLWithPath: value, isDirectory: true).appendingPathComponent("waymark")
    }
    let home = HomeDirectory.resolve(environment: environment)
    return URL(fileURLWithPath: home, isDirectory: true)
      .appendingPathComponent(".local/state/waymark")
  }

  /// The directory systemd's `StateDirectory=` gave the service: the first of the
  /// colon-separated paths in `$STATE_DIRECTORY`; `nil` when it is unset or empty.
  public static func systemd(environment: [String: String]) -> String? {
    guard let value = environment["STATE_DIRECTORY"],
      let first = value.split(separator: ":").first
    else { return nil }
    return String(first)
  }
}

/// An error reading or writing persisted grants.
public enum GrantStoreError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The grants file exists but could not be read.
  case unreadable(path: String, reason: String)
  /// The grants file is not valid: the path and what is wrong.
  case corrupt(path: String, reason: String)
  /// The grants could not be written.
  case unwritable(path: String, reason: String)

  public var description: String {
    switch self {
    case .unreadable(let path, let reason): "cannot read \(path): \(reason)"
    case .corrupt(let path, let reason): "\(path) is not a valid grants file: \(reason)"
    case .unwritable(let path, let reason): "cannot write \(path): \(reason)"
    }
  }
}

/// Grants persisted as a small JSON file, `grants.json`, in the state directory.
///
/// The file is rewritten atomically (temporary file and rename) under an exclusive `flock(2)` on
/// `grants.lock`, so concurrent `waymark auth` commands and applications never lose a change or
/// see half a file. The directory is created with mode 0700 and the file with 0600. Format:
///
/// ```json
/// {"grants":[{"accuracy":"full","client":"org.example.app","grantedAt":"2026-11-29T12:00:07.000Z",
///   "level":"whenInUse"}],"version":1}
/// ```
public final class FileGrantStore: GrantStore {
  /// The directory holding `grants.json`.
  public let directory: URL
  /// The grants file.
  public var fileURL: URL { directory.appendingPathComponent("grants.json") }
  private var lockURL: URL { directory.appendingPathComponent("grants.lock") }

  /// Creates a store in `directory` (created on the first write).
  public init(directory: URL) { self.directory = directory }

  /// A store in the resolved ``StateDirectory``.
  public static func standard(
    environment: [String: String] = ProcessInfo.processInfo.environment
  ) -> FileGrantStore {
    FileGrantStore(directory: StateDirectory.resolve(environment: environment))
  }

  public func grant(for clientID: String) throws -> Grant? {
    try read()[clientID]
  }

  public func allGrants() throws -> [Grant] {
    try read().values.sorted { $0.clientID < $1.clientID }
  }

  public func save(_ grant: Grant) throws {
    try modify { $0[grant.clientID] = grant }
  }

  @discardableResult public func removeGrant(for clientID: String) throws -> Bool {
    var removed = false
    try modify { removed = $0.removeValue(forKey: clientID) != nil }
    return removed
  }

  public func removeAll() throws {
    try modify { $0.removeAll() }
  }

  private func read() throws -> [String: Grant] {
    let path = fileURL.path
    let data: Data
    do {
      data = try Data(contentsOf: fileURL)
    } catch let error as CocoaError where error.code == .fileReadNoSuchFile {
      return [:]
    } catch {
      if !FileManager.default.fileExists(atPath: path) { return [:] }
      throw GrantStoreError.unreadable(path: path, reason: String(describing: error))
    }
    return try Self.decode(data, path: path)
  }

  /// Parses the contents of a grants file.
  ///
  /// - Parameters:
  ///   - data: the file's bytes.
  ///   - path: named in errors.
  /// - Returns: the grants by client id.
  /// - Throws: ``GrantStoreError/corrupt(path:reason:)`` naming the file and, for a bad grant,
  ///   its index (0-based) in `grants`.
  public static func decode(_ data: Data, path: String) throws(GrantStoreError)
    -> [String: Grant]
  {
    let records: [Grant?]
    do {
      let file = try JSONObjectReader(parsing: Array(data))
      let version = try file.integer("version")
      guard version == 1 else {
        throw GrantStoreError.corrupt(path: path, reason: "unknown version \(version)")
      }
      records = try file.objects("grants").map { record throws(JSONObjectReader.Mismatch) in
        try Grant.record(json: record)
      }
    } catch let error as GrantStoreError {
      throw error
    } catch {
      throw GrantStoreError.corrupt(path: path, reason: "\(error)")
    }
    var grants: [String: Grant] = [:]
    for (index, record) in records.enumerated() {
      guard let grant = record else {
        throw GrantStoreError.corrupt(path: path, reason: "grant \(index) is invalid")
      }
      grants[grant.clientID] = grant
    }
    return grants
  }

  /// The contents of a grants file holding `grants`: sorted by client id, one line of JSON with
  /// sorted keys, times to the millisecond.
  public static func encode(_ grants: some Sequence<Grant>) -> Data {
    var file = JSONLine()
    file.add(
      "grants",
      objects: grants.sorted { $0.clientID < $1.clientID }.map(\.json))
    file.add("version", 1)
    var bytes: [UInt8] = []
    file.write(to: &bytes)
    return Data(bytes)
  }

  private func modify(_ change: (inout [String: Grant]) -> Void) throws {
    try createDirectory()
    let lock = open(lockURL.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
    guard lock >= 0 else {
      throw GrantStoreError.unwritable(path: lockURL.path, reason: String(cString: strerror(errno)))
    }
    defer { close(lock) }
    while flock(lock, LOCK_EX) != 0 {
      guard errno == EINTR else {
        throw GrantStoreError.unwritable(
          path: lockURL.path, reason: String(cString: strerror(errno)))
      }
    }
    var grants = try read()
    change(&grants)
    do {
      try Self.encode(grants.values).write(to: fileURL, options: .atomic)
      try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: fileURL.path)
    } catch {
      throw GrantStoreError.unwritable(path: fileURL.path, reason: String(describing: error))
    }
  }

  private func createDirectory() throws {
    do {
      try FileManager.default.createDirectory(
        at: directory, withIntermediateDirectories: true,
        attributes: [.posixPermissions: 0o700])
    } catch {
      throw GrantStoreError.unwritable(path: directory.path, reason: String(describing: error))
    }
  }
}

/// The system-wide location services switch.
///
/// Location services are disabled for every client (status ``AuthorizationStatus/restricted``)
/// while the file `/etc/waymark/disabled` exists (`touch` it to disable, remove it to enable;
/// only root can). Tests and embedders inject their own switch.
public struct LocationServicesSwitch: Sendable {
  /// The default switch file.
  public static let defaultPath = "/etc/waymark/disabled"
  private let check: @Sendable () -> Bool

  /// A switch answering `isEnabled` from `check`.
  public init(isEnabled check: @escaping @Sendable () -> Bool) { self.check = check }

  /// Enabled unless the file at `path` exists.
  public static func file(_ path: String = defaultPath) -> LocationServicesSwitch {
    LocationServicesSwitch { !FileManager.default.fileExists(atPath: path) }
  }

  /// Always enabled.
  public static let enabled = LocationServicesSwitch { true }

  /// Always disabled.
  public static let disabled = LocationServicesSwitch { false }

  /// Whether location services are enabled system-wide now.
  public var isEnabled: Bool { check() }
}
