#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

extension ProcFS {
  /// The owner of the peer's end of the accepted loopback TCP connection `socket` (waymarkd's
  /// `nmea-tcp`): its uid and socket inode, from one read of `<netDirectory>/tcp` (and `tcp6`).
  ///
  /// The peer's own socket has the peer's address as its local end and ours as its remote end;
  /// its row (in `tcp6` for a peer that connected from an IPv6 socket to 127.0.0.1, as
  /// `::ffff:127.0.0.1`) gives the uid of the process that created it. Cheap beside
  /// ``loopbackPeer(socket:netDirectory:budget:)``: a caller applies its per-user limits with
  /// it before any walk of `/proc`.
  ///
  /// - Throws: ``IdentifyFailure`` when the peer is not on the loopback network or has no row.
  package static func loopbackOwner(socket: Int32, netDirectory: String) throws(IdentifyFailure)
    -> LoopbackOwner
  {
    guard let peer = SocketAddress(socket, peer: true),
      let local = SocketAddress(socket, peer: false)
    else {
      throw IdentifyFailure("not an IPv4 or IPv6 socket")
    }
    guard peer.isLoopback else { throw IdentifyFailure("peer is not on the loopback network") }
    for table in ["tcp", "tcp6"] {
      guard let bytes = read("\(netDirectory)/\(table)", limit: 1 << 24) else {
        throw IdentifyFailure("cannot read \(netDirectory)/\(table) (\(errnoText()))")
      }
      for line in bytes.split(separator: UInt8(ascii: "\n")).dropFirst() {
        let fields = line.split(separator: UInt8(ascii: " "))
        guard fields.count > 9, SocketAddress(row: fields[1]) == peer,
          SocketAddress(row: fields[2]) == local,
          let uid = uid_t(String(decoding: fields[7], as: UTF8.self)),
          let inode = UInt64(String(decoding: fields[9], as: UTF8.self)), inode != 0
        else { continue }
        return LoopbackOwner(uid: uid, inode: inode)
      }
    }
    throw IdentifyFailure("no row in \(netDirectory)/tcp or tcp6 for the peer \(peer)")
  }

  /// The process at the other end of the accepted loopback TCP connection `socket`, which the
  /// kernel does not attach to the socket as it does for Unix sockets: the owner's row
  /// (``loopbackOwner(socket:netDirectory:)``), then the processes of that uid holding the
  /// peer's socket among their descriptors.
  ///
  /// Every process that holds the peer's socket must run the same executable: a program that
  /// connected and handed the socket to a child, then ran another file (or a shell that
  /// connected and started a program on the socket), is refused, since which of them speaks
  /// cannot be told. Among holders of one executable, the one that connected is named
  /// (``namedHolder(among:)``; its pid and start time are polkit's subject). Holders of other
  /// users (a descriptor passed on with `SCM_RIGHTS`) are not looked for. A peer on another
  /// host has no identity here.
  ///
  /// The walk is bounded by `budget`: a user who holds thousands of descriptors makes one
  /// identification fail, not take seconds.
  ///
  /// - Parameters:
  ///   - socket: the accepted connection.
  ///   - netDirectory: the `net` directory of a process in the socket's network namespace
  ///     (`/proc/self/net`; `waymark-identify` reads its client's, `/proc/<pid>/net`).
  ///   - budget: the most the walk may examine and take.
  /// - Throws: ``IdentifyFailure`` when the peer is not on the loopback network or cannot be
  ///   found, when its socket is held by processes of different executables, or when the walk
  ///   goes over its budget.
  package static func loopbackPeer(
    socket: Int32, netDirectory: String, budget: WalkBudget = WalkBudget()
  ) throws(IdentifyFailure) -> PeerProcess {
    let owner = try loopbackOwner(socket: socket, netDirectory: netDirectory)
    let sockfsMount = field("mnt_id:", of: "/proc/self/fdinfo/\(socket)")
    let holders = try processes(
      holdingSocketInode: owner.inode, sockfsMount: sockfsMount, uid: owner.uid, budget: budget
    )
    .compactMap { pid in
      startTimeAndParent(of: pid).map { (pid: pid, start: $0.start, parent: $0.parent) }
    }
    guard let named = namedHolder(among: holders),
      let executable = executablePath(of: named.pid), startTime(of: named.pid) == named.start
    else {
      throw IdentifyFailure("no process holds the peer's socket (inode \(owner.inode))")
    }
    for holder in holders where holder.pid != named.pid {
      guard let other = executablePath(of: holder.pid) else { continue }  // exited meanwhile
      // Byte for byte: two paths are one program only when they are the same bytes.
      guard other.utf8.elementsEqual(executable.utf8) else {
        throw IdentifyFailure(
          "the peer's socket is held by processes of different programs (\(executable) and "
            + "\(other)): which one speaks cannot be told")
      }
    }
    return PeerProcess(
      uid: owner.uid, pid: named.pid, startTime: named.start, executable: executable)
  }

  /// Of the processes sharing a socket, the one it is named after: among those whose parent
  /// does not hold it too (a shell that connected, not the program it started and passed the
  /// socket on to), the earliest start time (clock ticks after boot), then the lower pid;
  /// `nil` when there is none. Not merely the lowest pid: pids wrap around, and a child can
  /// have a lower one than its shell, and start in the same tick.
  package static func namedHolder(among holders: [(pid: pid_t, start: UInt64, parent: pid_t)])
    -> (pid: pid_t, start: UInt64, parent: pid_t)?
  {
    let pids = Set(holders.map { $0.pid })
    let roots = holders.filter { !pids.contains($0.parent) }
    return (roots.isEmpty ? holders : roots).min { ($0.start, $0.pid) < ($1.start, $1.pid) }
  }

  /// The processes of `uid` (the owner of `/proc/<pid>`) with `socket:[inode]` among their
  /// open files, examining at most what `budget` allows.
  ///
  /// The descriptors are listed from `/proc/<pid>/fdinfo`, not `fd`: entering another user's
  /// `fd` directory takes `CAP_DAC_READ_SEARCH`, while `fdinfo` (Linux 6.2 and later) takes
  /// ptrace read access only, the one privilege `waymark-identify` holds. A descriptor's link in
  /// `fd` is read when it can be (this process's user); otherwise its `fdinfo` file, whose
  /// `ino:` and `mnt_id:` must be the socket's inode and the socket file system's mount
  /// (`sockfsMount`, read from a socket of ours).
  static func processes(
    holdingSocketInode inode: UInt64, sockfsMount: ArraySlice<UInt8>?, uid: uid_t,
    budget: WalkBudget = WalkBudget()
  ) throws(IdentifyFailure) -> [pid_t] {
    guard let proc = opendir("/proc") else { return [] }
    defer { closedir(proc) }
    var holders: [pid_t] = []
    let target = Array("socket:[\(inode)]".utf8)
    let inodeText = Array(String(inode).utf8)
    var link = [UInt8](repeating: 0, count: 64)
    var spent = budget.start()
    while let entry = readdir(proc) {
      var owner = stat()
      guard let pid = pid_t(name(of: entry)), stat("/proc/\(pid)", &owner) == 0,
        owner.st_uid == uid, let fds = opendir("/proc/\(pid)/fdinfo")
      else {
        continue
      }
      defer { closedir(fds) }
      descriptors: while let fd = readdir(fds) {
        let number = name(of: fd)
        guard Int32(number) != nil else { continue }
        try spent.take()
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
        if let sockfsMount, field("ino:", of: info)?.elementsEqual(inodeText) == true,
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
