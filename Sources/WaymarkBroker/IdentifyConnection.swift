import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkIdentify

/// waymarkd's connection to `waymark-identify`, the helper that holds `CAP_SYS_PTRACE` so that
/// waymarkd holds none (privilege separation): a pidfd or a loopback TCP socket goes out, the
/// process's pid, uid, start time and executable come back.
///
/// Connected on first use and kept; a connection that failed is closed and opened again for
/// the next question (systemd starts a new helper for each connection). Each answer is awaited
/// at most ``timeoutSeconds``: a helper that does not answer costs the caller that long, once.
final class IdentifyConnection: Sendable {
  /// The helper's socket (`SOCK_SEQPACKET`).
  let path: String
  /// How long one question may wait for its answer, in seconds.
  let timeoutSeconds: Int
  private let descriptor = Locked<Int32>(-1)

  init(path: String, timeoutSeconds: Int = 2) {
    self.path = path
    self.timeoutSeconds = timeoutSeconds
  }

  deinit {
    descriptor.withLock { if $0 >= 0 { close($0) } }
  }

  /// Asks the helper about the descriptor `sent` (a pidfd, or an accepted loopback TCP socket).
  ///
  /// - Throws: ``IdentifyFailure``: the helper's reason, or why it could not be asked.
  func identify(_ request: IdentifyRequest, _ sent: Int32) throws(IdentifyFailure) -> PeerProcess {
    try PeerProcess.decode(ask(request, sent))
  }

  /// Asks the helper who owns the other end of the loopback TCP socket `sent`.
  ///
  /// - Throws: ``IdentifyFailure``: the helper's reason, or why it could not be asked.
  func owner(ofLoopbackTCP sent: Int32) throws(IdentifyFailure) -> LoopbackOwner {
    try LoopbackOwner.decode(ask(.loopbackTCPOwner, sent))
  }

  /// One question and its answer's bytes.
  private func ask(_ request: IdentifyRequest, _ sent: Int32) throws(IdentifyFailure) -> [UInt8] {
    let answer: Result<[UInt8], IdentifyFailure> = descriptor.withLock { connection in
      // A connection kept from before may have been closed at the helper's end (a restart):
      // then the question is put once more, on a new one.
      for attempt in 0..<2 {
        let reused = connection >= 0
        if !reused {
          connection = connect()
          guard connection >= 0 else {
            let reason = String(cString: strerror(errno))
            return .failure(IdentifyFailure("cannot reach \(path) (\(reason))"))
          }
        }
        errno = 0
        if DescriptorMessage.send([request.rawValue], descriptor: sent, on: connection),
          let message = DescriptorMessage.receive(on: connection, capacity: 8192),
          !message.bytes.isEmpty
        {
          if let extra = message.descriptor { close(extra) }
          return .success(message.bytes)
        }
        let code = errno
        close(connection)
        connection = -1
        guard reused, code != EAGAIN, attempt == 0 else {
          return .failure(
            IdentifyFailure(
              code == EAGAIN
                ? "\(path) did not answer within \(timeoutSeconds) s"
                : "\(path) closed the connection"
                  + (code == 0 ? "" : " (\(String(cString: strerror(code))))")))
        }
      }
      return .failure(IdentifyFailure("no answer from \(path)"))
    }
    return try answer.get()
  }

  /// A new connection, or -1 (with `errno`).
  private func connect() -> Int32 {
    let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let socket = Glibc.socket(AF_UNIX, type, 0)
    guard socket >= 0 else { return -1 }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
      close(socket)
      errno = ENAMETOOLONG
      return -1
    }
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: bytes) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      let code = errno
      close(socket)
      errno = code
      return -1
    }
    var timeout = timeval(tv_sec: timeoutSeconds, tv_usec: 0)
    let size = socklen_t(MemoryLayout<timeval>.size)
    _ = setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, size)
    _ = setsockopt(socket, SOL_SOCKET, SO_SNDTIMEO, &timeout, size)
    return socket
  }
}
