import Foundation
import WaymarkBroker
import WaymarkCore
import WaymarkSimulation

// The broker benchmark's plumbing: identity, a quiet gpsd, its client limit, sockets, clocks.
extension BrokerBenchmark {
  /// This process's client id as waymarkd identifies it: `<user>:<real path of the exe>`.
  static func ownClientID() -> String {
    let resolved = realpath("/proc/self/exe", nil)
    defer { free(resolved) }
    let executable = resolved.map { String(cString: $0) } ?? CommandLine.arguments[0]
    return PeerIdentity.userName(getuid()) + ":" + executable
  }

  /// A wrapper that starts gpsd as the harness asks but with `-D 0`: at `-D 2` gpsd logs every
  /// line sent to every client, which would more than double its CPU with 64 watchers.
  static func quietGPSD(in directory: String) throws -> String {
    let path = directory + "/gpsd-quiet"
    let script = """
      #!/bin/sh
      for argument in "$@"; do
        shift
        if [ "$previous" = "-D" ]; then set -- "$@" 0; else set -- "$@" "$argument"; fi
        previous=$argument
      done
      exec '\(GPSDHarness.defaultExecutable)' "$@"

      """
    try Data(script.utf8).write(to: URL(fileURLWithPath: path))
    chmod(path, 0o755)
    return path
  }

  /// Connects WATCH clients to a private gpsd (no device) one at a time, each waiting for its
  /// WATCH answer, until gpsd closes one instead or `cap` are connected.
  ///
  /// - Returns: how many clients gpsd served at once.
  static func gpsdClientLimit(executable: String, cap: Int) async throws -> Int {
    let gpsd = try await GPSDHarness(devices: [], executable: executable)
    defer { gpsd.stop() }
    var open: [Int32] = []
    defer { for descriptor in open { close(descriptor) } }
    while open.count < cap {
      guard let descriptor = connectTCP(port: gpsd.port) else { break }
      var timeout = timeval(tv_sec: 2, tv_usec: 0)
      setsockopt(
        descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      sendLine(descriptor, #"?WATCH={"enable":true,"json":true};"#)
      var received: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      var answered = false
      while !answered {
        let count = recv(descriptor, &buffer, buffer.count, 0)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        received += buffer[..<count]
        answered = String(decoding: received, as: UTF8.self).contains(#""class":"WATCH""#)
      }
      guard answered else {
        close(descriptor)
        break
      }
      open.append(descriptor)
    }
    return open.count
  }

  /// Lets this process and its children (waymarkd) open as many descriptors as allowed.
  static func raiseDescriptorLimit() {
    var limit = rlimit()
    let resource = __rlimit_resource_t(RLIMIT_NOFILE.rawValue)
    guard getrlimit(resource, &limit) == 0 else { return }
    limit.rlim_cur = limit.rlim_max
    _ = setrlimit(resource, &limit)
  }

  /// CLOCK_MONOTONIC in nanoseconds.
  static func monotonicNanoseconds() -> Int64 {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Int64(now.tv_sec) * 1_000_000_000 + Int64(now.tv_nsec)
  }

  static func connectTCP(port: UInt16) -> Int32? {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return connectStream(family: AF_INET, to: address)
  }

  static func connectUnix(path: String) -> Int32? {
    guard let address = try? sockaddr_un(path: path) else { return nil }
    return connectStream(family: AF_UNIX, to: address)
  }

  /// A connected stream socket of `family` to `address` (a `sockaddr_in` or `sockaddr_un`), or
  /// `nil`.
  private static func connectStream<Address>(family: Int32, to address: Address) -> Int32? {
    let descriptor = socket(family, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { return nil }
    var address = address
    let status = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<Address>.size))
      }
    }
    guard status == 0 else {
      close(descriptor)
      return nil
    }
    return descriptor
  }

  /// Writes `text` and a newline (small enough for one send on a fresh socket).
  static func sendLine(_ descriptor: Int32, _ text: String) {
    let bytes = Array((text + "\n").utf8)
    _ = bytes.withUnsafeBytes { send(descriptor, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
  }
}
