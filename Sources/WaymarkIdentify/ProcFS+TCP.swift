import Glibc

extension ProcFS {
  /// The process at the other end of the accepted loopback TCP connection `socket` (waymarkd's
  /// `nmea-tcp`), which the kernel does not attach to the socket as it does for Unix sockets.
  ///
  /// The peer's own socket has the peer's address as its local end and ours as its remote end;
  /// its row in `<netDirectory>/tcp` (or `tcp6`: a peer that connected from an IPv6 socket to
  /// 127.0.0.1 is `::ffff:127.0.0.1` there) gives its owner's uid and its inode, and the process
  /// holding that inode among its `/proc/<pid>/fd` gives the pid and the executable.
  ///
  /// Weaker than a pidfd: when several processes share the peer's socket (a shell that
  /// connected and the program it started), the one that connected is named (``namedHolder``:
  /// not a child it handed the socket to; not the first in `/proc`, whose order follows pids,
  /// which wrap around); a peer on another host has no identity here.
  ///
  /// - Parameters:
  ///   - socket: the accepted connection.
  ///   - netDirectory: the `net` directory of a process in the socket's network namespace
  ///     (`/proc/self/net`; `waymark-identify` reads its client's, `/proc/<pid>/net`).
  /// - Throws: ``IdentifyFailure`` when the peer is not on the loopback network or cannot be
  ///   found.
  public static func loopbackPeer(socket: Int32, netDirectory: String) throws(IdentifyFailure)
    -> PeerProcess
  {
    guard let peer = SocketAddress(socket, peer: true),
      let local = SocketAddress(socket, peer: false)
    else {
      throw IdentifyFailure("not an IPv4 or IPv6 socket")
    }
    guard peer.isLoopback else { throw IdentifyFailure("peer is not on the loopback network") }
    var found: (uid: uid_t, inode: UInt64)?
    for table in ["tcp", "tcp6"] where found == nil {
      guard let bytes = read("\(netDirectory)/\(table)", limit: 1 << 24) else {
        throw IdentifyFailure("cannot read \(netDirectory)/\(table) (\(errnoText()))")
      }
      let text = String(decoding: bytes, as: UTF8.self)
      for line in text.split(separator: "\n").dropFirst() {
        let fields = line.split(separator: " ")
        guard fields.count > 9, SocketAddress(row: fields[1]) == peer,
          SocketAddress(row: fields[2]) == local, let uid = uid_t(fields[7]),
          let inode = UInt64(fields[9]), inode != 0
        else { continue }
        found = (uid, inode)
        break
      }
    }
    guard let found else {
      throw IdentifyFailure("no row in \(netDirectory)/tcp or tcp6 for the peer \(peer)")
    }
    let sockfsMount = field("mnt_id:", of: "/proc/self/fdinfo/\(socket)")
    let holders = processes(holdingSocketInode: found.inode, sockfsMount: sockfsMount)
      .compactMap { pid in startTimeAndParent(of: pid).map { (pid, $0.start, $0.parent) } }
    guard let oldest = namedHolder(among: holders),
      let executable = executablePath(of: oldest.pid), startTime(of: oldest.pid) == oldest.start
    else {
      throw IdentifyFailure("no process holds the peer's socket (inode \(found.inode))")
    }
    return PeerProcess(
      uid: found.uid, pid: oldest.pid, startTime: oldest.start, executable: executable)
  }

  /// Of the processes sharing a socket, the one it is named after: among those whose parent
  /// does not hold it too (a shell that connected, not the program it started and passed the
  /// socket on to), the earliest start time (clock ticks after boot), then the lower pid;
  /// `nil` when there is none. Not merely the lowest pid: pids wrap around, and a child can
  /// have a lower one than its shell, and start in the same tick.
  package static func namedHolder(among holders: [(pid: pid_t, start: UInt64, parent: pid_t)])
    -> (pid: pid_t, start: UInt64, parent: pid_t)?
  {
    let pids = Set(holders.map(\.pid))
    let roots = holders.filter { !pids.contains($0.parent) }
    return (roots.isEmpty ? holders : roots).min { ($0.start, $0.pid) < ($1.start, $1.pid) }
  }

  /// The processes with `socket:[inode]` among their open files.
  ///
  /// The descriptors are listed from `/proc/<pid>/fdinfo`, not `fd`: entering another user's
  /// `fd` directory takes `CAP_DAC_READ_SEARCH`, while `fdinfo` (Linux 6.2 and later) takes
  /// ptrace read access only, the one privilege `waymark-identify` holds. A descriptor's link in
  /// `fd` is read when it can be (this process's user); otherwise its `fdinfo` file, whose
  /// `ino:` and `mnt_id:` must be the socket's inode and the socket file system's mount
  /// (`sockfsMount`, read from a socket of ours).
  static func processes(holdingSocketInode inode: UInt64, sockfsMount: Substring?) -> [pid_t] {
    guard let proc = opendir("/proc") else { return [] }
    defer { closedir(proc) }
    var holders: [pid_t] = []
    let target = Array("socket:[\(inode)]".utf8)
    let inodeText = String(inode)
    var link = [UInt8](repeating: 0, count: 64)
    while let entry = readdir(proc) {
      guard let pid = pid_t(name(of: entry)), let fds = opendir("/proc/\(pid)/fdinfo") else {
        continue
      }
      defer { closedir(fds) }
      descriptors: while let fd = readdir(fds) {
        let number = name(of: fd)
        guard Int32(number) != nil else { continue }
        let count = link.withUnsafeMutableBytes { buffer in
          readlink("/proc/\(pid)/fd/\(number)", buffer.baseAddress!, buffer.count)
        }
        if count >= 0 {
          if count == target.count, link[..<count].elementsEqual(target) {
            holders.append(pid)
            break descriptors
          }
          continue
        }
        let info = "/proc/\(pid)/fdinfo/\(number)"
        if let sockfsMount, field("ino:", of: info) == inodeText[...],
          field("mnt_id:", of: info) == sockfsMount
        {
          holders.append(pid)
          break descriptors
        }
      }
    }
    return holders
  }

  private static func name(of entry: UnsafeMutablePointer<dirent>) -> String {
    withUnsafeBytes(of: entry.pointee.d_name) { raw in
      String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
    }
  }
}
