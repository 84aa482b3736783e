import FoundationEssentials
import Glibc
import WaymarkCore

/// A client's connection to `waymarkd`'s location socket: NDJSON lines both ways.
///
/// ```swift
/// let connection = try BrokerConnection(path: BrokerConnection.defaultPath)
/// try connection.send(#"{"class":"WATCH","enable":true}"#)
/// for await message in connection.messages() where message.className == "TPV" { … }
/// ```
///
/// Reading blocks, so ``messages()`` reads on a thread of its own and hands each line to an
/// `AsyncStream`; the stream ends when the daemon closes the connection or ``close()`` is called.
public final class BrokerConnection: Sendable {
  /// Where a system-wide `waymarkd` listens (systemd's `RuntimeDirectory=waymark`).
  public static let defaultPath = "/run/waymark/waymark.sock"

  private let descriptor: Int32
  private let writeLock = Locked(())

  /// Connects to the socket at `path`.
  ///
  /// - Throws: ``BrokerError`` when nobody listens there (or the path is not reachable).
  public init(path: String) throws(BrokerError) {
    var address = try sockaddr_un(path: path)
    let descriptor = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else {
      throw BrokerError("cannot create a socket: \(String(cString: strerror(errno)))")
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(descriptor, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      let reason = String(cString: strerror(errno))
      Glibc.close(descriptor)
      throw BrokerError("cannot connect to waymarkd at \(path): \(reason)")
    }
    self.descriptor = descriptor
  }

  deinit {
    Glibc.close(descriptor)
  }

  /// Sends one line (a newline is added).
  ///
  /// - Throws: ``BrokerError`` when the daemon has gone.
  public func send(_ line: String) throws(BrokerError) {
    let bytes = Array(line.utf8) + [0x0A]
    let failure: Int32? = writeLock.withLock { _ -> Int32? in
      var offset = 0
      while offset < bytes.count {
        let written = bytes.withUnsafeBytes {
          Glibc.send(
            descriptor, $0.baseAddress! + offset, bytes.count - offset, Int32(MSG_NOSIGNAL))
        }
        if written < 0 {
          if errno == EINTR { continue }
          return errno
        }
        offset += written
      }
      return nil
    }
    if let failure {
      throw BrokerError("cannot write to waymarkd: \(String(cString: strerror(failure)))")
    }
  }

  /// Sends `line`'s object.
  public func send(_ line: JSONLine) throws(BrokerError) { try send(line.string) }

  /// Sends one request, typed.
  package func send(_ request: DaemonRequest) throws(BrokerError) { try send(request.line) }

  /// Stops the connection both ways; ``messages()`` ends.
  public func close() {
    shutdown(descriptor, Int32(SHUT_RDWR))
  }

  /// The daemon's lines, as they arrive, until it closes the connection or ``close()``.
  /// Call once: the lines are read from the socket, not replayed.
  public func messages() -> AsyncStream<BrokerMessage> {
    let (stream, continuation) = AsyncStream.makeStream(of: BrokerMessage.self)
    let descriptor = descriptor
    continuation.onTermination = { [self] _ in self.close() }
    DetachedThread.start(name: "broker-client") {
      var buffer = [UInt8](repeating: 0, count: 65536)
      var pending: [UInt8] = []
      while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        guard count > 0 else { break }
        pending.append(contentsOf: buffer[..<count])
        var start = 0
        while let newline = pending[start...].firstIndex(of: 0x0A) {
          let line = String(decoding: pending[start..<newline], as: UTF8.self)
          start = newline + 1
          continuation.yield(BrokerMessage(line: line))
        }
        pending.removeFirst(start)
      }
      continuation.finish()
    }
    return stream
  }
}

/// One object the daemon sent: its `class` and the line itself, parsed once.
public struct BrokerMessage: Sendable {
  /// The whole line, without the newline.
  public let line: String
  /// The object's `class` (`TPV`, `AUTHORIZATION`, `ASK`, …), or empty when it has none.
  public let className: String
  /// The parsed line, or `nil` when it is not JSON.
  let value: JSONValue?
  /// Why the line is not one JSON value alone (`nil` when it is).
  let syntaxError: String?

  /// Parses `line`.
  public init(line: String) {
    self.line = line
    var reader = JSONReader(Array(line.utf8))
    do {
      value = try reader.value()
      reader.skipWhitespace()
      syntaxError = reader.isAtEnd ? nil : "text after the object at byte \(reader.offset)"
    } catch {
      value = nil
      syntaxError = "\(error.reason) at byte \(error.offset)"
    }
    if case .string(let name)? = value?["class"] {
      className = name
    } else {
      className = ""
    }
  }

  /// The members, read leniently below: a member of another type counts as absent.
  private var members: Members { Members(className: nil, json: value ?? .null) }

  /// The string member `key`, or `nil`.
  public func string(_ key: String) -> String? { try? members.optionalString(key) }

  /// The finite number member `key`, or `nil`.
  public func number(_ key: String) -> Double? { try? members.optionalNumber(key) }

  /// The boolean member `key`, or `nil`.
  public func bool(_ key: String) -> Bool? { try? members.optionalBool(key) }

  /// The TPV object as a `Fix` (time, mode, position, altitudes, speed, track, climb and the
  /// error estimates), or `nil` when this is not a TPV.
  public var fix: Fix? {
    guard className == "TPV" else { return nil }
    var fix = Fix()
    if let text = string("time") { fix.time = Timestamp.parse(text) }
    fix.mode = number("mode").flatMap { FixMode(rawValue: Int($0)) } ?? .unknown
    if let latitude = number("lat"), let longitude = number("lon") {
      fix.coordinate = Coordinate(latitude: latitude, longitude: longitude)
    }
    fix.altitudeMSL = number("altMSL")
    fix.geoidSeparation = number("geoidSep")
    if fix.altitudeMSL == nil, let hae = number("altHAE") {
      fix.altitudeMSL = hae
      fix.geoidSeparation = 0
    }
    fix.speed = number("speed")
    fix.track = number("track")
    fix.climb = number("climb")
    fix.horizontalError = number("eph")
    fix.verticalError = number("epv")
    return fix
  }
}

extension sockaddr_un {
  /// The address of the Unix socket at `path`.
  ///
  /// - Throws: ``BrokerError`` when the path does not fit (107 bytes on Linux).
  package init(path: String) throws(BrokerError) {
    self.init()
    sun_family = sa_family_t(AF_UNIX)
    let capacity = MemoryLayout.size(ofValue: sun_path)
    guard path.utf8.count < capacity else {
      throw BrokerError("socket path longer than \(capacity - 1) bytes: \(path)")
    }
    withUnsafeMutableBytes(of: &sun_path) { raw in
      raw.copyBytes(from: path.utf8)
      raw[path.utf8.count] = 0
    }
  }
}
