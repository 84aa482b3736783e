#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

/// One process as the kernel describes it: its user, pid, start time and executable.
///
/// What ``ProcFS`` reads for a peer of waymarkd, and what the `waymark-identify` helper sends
/// back for each question (see ``IdentifyRequest``).
package struct PeerProcess: Sendable {
  /// The user id: the real uid of the process (from a pidfd), or the owner of the socket (for a
  /// loopback TCP connection, from its row in `/proc/<pid>/net/tcp`).
  package var uid: uid_t
  /// The process id, in the pid namespace of the reader's `/proc`.
  package var pid: pid_t
  /// The start time in clock ticks after boot (`/proc/<pid>/stat`, field 22): with the pid it
  /// names this process and no later one.
  package var startTime: UInt64
  /// The real path of the executable, without the kernel's " (deleted)" suffix.
  package var executable: String

  /// Creates a description from its parts.
  package init(uid: uid_t, pid: pid_t, startTime: UInt64, executable: String) {
    self.uid = uid
    self.pid = pid
    self.startTime = startTime
    self.executable = executable
  }
}

#if !hasFeature(Embedded)
  // The package compares peers; waymark-identify only sends them, and links none of the
  // Unicode tables that a String's == and hash take.
  extension PeerProcess: Hashable {}
#endif
