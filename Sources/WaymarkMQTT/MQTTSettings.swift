import FoundationEssentials
import Glibc
import WaymarkCore

/// Where and how Waymark publishes to an MQTT broker (waymarkd's `mqtt-*` keys).
///
/// Safe by default: the link uses TLS on port 8883 or when asked (`mqtt-tls = yes`,
/// `mqtt-cafile`), and then verifies the broker against the system's CA store unless a CA file
/// is given; plaintext to a broker that is not on this machine is warned about at start-up, and
/// commands (`setWaypoints`) are taken only over TLS or from a loopback broker unless
/// ``acceptsRemoteCommands`` says otherwise.
package struct MQTTSettings: Sendable, Hashable {
  /// The broker's host, or the path of its Unix socket (``isUnixSocket``).
  package var host: String
  /// The broker's port (1883, 8883 with TLS); 0 for a Unix socket.
  package var port: UInt16
  /// The user a broker on this machine runs as (`mqtt-broker-user`): its endpoint must be held
  /// by that user, root or our own user (`LocalBroker`).
  package var brokerUser = "mosquitto"
  /// The base topic (default `owntracks/waymark/<device>`, ``MQTTIdentity``): locations go there, transitions to `<topic>/event`, the places to
  /// `<topic>/waypoints`; commands are read from `<topic>/cmd`.
  package var topic: String
  /// OwnTracks' tracker id (two characters shown on maps; default ``MQTTIdentity/tid``).
  package var tid: String
  /// Quality of service of every message (1: at least once).
  package var qos = 1
  /// Seconds of fix time between location messages; 0 sends every fix.
  package var intervalSeconds: Double = 30
  /// The user name, or `nil`.
  package var username: String?
  /// The password (read from `mqtt-password-file`), or `nil`.
  package var password: String?
  /// `mqtt-tls`: `true` or `false` when configured; `nil` decides by ``port`` and ``caFile``
  /// (see ``usesTLS``).
  package var tls: Bool?
  /// A CA certificate file that replaces the system's CA store for verifying the broker.
  package var caFile: String?
  /// Whether `setWaypoints` commands are taken over plaintext from a broker that is not on a
  /// loopback address (`mqtt-remote-commands = yes`).
  package var acceptsRemoteCommands = false
  /// The MQTT client id (default `waymark-<device>`, ``MQTTIdentity``).
  package var clientID: String
  /// Messages the outbox may hold; past it the oldest location messages are dropped, then
  /// the oldest transitions (`OutboxRepository.enqueue(_:now:maximum:)`).
  package var outboxMaximum = 100_000
  /// The device name of the identity (``MQTTIdentity/device``): Home Assistant's unique ids
  /// come from it, whatever topic or client id is configured.
  package var device: String
  /// Whether Home Assistant's MQTT discovery is published (`mqtt-homeassistant = yes`).
  package var publishesHomeAssistant = false
  /// Home Assistant's discovery prefix (`mqtt-homeassistant-prefix`).
  package var homeAssistantPrefix = "homeassistant"

  /// The system's CA bundle (Debian's `ca-certificates`), used when it exists.
  package static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"
  /// The system's CA directory, used when there is no bundle.
  package static let systemCAPath = "/etc/ssl/certs"

  /// Settings for `host:port` as `identity`: its topic, tracker id and client id (by default
  /// this machine's, unique per machine: ``MQTTIdentity``).
  package init(host: String, port: UInt16 = 1883, identity: MQTTIdentity = .current()) {
    self.host = host
    self.port = port
    topic = identity.topic
    tid = identity.tid
    clientID = identity.clientID
    device = identity.device
  }

  /// Home Assistant's discovery for these settings (its topics also when it is off: what to
  /// remove once it was on).
  package var homeAssistant: HomeAssistant {
    HomeAssistant(prefix: homeAssistantPrefix, topic: topic, identity: device, qos: qos)
  }

  /// Parses `host[:port]` or `unix:<absolute path>` (mosquitto's `listener 0 <path>`), as
  /// `identity`.
  package init?(parsing text: String, identity: MQTTIdentity = .current()) {
    if text.hasPrefix("unix:") {
      let path = String(text.dropFirst(5))
      guard path.hasPrefix("/"), !path.hasSuffix("/"), !path.contains(where: \.isNewline) else {
        return nil
      }
      self.init(host: path, port: 0, identity: identity)
      return
    }
    var host = Substring(text)
    var port: UInt16 = 1883
    if let colon = text.lastIndex(of: ":") {
      guard let parsed = UInt16(text[text.index(after: colon)...]), parsed > 0 else { return nil }
      port = parsed
      host = text[..<colon]
    }
    guard !host.isEmpty, !host.contains(where: { $0.isWhitespace }) else { return nil }
    self.init(host: String(host), port: port, identity: identity)
  }

  /// Whether the broker is reached through a Unix socket (`mqtt = unix:<path>`).
  package var isUnixSocket: Bool { port == 0 }

  /// The broker as configured: `host:port` or `unix:<path>`.
  package var endpoint: String { isUnixSocket ? "unix:\(host)" : "\(host):\(port)" }

  /// Whether the link uses TLS: as configured by `mqtt-tls`, else on port 8883 or with a CA
  /// file.
  package var usesTLS: Bool { tls ?? (port == 8883 || caFile != nil) }

  /// What verifies the broker's certificate: ``caFile`` when set, else the system's bundle
  /// (``systemCAFile``) when it exists, else the system's directory (``systemCAPath``).
  package var trustAnchors: (file: String?, directory: String?) {
    if let caFile { return (caFile, nil) }
    if access(Self.systemCAFile, R_OK) == 0 { return (Self.systemCAFile, nil) }
    return (nil, Self.systemCAPath)
  }

  /// Whether the broker is on this machine: a Unix socket, `localhost`, or a literal address in
  /// 127.0.0.0/8, `::1` or `::ffff:127.0.0.0/104`. Any other name counts as remote, whatever it
  /// resolves to today.
  package var isLoopbackBroker: Bool { isUnixSocket || Self.isLoopback(host: host) }

  /// Whether `setWaypoints` commands are taken: over TLS, from a loopback broker, or when
  /// ``acceptsRemoteCommands``.
  package var acceptsCommands: Bool { usesTLS || isLoopbackBroker || acceptsRemoteCommands }

  /// The start-up warning for this link, or `nil`: plaintext to a broker that is not on a
  /// loopback address sends the positions (and the password) readable by anyone on the path.
  package var plaintextWarning: String? {
    guard !usesTLS, !isLoopbackBroker else { return nil }
    let secrets = password != nil ? "the password and the positions" : "the positions"
    return "MQTT: plaintext to \(host):\(port), which is not a loopback address: \(secrets) "
      + "cross the network unencrypted (use port 8883 or mqtt-tls = yes)"
  }

  /// Whether `host` names this machine's loopback interface (see ``isLoopbackBroker``):
  /// `LoopbackHost.contains(_:)`.
  package static func isLoopback(host: String) -> Bool { LoopbackHost.contains(host) }

  /// This machine's host name (`gethostname`), or `waymark`.
  package static func hostname() -> String {
    var buffer = [CChar](repeating: 0, count: 256)
    guard gethostname(&buffer, buffer.count - 1) == 0 else { return "waymark" }
    let name = String(
      decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    return name.isEmpty ? "waymark" : name
  }
}
