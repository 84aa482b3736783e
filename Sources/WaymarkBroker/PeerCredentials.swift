import Glibc

/// What the kernel says about a Unix socket's peer at accept: `SO_PEERCRED`'s pid, uid and gid
/// and `SO_PEERGROUPS`' supplementary groups, as they were when the peer connected. Read before
/// the peer is identified (cheap, no /proc): enough for the per-user quota, and for the proof
/// that an agent may decide for a person (root, or a member of group `waymark`) — the daemon
/// cannot read other users' /proc under its unit.
struct PeerCredentials: Sendable, Hashable {
  /// The peer's process id when it connected.
  var pid: pid_t
  /// Its user id.
  var uid: uid_t
  /// Its group id.
  var gid: gid_t
  /// Its supplementary groups.
  var groups: [gid_t]

  /// The credentials of the peer of `descriptor`, or `nil` when the kernel gives none.
  ///
  /// Wraps `getsockopt(2)` with `SO_PEERCRED` and `SO_PEERGROUPS` (59, Linux 4.13).
  static func of(socket descriptor: Int32) -> PeerCredentials? {
    // struct ucred { pid_t pid; uid_t uid; gid_t gid; }
    var credentials: (Int32, UInt32, UInt32) = (0, 0, 0)
    var length = socklen_t(MemoryLayout.size(ofValue: credentials))
    guard getsockopt(descriptor, SOL_SOCKET, SO_PEERCRED, &credentials, &length) == 0,
      credentials.0 > 0
    else { return nil }
    var groups = [gid_t](repeating: 0, count: 64)
    var size = socklen_t(groups.count * MemoryLayout<gid_t>.size)
    var status = getsockopt(descriptor, SOL_SOCKET, 59, &groups, &size)
    if status != 0 && errno == ERANGE {
      groups = [gid_t](repeating: 0, count: Int(size) / MemoryLayout<gid_t>.size + 1)
      size = socklen_t(groups.count * MemoryLayout<gid_t>.size)
      status = getsockopt(descriptor, SOL_SOCKET, 59, &groups, &size)
    }
    let count = status == 0 ? Int(size) / MemoryLayout<gid_t>.size : 0
    return PeerCredentials(
      pid: credentials.0, uid: credentials.1, gid: credentials.2,
      groups: Array(groups.prefix(count)))
  }

  /// Whether the peer is in group `gid` (its primary group or a supplementary one).
  func isMember(of gid: gid_t) -> Bool { self.gid == gid || groups.contains(gid) }

  /// The id of group `name`, or `nil` when there is none.
  static func groupID(_ name: String) -> gid_t? {
    var entry = group()
    var result: UnsafeMutablePointer<group>?
    var buffer = [CChar](repeating: 0, count: 4096)
    guard getgrnam_r(name, &entry, &buffer, buffer.count, &result) == 0, result != nil else {
      return nil
    }
    return entry.gr_gid
  }
}
