import FoundationEssentials
import WaymarkCore

/// Where and how `waymarkd` sends its locations to a Traccar server (the `traccar-*` keys): the
/// OsmAnd protocol over HTTP or HTTPS, as Traccar's own phone client does.
///
/// A location goes when `intervalSeconds` of fix time passed since the last one sent and the
/// device moved at least `distanceMeters` from it; while it stays within that distance, a
/// heartbeat (the newest fix) goes every `heartbeatSeconds`.
package struct TraccarSettings: Sendable, Hashable {
  /// The server's OsmAnd endpoint, `http://` or `https://` (Traccar listens on port 5055).
  package var url: String
  /// The device's identifier on the server (Traccar's "identifier" of the device).
  package var deviceID: String
  /// Seconds of fix time between two locations while the device moves.
  package var intervalSeconds: Double = 30
  /// Metres from the last location sent under which the device counts as still.
  package var distanceMeters: Double = 20
  /// Seconds of fix time between heartbeats while the device is still.
  package var heartbeatSeconds: Double = 300
  /// A CA certificate that verifies the server instead of the system's CA store.
  package var caFile: String?
  /// Locations the outbox may hold for the server; past it the oldest go.
  package var outboxMaximum = 100_000

  /// The system's CA bundle (Debian's `ca-certificates`).
  package static let systemCAFile = "/etc/ssl/certs/ca-certificates.crt"

  /// Settings for the server at `url` (`http://` or `https://`, a host, no spaces, no
  /// fragment), or `nil` when it is not such a URL.
  package init?(url: String, deviceID: String) {
    let lower = url.lowercased()
    let scheme: Int
    if lower.hasPrefix("https://") {
      scheme = 8
    } else if lower.hasPrefix("http://") {
      scheme = 7
    } else {
      return nil
    }
    let rest = url.dropFirst(scheme)
    let host = rest.prefix { $0 != "/" && $0 != "?" && $0 != ":" }
    guard !host.isEmpty, !host.hasPrefix("@"), !url.contains("#"), !url.contains("@"),
      !url.unicodeScalars.contains(where: { $0.value <= 0x20 || $0.value == 0x7F })
    else { return nil }
    self.url = url
    self.deviceID = deviceID
  }

  /// Whether the link is HTTPS.
  package var usesTLS: Bool { url.lowercased().hasPrefix("https://") }

  /// The server's host name or address, as the URL gives it.
  package var host: String {
    let rest = url.drop { $0 != "/" }.dropFirst(2)
    var host = rest.prefix { $0 != "/" && $0 != "?" }
    if host.hasPrefix("[") {
      host = host.prefix { $0 != "]" }.dropFirst()
    } else if let colon = host.lastIndex(of: ":") {
      host = host[..<colon]
    }
    return String(host)
  }

  /// The start-up warning for a plaintext link to a server that is not on this machine, or
  /// `nil`.
  package var plaintextWarning: String? {
    guard !usesTLS, !LoopbackHost.contains(host) else { return nil }
    return "Traccar: plaintext to \(host), which is not a loopback address: the positions cross "
      + "the network unencrypted (use an https:// URL)"
  }
}
