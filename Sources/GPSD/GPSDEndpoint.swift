/// Where gpsd listens, and optionally which device to watch: `host[:port[:device]]`.
///
/// The form is the one gpsd's own clients accept (`cgps localhost:2947:/dev/ttyACM0`). An IPv6
/// host is written in brackets: `[::1]:2947`.
public struct GPSDEndpoint: Sendable, Hashable, CustomStringConvertible {
  /// Host name or address of gpsd.
  public var host: String
  /// TCP port of gpsd (default 2947).
  public var port: UInt16
  /// The one device to watch, such as `/dev/ttyACM0`; `nil` watches every device.
  public var device: String?

  /// gpsd's IANA port.
  public static let defaultPort: UInt16 = 2947

  /// Creates an endpoint.
  public init(
    host: String = "localhost", port: UInt16 = GPSDEndpoint.defaultPort, device: String? = nil
  ) {
    self.host = host
    self.port = port
    self.device = device
  }

  /// Parses `host[:port[:device]]`; empty parts take their defaults. Returns `nil` when the
  /// port is not a number in 1...65535.
  public init?(parsing text: String) {
    var rest = Substring(text)
    var host = "localhost"
    if rest.hasPrefix("[") {
      guard let close = rest.firstIndex(of: "]") else { return nil }
      host = String(rest[rest.index(after: rest.startIndex)..<close])
      rest = rest[rest.index(after: close)...]
      if rest.hasPrefix(":") { rest = rest.dropFirst() } else if !rest.isEmpty { return nil }
    } else {
      let head = rest.prefix { $0 != ":" }
      if !head.isEmpty { host = String(head) }
      rest = rest.dropFirst(head.count)
      if rest.hasPrefix(":") { rest = rest.dropFirst() }
    }
    var port = GPSDEndpoint.defaultPort
    let portText = rest.prefix { $0 != ":" }
    if !portText.isEmpty {
      guard let number = UInt16(portText), number > 0 else { return nil }
      port = number
    }
    rest = rest.dropFirst(portText.count)
    if rest.hasPrefix(":") { rest = rest.dropFirst() }
    self.init(host: host, port: port, device: rest.isEmpty ? nil : String(rest))
  }

  /// `host:port` or `host:port:device`.
  public var description: String {
    let shownHost = host.contains(":") ? "[\(host)]" : host
    return device.map { "\(shownHost):\(port):\($0)" } ?? "\(shownHost):\(port)"
  }
}
