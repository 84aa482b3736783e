import FoundationEssentials
import Glibc
import WaymarkClient

/// A listening socket of the broker: the location socket, the NMEA socket, or the NMEA stream
/// on loopback TCP. Opened non-blocking and close-on-exec.
struct Listener {
  var descriptor: Int32
  var kind: BrokerClientKind
  /// A loopback TCP socket (peers identified through /proc/net/tcp) rather than a Unix one.
  var isTCP = false

  /// The listeners `configuration` asks for (none closed on failure: all or nothing).
  static func open(_ configuration: BrokerServer.Configuration) throws(BrokerError) -> [Listener] {
    var listeners: [Listener] = []
    do throws(BrokerError) {
      for (path, kind) in [
        (configuration.path, BrokerClientKind.broker), (configuration.nmeaPath, .nmea),
      ] {
        guard let path else { continue }
        listeners.append(
          Listener(descriptor: try listen(path, mode: configuration.mode), kind: kind))
      }
      if let endpoint = configuration.nmeaTCP {
        listeners.append(
          Listener(
            descriptor: try listenTCP(host: endpoint.host, port: endpoint.port), kind: .nmea,
            isTCP: true))
      }
    } catch {
      for listener in listeners { close(listener.descriptor) }
      throw error
    }
    return listeners
  }

  /// Accepts one pending connection, non-blocking and close-on-exec from the start (no window
  /// in which a hook spawned meanwhile inherits it); -1 when none is pending.
  ///
  /// Wraps `accept4(2)`.
  func accept() -> Int32 {
    Self.accept4(
      descriptor, nil, nil, Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue))
  }

  private typealias Accept4 =
    @convention(c) (
      Int32, UnsafeMutablePointer<sockaddr>?, UnsafeMutablePointer<socklen_t>?, Int32
    ) -> Int32

  /// glibc's `accept4`, found at run time: the Glibc module does not export GNU extensions.
  private static let accept4: Accept4 = {
    guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "accept4") else {
      fatalError("glibc without accept4(2)")
    }
    return unsafeBitCast(symbol, to: Accept4.self)
  }()

  private static func listen(_ path: String, mode: mode_t) throws(BrokerError) -> Int32 {
    var address = try sockaddr_un(path: path)
    var status = stat()
    if lstat(path, &status) == 0 {
      guard (status.st_mode & S_IFMT) == S_IFSOCK else {
        throw BrokerError("\(path) exists and is not a socket")
      }
      unlink(path)
    }
    let descriptor = socket(
      AF_UNIX,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
      0)
    guard descriptor >= 0 else {
      throw BrokerError("cannot create a socket: \(String(cString: strerror(errno)))")
    }
    let length = socklen_t(MemoryLayout<sockaddr_un>.size)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      throw BrokerError("cannot listen on \(path): \(reason)")
    }
    guard chmod(path, mode) == 0, Glibc.listen(descriptor, 128) == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      unlink(path)
      throw BrokerError("cannot listen on \(path): \(reason)")
    }
    return descriptor
  }

  private static func listenTCP(host: String, port: UInt16) throws(BrokerError) -> Int32 {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_port = port.bigEndian
    guard inet_pton(AF_INET, host, &address.sin_addr) == 1,
      UInt32(bigEndian: address.sin_addr.s_addr) >> 24 == 127
    else {
      throw BrokerError("nmea-tcp must listen on a loopback address (127.x.x.x), not \(host)")
    }
    let descriptor = socket(
      AF_INET,
      Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue) | Int32(SOCK_NONBLOCK.rawValue),
      0)
    guard descriptor >= 0 else {
      throw BrokerError("cannot create a TCP socket: \(String(cString: strerror(errno)))")
    }
    var yes: Int32 = 1
    _ = setsockopt(
      descriptor, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
      }
    }
    guard bound == 0, Glibc.listen(descriptor, 128) == 0 else {
      let reason = String(cString: strerror(errno))
      close(descriptor)
      throw BrokerError("cannot listen on \(host):\(port): \(reason)")
    }
    return descriptor
  }
}

/// Which socket a client came through.
enum BrokerClientKind {
  /// The location socket: NDJSON both ways.
  case broker
  /// The NMEA socket: sentences out, nothing in.
  case nmea
}
