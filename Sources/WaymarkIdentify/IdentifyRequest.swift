/// The questions `waymark-identify` answers, one a message: the kind's byte, and one descriptor
/// attached (`SCM_RIGHTS`).
///
/// The answer is one message too: ``PeerProcess/wire`` on success, a failure text otherwise
/// (see ``PeerProcess/decode(_:)``); for ``loopbackTCPOwner``, ``LoopbackOwner/wire``.
package enum IdentifyRequest: UInt8, Sendable {
  /// The descriptor is a pidfd: which process is it (pid, uid, start time, executable)?
  case pidfd = 0x50  // "P"
  /// The descriptor is an accepted loopback TCP socket: which process holds the other end?
  case loopbackTCP = 0x54  // "T"
  /// The descriptor is an accepted loopback TCP socket: who owns the other end (uid and
  /// inode, from the TCP table alone, before any walk of the processes)?
  case loopbackTCPOwner = 0x55  // "U"
}
