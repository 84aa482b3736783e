import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkIdentify

/// Who is at the other end of a Unix socket, as the kernel says: `SO_PEERCRED`'s uid and pid,
/// and the real path of the process's executable (`/proc/<pid>/exe`).
///
/// The identity is written `<user>:<exe>` (the user name, or the uid when it has none), which is
/// also the client id that grants are recorded under.
///
/// **What it proves.** The uid is the kernel's record of the process that called `connect()`:
/// it cannot be forged. The executable is the binary the kernel mapped for that process.
/// The process is held by a pidfd taken from the socket itself (`SO_PEERPIDFD`, Linux 6.5 and
/// later; before that `pidfd_open(2)` of the `SO_PEERCRED` pid), which must still be alive after
/// the executable was read, so the pid cannot have been given to another process meanwhile; and
/// the process's start time (`/proc/<pid>/stat`, field 22) must be the same before and after the
/// read and not later than the moment the connection was accepted (which catches a pid reused
/// before `pidfd_open`). A peer that fails either check is refused.
///
/// **Who reads /proc.** Another user's `/proc/<pid>/exe` takes `CAP_SYS_PTRACE`, which waymarkd
/// does not hold: when the environment names `waymark-identify`'s socket
/// (`WAYMARK_IDENTIFY=/run/waymark-identify.sock`, set by the unit), the pidfd is handed to that
/// helper, which holds the capability and answers with the pid, start time and executable. When
/// the helper cannot be asked, `/proc` is read here, which works for peers of waymarkd's own
/// user, and for every peer when waymarkd runs as root or holds the capability (by hand, tests).
///
/// **What it does not prove.** For an interpreter the executable is the interpreter: a Python
/// script is `/usr/bin/python3.11`, so a grant to it covers every Python program of that user.
/// A process can pass its connected socket to another process (`SCM_RIGHTS`) or `exec` another
/// program after connecting; the identity is that of the process that connected, as it was then.
package struct PeerIdentity: Sendable, Hashable {
  /// The peer's user id.
  package var uid: uid_t
  /// The peer's process id at connect time.
  package var pid: pid_t
  /// The user's name, or the uid in decimal when it has none.
  package var user: String
  /// The real path of the peer's executable.
  package var executable: String
  /// The process's start time in clock ticks after boot (`/proc/<pid>/stat`, field 22), when
  /// known: with the pid it names the process and no later one (polkit's subject is written
  /// `pid,start-time,uid`).
  package var startTime: UInt64?

  /// Creates an identity from its parts.
  package init(
    uid: uid_t, pid: pid_t, user: String, executable: String, startTime: UInt64? = nil
  ) {
    self.uid = uid
    self.pid = pid
    self.user = user
    self.executable = executable
    self.startTime = startTime
  }

  /// `<user>:<exe>`, the client id grants are recorded under.
  package var clientID: String { "\(user):\(executable)" }

  /// Why a peer could not be identified.
  package struct Failure: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package var description: String
  }

  /// The helper named by `WAYMARK_IDENTIFY`, or `nil`: then `/proc` is read here.
  static let helper: IdentifyConnection? = {
    guard let path = getenv("WAYMARK_IDENTIFY"), path.pointee != 0 else { return nil }
    return IdentifyConnection(path: String(cString: path))
  }()

  /// Reads the identity of the peer of the connected socket `descriptor`.
  ///
  /// - Throws: ``Failure`` when the kernel does not say who the peer is, its executable cannot
  ///   be read (it exited, or neither this process nor the helper may read it), or its pid was
  ///   reused meanwhile.
  package static func of(socket descriptor: Int32) throws(Failure) -> PeerIdentity {
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
    let acceptedAt = ProcFS.bootTimeTicks()
    var pidfd = peerPIDFileDescriptor(socket: descriptor)
    if pidfd < 0 { pidfd = ProcFS.openPIDFD(pid) }
    defer { if pidfd >= 0 { close(pidfd) } }
    let process: PeerProcess
    do {
      process = try read(pid: pid, pidfd: pidfd)
    } catch {
      throw Failure(description: error.description)
    }
    guard process.pid == pid, acceptedAt.map({ process.startTime <= $0 }) ?? true else {
      throw Failure(description: "process \(pid) exited while it was identified")
    }
    return PeerIdentity(
      uid: uid, pid: pid, user: userName(uid), executable: process.executable,
      startTime: process.startTime)
  }

  /// Process `pid` (held by `pidfd` when it is not -1), through the helper when there is one,
  /// else (or when it cannot be asked) through `/proc` here.
  private static func read(pid: pid_t, pidfd: Int32) throws(IdentifyFailure) -> PeerProcess {
    var helperFailure: IdentifyFailure?
    if let helper, pidfd >= 0 {
      do {
        return try helper.identify(.pidfd, pidfd)
      } catch {
        helperFailure = error
      }
    }
    do throws(IdentifyFailure) {
      if pidfd >= 0 { return try ProcFS.process(pidfd: pidfd) }
      // No pidfd (a kernel before 5.3): the start time alone guards the pid.
      guard let start = ProcFS.startTime(of: pid), let executable = ProcFS.executablePath(of: pid),
        ProcFS.startTime(of: pid) == start
      else {
        throw IdentifyFailure("cannot read /proc/\(pid) (\(String(cString: strerror(errno))))")
      }
      return PeerProcess(uid: 0, pid: pid, startTime: start, executable: executable)
    } catch {
      guard let helperFailure else { throw error }
      throw IdentifyFailure("waymark-identify: \(helperFailure); here: \(error)")
    }
  }

  /// The name of user `uid`, or `uid` in decimal.
  package static func userName(_ uid: uid_t) -> String {
    var entry = passwd()
    var result: UnsafeMutablePointer<passwd>?
    var buffer = [CChar](repeating: 0, count: 4096)
    let status = getpwuid_r(uid, &entry, &buffer, buffer.count, &result)
    guard status == 0, result != nil, let name = entry.pw_name else { return String(uid) }
    return String(cString: name)
  }

  /// The real path of process `pid`'s executable (``ProcFS/executablePath(of:)``).
  static func executablePath(of pid: pid_t) -> String? { ProcFS.executablePath(of: pid) }

  /// Field 22 of `/proc/<pid>/stat` (``ProcFS/startTime(of:)``).
  static func startTime(of pid: pid_t) -> UInt64? { ProcFS.startTime(of: pid) }

  /// `SO_PEERPIDFD` (77; Linux 6.5): a pidfd of the peer, or -1 when the kernel has none.
  static func peerPIDFileDescriptor(socket descriptor: Int32) -> Int32 {
    var pidfd: Int32 = -1
    var length = socklen_t(MemoryLayout<Int32>.size)
    guard getsockopt(descriptor, SOL_SOCKET, 77, &pidfd, &length) == 0 else { return -1 }
    return pidfd
  }
}
