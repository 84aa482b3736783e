import FoundationEssentials
import Glibc

/// Who a device is on the broker: its device name (the last level of its topic), its MQTT
/// client id and its OwnTracks tracker id.
///
/// Unique per machine by default, also in a fleet flashed from one image where every host has
/// the same name: the name is `<hostname>-<12 hex digits>`, the digits from the machine id
/// (`/etc/machine-id`) hashed for this application as systemd recommends
/// (`sd_id128_get_machine_app_specific`: HMAC-SHA-256 keyed by the machine id over
/// ``applicationID``), so the machine id itself is never sent and the value means nothing to
/// another application. The host name is only a readable prefix. Without a machine id the host
/// name alone is used, as before.
package struct MQTTIdentity: Sendable, Hashable {
  /// The device name: `<hostname>-<12 hex digits>`, or the host name without a machine id.
  package var device: String
  /// The client id: `waymark-<device>`.
  package var clientID: String { "waymark-\(device)" }
  /// The base topic: `owntracks/waymark/<device>`.
  package var topic: String { "owntracks/waymark/\(device)" }
  /// OwnTracks' two-character tracker id: two characters (`a-z`, `0-9`) of the hashed id, or the
  /// host name's first two letters without a machine id.
  package var tid: String
  /// Whether the name comes from the machine id (`false`: the host name alone).
  package var isFromMachineID: Bool

  /// Waymark's application id for the MQTT identity (made once with `systemd-id128 new`).
  package static let applicationID = "7edf079dc7dd45049d446252b2124ad3"

  /// The identity of a machine called `hostname` with `machineID` (32 hex digits), or of the
  /// host name alone when `machineID` is `nil` or not a machine id.
  package init(hostname: String, machineID: String?) {
    let name = Self.topicSafe(hostname)
    guard let machineID, let id = Self.appSpecificID(machineID: machineID) else {
      device = name
      tid = String(name.prefix(2))
      isFromMachineID = false
      return
    }
    let hex = Self.hex(id)
    device = "\(name)-\(hex.prefix(12))"
    let alphabet = Array("abcdefghijklmnopqrstuvwxyz0123456789")
    let value = Int(id[8]) << 8 | Int(id[9])
    tid = String([alphabet[value % 36], alphabet[(value / 36) % 36]])
    isFromMachineID = true
  }

  /// This machine's identity (`gethostname`, `/etc/machine-id`).
  package static func current(machineIDPath: String = "/etc/machine-id") -> MQTTIdentity {
    MQTTIdentity(hostname: MQTTSettings.hostname(), machineID: machineID(path: machineIDPath))
  }

  /// The machine id in the file at `path` (its first line), or `nil`.
  package static func machineID(path: String = "/etc/machine-id") -> String? {
    guard let data = FileManager.default.contents(atPath: path) else { return nil }
    let text = String(decoding: data, as: UTF8.self)
    let line = text.split(separator: "\n").first.map(String.init) ?? ""
    return bytes(hex: line) == nil ? nil : line
  }

  /// The 16 bytes of the application-specific id of `machineID` (as
  /// `systemd-id128 machine-id --app-specific=<applicationID>` prints them), or `nil` when
  /// either is not 32 hex digits.
  package static func appSpecificID(machineID: String, applicationID: String = applicationID)
    -> [UInt8]?
  {
    guard let key = bytes(hex: machineID), let message = bytes(hex: applicationID) else {
      return nil
    }
    var id = Array(SHA256.hmac(key: key, message: message).prefix(16))
    // A version 4, variant 1 UUID, as systemd makes it.
    id[6] = (id[6] & 0x0F) | 0x40
    id[8] = (id[8] & 0x3F) | 0x80
    return id
  }

  /// Lower-case hex of `bytes`.
  package static func hex(_ bytes: [UInt8]) -> String {
    let digits = Array("0123456789abcdef")
    return String(bytes.flatMap { [digits[Int($0 >> 4)], digits[Int($0 & 15)]] })
  }

  private static func bytes(hex text: String) -> [UInt8]? {
    let digits = Array(text.utf8)
    guard digits.count == 32 else { return nil }
    var result: [UInt8] = []
    for index in stride(from: 0, to: 32, by: 2) {
      guard let high = nibble(digits[index]), let low = nibble(digits[index + 1]) else {
        return nil
      }
      result.append(high << 4 | low)
    }
    return result
  }

  private static func nibble(_ digit: UInt8) -> UInt8? {
    switch digit {
    case UInt8(ascii: "0")...UInt8(ascii: "9"): digit - UInt8(ascii: "0")
    case UInt8(ascii: "a")...UInt8(ascii: "f"): digit - UInt8(ascii: "a") + 10
    case UInt8(ascii: "A")...UInt8(ascii: "F"): digit - UInt8(ascii: "A") + 10
    default: nil
    }
  }

  /// `name` without what a topic level or a client id cannot hold (`/`, `+`, `#`, spaces and
  /// controls become `-`); `waymark` when empty.
  static func topicSafe(_ name: String) -> String {
    let safe = String(
      name.unicodeScalars.map { scalar -> Character in
        let bad =
          scalar == "/" || scalar == "+" || scalar == "#" || scalar.value <= 0x20
          || scalar.value == 0x7F
        return bad ? "-" : Character(scalar)
      })
    return safe.isEmpty ? "waymark" : safe
  }
}
