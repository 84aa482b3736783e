#if hasFeature(Embedded)
  import CHelperLibc  // waymark-identify: Embedded Swift has no Glibc module
#else
  import Glibc
#endif

/// The `msghdr` that `sendmsg(2)` and `recvmsg(2)` take, over one data buffer and one control
/// buffer: written once for the descriptor hand-off and the benchmarks' timestamped reads.
package enum MessageHeader {
  /// Calls `body` with a header whose single `iovec` covers `data` and whose control buffer is
  /// `control` (`msg_control` `nil` when `control` is empty); the header is valid only inside.
  package static func with<Result>(
    data: UnsafeMutableRawBufferPointer, control: UnsafeMutableRawBufferPointer,
    _ body: (inout msghdr) -> Result
  ) -> Result {
    var vector = iovec(iov_base: data.baseAddress, iov_len: data.count)
    return withUnsafeMutablePointer(to: &vector) { vectorPointer in
      var message = msghdr()
      message.msg_iov = vectorPointer
      message.msg_iovlen = 1
      if control.count > 0 {
        message.msg_control = control.baseAddress
        message.msg_controllen = control.count
      }
      return body(&message)
    }
  }
}
