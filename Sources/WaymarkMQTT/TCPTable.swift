import FoundationEssentials
import Glibc

/// This network namespace's TCP sockets and their owners, as the kernel lists them in
/// `/proc/self/net/tcp` and `tcp6` (readable under systemd's `ProcSubset=pid`: it is the
/// process's own directory).
enum TCPTable {
  /// An IPv4 (4 bytes) or IPv6 (16 bytes) address, in network order.
  struct Address: Hashable, Sendable {
    let bytes: [UInt8]

    init(bytes: [UInt8]) { self.bytes = bytes }

    /// A literal address (`127.0.0.1`, `::1`), or `nil`.
    init?(_ text: String) {
      var v4 = in_addr()
      var v6 = in6_addr()
      if inet_pton(AF_INET, text, &v4) == 1 {
        bytes = withUnsafeBytes(of: v4) { Array($0) }
      } else if inet_pton(AF_INET6, text, &v6) == 1 {
        bytes = withUnsafeBytes(of: v6) { Array($0) }
      } else {
        return nil
      }
    }

    var isV4: Bool { bytes.count == 4 }
    /// The IPv4 address as IPv6 sees it (`::ffff:a.b.c.d`).
    var mapped: Address {
      isV4 ? Address(bytes: [UInt8](repeating: 0, count: 10) + [0xFF, 0xFF] + bytes) : self
    }

    /// The address as libmosquitto and people write it.
    var text: String {
      var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
      let family = isV4 ? AF_INET : AF_INET6
      _ = bytes.withUnsafeBytes {
        inet_ntop(family, $0.baseAddress, &buffer, socklen_t(buffer.count))
      }
      return String(
        decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
  }

  /// An address and a port.
  struct Endpoint: Hashable, Sendable {
    var address: Address
    var port: UInt16
  }

  /// One row: the local end, the state (10: listening) and the owner.
  struct Row {
    var local: Endpoint
    var state: UInt8
    var uid: uid_t
  }

  /// The rows of `/proc/self/net/tcp` and `tcp6` (those that cannot be read: none).
  static func rows() -> [Row] {
    ["/proc/self/net/tcp", "/proc/self/net/tcp6"].flatMap { path -> [Row] in
      guard let text = try? String(contentsOfFile: path, encoding: .utf8) else { return [] }
      return text.split(separator: "\n").dropFirst().compactMap(row)
    }
  }

  /// The owners of the listening sockets that take a connection to `address`:`port`: its own
  /// and the wildcard ones, IPv4 and IPv6 (dual-stack) alike.
  static func listeners(accepting address: Address, port: UInt16) -> [uid_t] {
    let matches: Set<Address> =
      address.isV4
      ? [
        address, Address(bytes: [0, 0, 0, 0]), address.mapped,
        Address(bytes: .init(repeating: 0, count: 16)),
      ]
      : [address, Address(bytes: .init(repeating: 0, count: 16))]
    return rows().filter {
      $0.state == 10 && $0.local.port == port && matches.contains($0.local.address)
    }
    .map(\.uid)
  }

  /// A row of the table: `sl local rem st tx:rx tr:when retrnsmt uid ...`.
  static func row(_ line: Substring) -> Row? {
    let fields = line.split(separator: " ", omittingEmptySubsequences: true)
    guard fields.count > 7, let local = endpoint(fields[1]),
      let state = UInt8(fields[3], radix: 16), let uid = uid_t(fields[7])
    else { return nil }
    return Row(local: local, state: state, uid: uid)
  }

  /// `0100007F:075B` (IPv4) or 32 hex digits and a port (IPv6): each 32-bit word as the kernel
  /// holds it, printed as a number, so its bytes in memory are the address in network order.
  static func endpoint(_ text: Substring) -> Endpoint? {
    guard let colon = text.firstIndex(of: ":"),
      let port = UInt16(text[text.index(after: colon)...], radix: 16)
    else { return nil }
    let hex = text[..<colon]
    guard hex.count == 8 || hex.count == 32 else { return nil }
    var bytes: [UInt8] = []
    var start = hex.startIndex
    while start < hex.endIndex {
      let end = hex.index(start, offsetBy: 8)
      guard let word = UInt32(hex[start..<end], radix: 16) else { return nil }
      bytes += withUnsafeBytes(of: word) { Array($0) }
      start = end
    }
    return Endpoint(address: Address(bytes: bytes), port: port)
  }
}
