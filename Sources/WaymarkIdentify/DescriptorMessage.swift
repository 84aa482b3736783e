#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

/// One message on a `SOCK_SEQPACKET` Unix socket with at most one descriptor attached
/// (`SCM_RIGHTS`): how waymarkd hands a pidfd or a socket to `waymark-identify`.
///
/// The control message is laid out by hand (`CMSG_*` are C macros Swift does not import): a
/// `cmsghdr`, then the descriptor, padded to the alignment of `size_t`.
package enum DescriptorMessage {
  private static let headerSize = MemoryLayout<cmsghdr>.size
  private static let alignment = MemoryLayout<Int>.size
  /// `CMSG_SPACE(sizeof(int))`.
  private static let space =
    (headerSize + MemoryLayout<Int32>.size + alignment - 1) / alignment * alignment

  /// Sends `bytes` with `descriptor` attached (none when it is `nil`).
  ///
  /// - Returns: `true` when the whole message was sent; `errno` says why not otherwise.
  ///   Wraps `sendmsg(2)`.
  package static func send(_ bytes: [UInt8], descriptor: Int32?, on socket: Int32) -> Bool {
    var payload = bytes
    var control = [UInt8](repeating: 0, count: descriptor == nil ? 0 : space)
    return payload.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { controlBytes in
        if let descriptor {
          let header = controlBytes.baseAddress!.assumingMemoryBound(to: cmsghdr.self)
          header.pointee.cmsg_len = headerSize + MemoryLayout<Int32>.size
          header.pointee.cmsg_level = SOL_SOCKET
          header.pointee.cmsg_type = Int32(SCM_RIGHTS)
          controlBytes.storeBytes(of: descriptor, toByteOffset: headerSize, as: Int32.self)
        }
        return MessageHeader.with(data: data, control: controlBytes) { message in
          sendmsg(socket, &message, Int32(MSG_NOSIGNAL)) == data.count
        }
      }
    }
  }

  /// Receives one message of at most `capacity` bytes and the descriptor attached to it
  /// (received close-on-exec). A truncated message, or one with more than one descriptor or a
  /// control message of another kind, is refused: its descriptors are closed.
  ///
  /// - Returns: the bytes (empty at end of stream) and the descriptor, or `nil` on an error
  ///   (`errno` says which; `EBADMSG` for a refused message). Wraps `recvmsg(2)`.
  package static func receive(on socket: Int32, capacity: Int) -> (
    bytes: [UInt8], descriptor: Int32?
  )? {
    var payload = [UInt8](repeating: 0, count: capacity)
    // Room for several descriptors, so that an extra one is seen (and closed), not truncated.
    var control = [UInt8](repeating: 0, count: space * 4)
    var received: Int = -1
    var descriptors: [Int32] = []
    var flags: Int32 = 0
    var foreign = false
    payload.withUnsafeMutableBytes { data in
      control.withUnsafeMutableBytes { controlBytes in
        MessageHeader.with(data: data, control: controlBytes) { message in
          received = recvmsg(socket, &message, Int32(MSG_CMSG_CLOEXEC))
          guard received >= 0 else { return }
          flags = message.msg_flags
          var offset = 0
          while offset + headerSize <= message.msg_controllen {
            let header = controlBytes.load(fromByteOffset: offset, as: cmsghdr.self)
            guard header.cmsg_len >= headerSize, offset + header.cmsg_len <= controlBytes.count
            else { break }
            let count = (header.cmsg_len - headerSize) / MemoryLayout<Int32>.size
            let isRights = header.cmsg_level == SOL_SOCKET && header.cmsg_type == SCM_RIGHTS
            if !isRights { foreign = true }
            for index in 0..<(isRights ? count : 0) {
              descriptors.append(
                controlBytes.loadUnaligned(
                  fromByteOffset: offset + headerSize + index * MemoryLayout<Int32>.size,
                  as: Int32.self))
            }
            offset += (header.cmsg_len + alignment - 1) / alignment * alignment
          }
        }
      }
    }
    guard received >= 0 else { return nil }
    let truncated = flags & Int32(MSG_TRUNC | MSG_CTRUNC) != 0
    guard !truncated, !foreign, descriptors.count <= 1 else {
      for descriptor in descriptors { close(descriptor) }
      errno = EBADMSG
      return nil
    }
    return (Array(payload[..<received]), descriptors.first)
  }
}
