#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

/// A TCP end as `/proc/net/tcp6` would name it: 16 address bytes (an IPv4 address in its
/// IPv4-mapped form, `::ffff:a.b.c.d`) and a port.
package struct SocketAddress: Equatable, CustomStringConvertible {
  package var address: [UInt8]
  var port: UInt16

  /// The local or peer end of `socket`.
  package init?(_ socket: Int32, peer: Bool) {
    var storage = sockaddr_storage()
    var length = socklen_t(MemoryLayout<sockaddr_storage>.size)
    let status = withUnsafeMutablePointer(to: &storage) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        peer ? getpeername(socket, $0, &length) : getsockname(socket, $0, &length)
      }
    }
    guard status == 0 else { return nil }
    switch Int32(storage.ss_family) {
    case AF_INET:
      let v4 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in.self) }
      port = UInt16(bigEndian: v4.sin_port)
      let v4Bytes = withUnsafeBytes(of: v4.sin_addr.s_addr) { Array($0) }
      address = [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + v4Bytes
    case AF_INET6:
      let v6 = withUnsafeBytes(of: storage) { $0.load(as: sockaddr_in6.self) }
      address = withUnsafeBytes(of: v6.sin6_addr) { Array($0) }
      port = UInt16(bigEndian: v6.sin6_port)
    default:
      return nil
    }
  }

  /// An `ADDRESS:PORT` column of `/proc/net/tcp` (8 hex digits) or `tcp6` (32): each group of
  /// 8 digits is a 32-bit word of the address as the kernel holds it, printed in host order.
  init?(row: ArraySlice<UInt8>) {
    let parts = row.split(separator: UInt8(ascii: ":"))
    guard parts.count == 2, parts[0].count == 8 || parts[0].count == 32,
      let port = UInt16(String(decoding: parts[1], as: UTF8.self), radix: 16)
    else { return nil }
    var bytes: [UInt8] = []
    var rest = parts[0]
    while !rest.isEmpty {
      guard let word = UInt32(String(decoding: rest.prefix(8), as: UTF8.self), radix: 16)
      else { return nil }
      withUnsafeBytes(of: word) { bytes.append(contentsOf: $0) }
      rest = rest.dropFirst(8)
    }
    address = bytes.count == 4 ? [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + bytes : bytes
    self.port = port
  }

  /// 127.0.0.0/8 (plain or IPv4-mapped) or `::1`.
  var isLoopback: Bool {
    let mapped = address[..<12].elementsEqual([UInt8](repeating: 0, count: 10) + [0xFF, 0xFF])
    return mapped ? address[12] == 127 : address == [UInt8](repeating: 0, count: 15) + [1]
  }

  package var description: String {
    let hex = address.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
    return "[\(hex)]:\(port)"
  }
}
