import FoundationEssentials
import Glibc

/// Proof that a broker on this machine is the broker, not a local user squatting its endpoint,
/// checked before each connection (a password and positions go out as soon as the socket is
/// up), for a Unix socket (`mqtt = unix:<path>`) and for a loopback address alike.
///
/// The endpoint must be held by root, by the broker's user (`mqtt-broker-user`, by default
/// `mosquitto`, which Debian's broker runs as) or by our own user (who can read the password
/// file anyway):
/// - a **Unix socket**: the socket file (not a link) is owned by one of them, and its directory
///   too, writable by no other user or group unless sticky; once connected, the peer's
///   credentials (`SO_PEERCRED`) are checked again before anything is published;
/// - a **loopback TCP port**: every listening socket that would take the connection (the
///   address's own or a wildcard, IPv4 and IPv6, from `/proc/self/net/tcp` and `tcp6`) is owned
///   by one of them; `localhost` is resolved here, to the first loopback address whose
///   listener passes, and that literal address is what libmosquitto connects to.
///
/// What remains: over TCP, a squatter who binds the port in the instant between the check and
/// the connection (the broker having died just then) receives the CONNECT and its password. A
/// Unix socket in a directory only the broker's user can write has no such window.
struct LocalBroker: Sendable {
  /// The user the broker runs as (`mqtt-broker-user`).
  let userName: String
  /// Root, the broker's user (when it exists) and ours.
  let owners: Set<uid_t>
  /// Root's group, the broker's user's and ours: a directory they may write is still theirs.
  let groups: Set<gid_t>

  /// A check that accepts root, `userName`'s uid and ours.
  init(userName: String) {
    self.userName = userName
    // Our own user too: a process of our uid can read the password file anyway.
    var owners: Set<uid_t> = [0, getuid()]
    var groups: Set<gid_t> = [0, getgid()]
    if let entry = getpwnam(userName) {
      owners.insert(entry.pointee.pw_uid)
      groups.insert(entry.pointee.pw_gid)
    }
    self.owners = owners
    self.groups = groups
  }

  /// Where to connect for `settings` (a loopback name resolved to a literal address), or why
  /// not to.
  func target(for settings: MQTTSettings) -> Result<String, Refusal> {
    if settings.isUnixSocket { return checkSocketFile(settings.host).map { settings.host } }
    var problems: [String] = []
    for candidate in Self.candidates(for: settings.host) {
      let listeners = TCPTable.listeners(accepting: candidate, port: settings.port)
      if listeners.isEmpty {
        problems.append("nothing listens on \(candidate.text):\(settings.port)")
        continue
      }
      if let stranger = listeners.first(where: { !owners.contains($0) }) {
        problems.append("\(candidate.text):\(settings.port) is held by \(describe(stranger))")
        continue
      }
      return .success(candidate.text)
    }
    return .failure(Refusal(problems.joined(separator: "; ")))
  }

  /// After libmosquitto connected the Unix socket `socket`: why its peer is not the broker's
  /// (`SO_PEERCRED`), or `nil`.
  func checkConnected(_ socket: Int32) -> Refusal? {
    // struct ucred { pid_t pid; uid_t uid; gid_t gid; } (Glibc shows it only to _GNU_SOURCE)
    var credentials: (pid_t, uid_t, gid_t) = (0, 0, 0)
    var size = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(socket, SOL_SOCKET, SO_PEERCRED, &credentials, &size) == 0 else {
      return Refusal("cannot read the peer's credentials: \(String(cString: strerror(errno)))")
    }
    return owners.contains(credentials.1)
      ? nil : Refusal("the socket's peer is \(describe(credentials.1))")
  }

  /// Why a local broker's endpoint is not trusted.
  struct Refusal: Error, Sendable, CustomStringConvertible {
    /// What is wrong, for the log.
    let description: String
    init(_ description: String) { self.description = description }
  }

  private func checkSocketFile(_ path: String) -> Result<Void, Refusal> {
    var file = stat()
    guard lstat(path, &file) == 0 else {
      return .failure(Refusal("\(path): \(String(cString: strerror(errno)))"))
    }
    guard file.st_mode & S_IFMT == S_IFSOCK else {
      return .failure(Refusal("\(path) is not a socket"))
    }
    guard owners.contains(file.st_uid) else {
      return .failure(Refusal("\(path) is owned by \(describe(file.st_uid))"))
    }
    let directory = path.lastIndex(of: "/").map { String(path[..<$0]) } ?? "."
    var parent = stat()
    guard lstat(directory.isEmpty ? "/" : directory, &parent) == 0 else {
      return .failure(Refusal("\(directory): \(String(cString: strerror(errno)))"))
    }
    guard owners.contains(parent.st_uid) else {
      return .failure(Refusal("its directory \(directory) is owned by \(describe(parent.st_uid))"))
    }
    let othersWrite = parent.st_mode & S_IWOTH != 0
    let groupWrite = parent.st_mode & S_IWGRP != 0 && !groups.contains(parent.st_gid)
    if (othersWrite || groupWrite) && parent.st_mode & S_ISVTX == 0 {
      return .failure(
        Refusal(
          "its directory \(directory) may be written by others (a socket there can be replaced)"))
    }
    return .success(())
  }

  private func describe(_ uid: uid_t) -> String {
    let name = getpwuid(uid).map { String(cString: $0.pointee.pw_name) } ?? "uid \(uid)"
    return "\(name), not root or the broker's user \(userName)"
  }

  /// The loopback addresses to try for `host`: `localhost` (and its aliases) gives IPv4 first,
  /// then IPv6; a literal address itself.
  static func candidates(for host: String) -> [TCPTable.Address] {
    var name = host
    if name.hasPrefix("["), name.hasSuffix("]") { name = String(name.dropFirst().dropLast()) }
    if let literal = TCPTable.Address(name) { return [literal] }
    return [TCPTable.Address("127.0.0.1")!, TCPTable.Address("::1")!]
  }
}
