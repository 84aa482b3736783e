import FoundationEssentials
import Glibc

/// Where and how Waymark publishes to an MQTT broker (waymarkd's `mqtt-*` keys, DESIGN §9).
public struct MQTTSettings: Sendable, Hashable {
  /// The broker's host.
  public var host: String
  /// The broker's port (1883, 8883 with TLS).
  public var port: UInt16
  /// The base topic: locations go there, transitions to `<topic>/event`, the places to
  /// `<topic>/waypoints`; commands are read from `<topic>/cmd`.
  public var topic: String
  /// OwnTracks' tracker id (two characters shown on maps).
  public var tid: String
  /// Quality of service of every message (1: at least once).
  public var qos = 1
  /// Seconds of fix time between location messages; 0 sends every fix.
  public var intervalSeconds: Double = 30
  /// The user name, or `nil`.
  public var username: String?
  /// The password (read from `mqtt-password-file`), or `nil`.
  public var password: String?
  /// A CA certificate file: TLS when set.
  public var caFile: String?
  /// The MQTT client id (default `waymark-<host name>`).
  public var clientID: String
  /// Messages the outbox may hold; past it the oldest location messages are dropped
  /// (transitions never are).
  public var outboxMaximum = 100_000

  /// Settings for `host:port` with the default topic `owntracks/waymark/<hostname>`.
  public init(host: String, port: UInt16 = 1883, hostname: String = MQTTSettings.hostname()) {
    self.host = host
    self.port = port
    topic = "owntracks/waymark/\(hostname)"
    tid = String(hostname.prefix(2))
    clientID = "waymark-\(hostname)"
  }

  /// Parses `host[:port]`.
  public init?(parsing text: String) {
    var host = Substring(text)
    var port: UInt16 = 1883
    if let colon = text.lastIndex(of: ":") {
      guard let parsed = UInt16(text[text.index(after: colon)...]), parsed > 0 else { return nil }
      port = parsed
      host = text[..<colon]
    }
    guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { return nil }
    self.init(host: String(host), port: port)
  }

  /// This machine's host name (`gethostname`), or `waymark`.
  public static func hostname() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "waymark" }
    let name = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "waymark" : name
  }
}
