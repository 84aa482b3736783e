import FoundationEssentials
import Glibc

extension PeerIdentity {
  /// The identity of the peer of an accepted loopback TCP connection (`nmea-tcp`), which the
  /// kernel does not attach to the socket as it does for Unix sockets: the connection's row in
  /// `/proc/net/tcp` gives the owner's uid and the socket's inode, and the process holding that
  /// inode among its `/proc/<pid>/fd` gives the executable.
  ///
  /// Weaker than ``of(socket:)``: when several processes share the socket (a shell that
  /// connected and the program it started), the first one found is named; a peer on another
  /// host has no identity here and is refused.
  ///
  /// - Throws: ``Failure`` when the peer is not on the loopback network or cannot be found.
  public static func ofLoopbackTCP(socket descriptor: Int32) throws(Failure) -> PeerIdentity {
    var peer = sockaddr_in()
    var local = sockaddr_in()
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let gotPeer = withUnsafeMutablePointer(to: &peer) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getpeername(descriptor, $0, &length) }
    }
    length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let gotLocal = withUnsafeMutablePointer(to: &local) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(descriptor, $0, &length) }
    }
    guard gotPeer == 0, gotLocal == 0, peer.sin_family == sa_family_t(AF_INET) else {
      throw Failure(description: "not an IPv4 TCP peer")
    }
    guard UInt32(bigEndian: peer.sin_addr.s_addr) >> 24 == 127 else {
      throw Failure(description: "peer is not on the loopback network")
    }
    // /proc/net/tcp writes the address as the 32-bit value in host order, in hex, and the port
    // in hex; the peer's own row has the peer as its local end.
    func key(_ address: sockaddr_in) -> String {
      hex(UInt32(address.sin_addr.s_addr), width: 8) + ":"
        + hex(UInt32(UInt16(bigEndian: address.sin_port)), width: 4)
    }
    let wanted = (key(peer), key(local))
    guard let text = readText("/proc/net/tcp") else {
      throw Failure(description: "cannot read /proc/net/tcp")
    }
    var found: (uid: uid_t, inode: String)?
    for line in text.split(separator: "\n").dropFirst() {
      let fields = line.split(separator: " ")
      guard fields.count > 9, fields[1] == wanted.0, fields[2] == wanted.1,
        let uid = uid_t(fields[7])
      else { continue }
      found = (uid, String(fields[9]))
      break
    }
    guard let found, found.inode != "0" else {
      throw Failure(description: "no /proc/net/tcp row for the peer \(wanted.0)")
    }
    guard let pid = process(holdingSocketInode: found.inode),
      let start = startTime(of: pid), let executable = executablePath(of: pid),
      startTime(of: pid) == start
    else {
      throw Failure(description: "no process holds the peer's socket (inode \(found.inode))")
    }
    return PeerIdentity(
      uid: found.uid, pid: pid, user: userName(found.uid), executable: executable)
  }

  /// The first process with `socket:[inode]` among its open files.
  static func process(holdingSocketInode inode: String) -> pid_t? {
    guard let proc = opendir("/proc") else { return nil }
    defer { closedir(proc) }
    let target = "socket:[\(inode)]"
    while let entry = readdir(proc) {
      let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
        String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
      }
      guard let pid = pid_t(name), let fds = opendir("/proc/\(pid)/fd") else { continue }
      defer { closedir(fds) }
      var link = [CChar](repeating: 0, count: 64)
      while let fd = readdir(fds) {
        let fdName = withUnsafeBytes(of: fd.pointee.d_name) { raw in
          String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        let count = readlink("/proc/\(pid)/fd/\(fdName)", &link, link.count)
        guard count > 0 else { continue }
        let text = String(decoding: link[..<count].map { UInt8(bitPattern: $0) }, as: UTF8.self)
        if text == target { return pid }
      }
    }
    return nil
  }

  private static func hex(_ value: UInt32, width: Int) -> String {
    let digits = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, width - digits.count)) + digits
  }

  private static func readText(_ path: String) -> String? {
    let descriptor = open(path, O_RDONLY | O_CLOEXEC)
    guard descriptor >= 0 else { return nil }
    defer { close(descriptor) }
    var bytes: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 65536)
    while true {
      let count = read(descriptor, &buffer, buffer.count)
      guard count > 0 else { break }
      bytes.append(contentsOf: buffer[..<count])
    }
    return String(decoding: bytes, as: UTF8.self)
  }
}
