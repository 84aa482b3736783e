#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

/// The owner of a loopback TCP peer's socket, from its row in `/proc/<pid>/net/tcp` or `tcp6`:
/// the uid of the process that created the socket, and the socket's inode.
package struct LoopbackOwner: Sendable, Hashable {
  /// The uid the kernel recorded for the socket.
  package var uid: uid_t
  /// The socket's inode (`socket:[inode]` among its holders' descriptors).
  package var inode: UInt64

  /// Creates an owner from its parts.
  package init(uid: uid_t, inode: UInt64) {
    self.uid = uid
    self.inode = inode
  }

  /// The helper's answer for this owner: status 0, the uid and the inode, little-endian.
  package var wire: [UInt8] {
    var bytes: [UInt8] = [0]
    withUnsafeBytes(of: uid.littleEndian) { bytes.append(contentsOf: $0) }
    withUnsafeBytes(of: inode.littleEndian) { bytes.append(contentsOf: $0) }
    return bytes
  }

  /// Decodes the helper's answer (``wire``, or a failure as ``PeerProcess/failureWire(_:)``).
  ///
  /// - Throws: ``IdentifyFailure``: the helper's own, or a malformed answer.
  package static func decode(_ bytes: [UInt8]) throws(IdentifyFailure) -> LoopbackOwner {
    guard let status = bytes.first else { throw IdentifyFailure("empty answer from the helper") }
    guard status == 0 else {
      guard status == 1 else { throw IdentifyFailure("malformed answer from the helper") }
      throw IdentifyFailure(String(decoding: bytes.dropFirst(), as: UTF8.self))
    }
    guard bytes.count == 13 else { throw IdentifyFailure("malformed answer from the helper") }
    var uid: UInt32 = 0
    var inode: UInt64 = 0
    for index in 0..<4 { uid |= UInt32(bytes[1 + index]) << (8 * index) }
    for index in 0..<8 { inode |= UInt64(bytes[5 + index]) << (8 * index) }
    return LoopbackOwner(uid: uid, inode: inode)
  }
}
