import FoundationEssentials
import Glibc
import WaymarkCore

/// Who is at the other end of a Unix socket, as the kernel says: `SO_PEERCRED`'s uid and pid,
/// and the real path of the process's executable (`/proc/<pid>/exe`).
///
/// The identity is written `<user>:<exe>` (the user name, or the uid when it has none), which is
/// also the client id that grants are recorded under.
///
/// **What it proves.** The uid is the kernel's record of the process that called `connect()`:
/// it cannot be forged. The executable is the binary the kernel mapped for that process.
/// Between reading the pid and reading `/proc/<pid>/exe`, the peer may exit and its pid be given
/// to another process; this is guarded against twice: with a pidfd of the peer taken from the
/// socket itself (`SO_PEERPIDFD`, Linux 6.5 and later), which must still be alive after the
/// read, and with the process's start time (`/proc/<pid>/stat`, field 22), which must be the
/// same before and after the read and not later than the moment the connection was accepted.
/// A peer that fails either check is refused.
///
/// **What it does not prove.** For an interpreter the executable is the interpreter: a Python
/// script is `/usr/bin/python3.11`, so a grant to it covers every Python program of that user.
/// A process can pass its connected socket to another process (`SCM_RIGHTS`) or `exec` another
/// program after connecting; the identity is that of the process that connected, as it was then.
public struct PeerIdentity: Sendable, Hashable {
  /// The peer's user id.
  public var uid: uid_t
  /// The peer's process id at connect time.
  public var pid: pid_t
  /// The user's name, or the uid in decimal when it has none.
  public var user: String
  /// The real path of the peer's executable.
  public var executable: String
  /// The process's start time in clock ticks after boot (`/proc/<pid>/stat`, field 22), when
  /// known: with the pid it names the process and no later one (polkit's subject is written
  /// `pid,start-time,uid`).
  public var startTime: UInt64?

  /// Creates an identity from its parts.
  public init(
    uid: uid_t, pid: pid_t, user: String, executable: String, startTime: UInt64? = nil
  ) {
    self.uid = uid
    self.pid = pid
    self.user = user
    self.executable = executable
    self.startTime = startTime
  }

  /// `<user>:<exe>`, the client id grants are recorded under.
  public var clientID: String { "\(user):\(executable)" }

  /// Why a peer could not be identified.
  public struct Failure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String
  }

  /// Reads the identity of the peer of the connected socket `descriptor`.
  ///
  /// - Throws: ``Failure`` when the kernel does not say who the peer is, its executable cannot
  ///   be read (it exited, or this process may not read it), or its pid was reused meanwhile.
  public static func of(socket descriptor: Int32) throws(Failure) -> PeerIdentity {
    // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
    var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
      credentials.0 > 0
    else {
      throw Failure(description: "no peer credentials (\(String(cString: strerror(errno))))")
    }
    let pid = credentials.0
    let uid = credentials.1
    let pidfd = peerPIDFileDescriptor(socket: descriptor)
    defer { if pidfd >= 0 { close(pidfd) } }
    let acceptedAt = bootTimeTicks()
    guard let startBefore = startTime(of: pid) else {
      // ENOENT/ESRCH: the peer exited. Anything else (EMFILE: out of descriptors) is ours.
      let reason = errno
      guard reason == ENOENT || reason == ESRCH else {
        throw Failure(
          description: "cannot read /proc/\(pid)/stat (\(String(cString: strerror(reason))))")
      }
      throw Failure(description: "process \(pid) is gone")
    }
    guard let executable = executablePath(of: pid) else {
      throw Failure(
        description: "cannot read /proc/\(pid)/exe (\(String(cString: strerror(errno))))")
    }
    guard startTime(of: pid) == startBefore, acceptedAt.map({ startBefore <= $0 }) ?? true,
      pidfd < 0 || isAlive(pidfd: pidfd)
    else {
      throw Failure(description: "process \(pid) exited while it was identified")
    }
    return PeerIdentity(
      uid: uid, pid: pid, user: userName(uid), executable: executable, startTime: startBefore)
  }

  /// The name of user `uid`, or `uid` in decimal.
  public static func userName(_ uid: uid_t) -> String {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
    guard status == 0, result != nil, let name = entry.pw_name else { return String(uid) }
    return String(cString: name)
  }

  /// The real path of process `pid`'s executable, without the kernel's " (deleted)" suffix.
  static func executablePath(of pid: pid_t) -> String? {
    var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
    let count = readlink("/proc/\(pid)/exe", &buffer, buffer.count - 1)
    guard count > 0 else { return nil }
    var path = String(decoding: buffer[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    if path.hasSuffix(" (deleted)") { path = String(path.dropLast(" (deleted)".count)) }
    return path
  }

  /// Field 22 of `/proc/<pid>/stat`: the start time in clock ticks after boot.
  static func startTime(of pid: pid_t) -> UInt64? {
    let descriptor = open("/proc/\(pid)/stat", O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var buffer = [UInt8](repeating: 0, count: 1024)
    let count = read(descriptor, &buffer, buffer.count)
    guard count > 0 else { return nil }
    // The command name (field 2) is in parentheses and may contain spaces: start after the
    // last ')'. Then field 3 is the first word.
    let bytes = buffer[..<count]
    guard let close = bytes.lastIndex(of: UInt8(ascii: ")")) else { return nil }
    let fields = bytes[(close + 1)...].split(separator: UInt8(ascii: " "))
    guard fields.count > 19 else { return nil }
    return UInt64(String(decoding: fields[19], as: UTF8.self))
  }

  /// Now, in clock ticks after boot (the unit of ``startTime(of:)``).
  static func bootTimeTicks() -> UInt64? {
    var now = timespec()
    guard clock_gettime(CLOCK_BOOTTIME, &now) == 0 else { return nil }
    let ticks = UInt64(sysconf(Int32(_SC_CLK_TCK)))
    return UInt64(now.tv_sec) * ticks + UInt64(now.tv_nsec) * ticks / 1_000_000_000 + 1
  }

  /// `SO_PEERPIDFD` (77; Linux 6.5): a pidfd of the peer, or -1 when the kernel has none.
  static func peerPIDFileDescriptor(socket descriptor: Int32) -> Int32 {
    var pidfd: Int32 = -1
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(descriptor, SOL_SOCKET, 77, &pidfd, &length) == 0 else { return -1 }
    return pidfd
  }

  /// A pidfd polls readable once its process has exited.
  static func isAlive(pidfd: Int32) -> Bool {
    var entry = pollfd(fd: pidfd, events: Int16(POLLIN), revents: 0)
    return poll(&entry, 1, 0) == 0
  }
}
