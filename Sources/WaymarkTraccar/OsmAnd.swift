import FoundationEssentials
import WaymarkCore

/// The OsmAnd protocol's query for one location, as Traccar's server reads it.
///
/// `id` the device, `timestamp` Unix seconds, `lat`/`lon` degrees (7 decimals), `speed` in knots
/// (the protocol's unit), `bearing` degrees, `altitude` metres above mean sea level (3D fixes),
/// `accuracy` metres (horizontal), `hdop`, `sat` (satellites used; Traccar keeps unknown
/// parameters as attributes) and `valid=true`. Unknown values are left out.
package enum OsmAnd {
  /// Metres per second in one knot.
  static let metersPerSecondPerKnot = 1852.0 / 3600.0

  /// The query for `fix` (without `?`), or `nil` when it has no time or position.
  package static func query(_ fix: Fix, deviceID: String) -> String? {
    guard fix.isUsable, let time = fix.time, let coordinate = fix.coordinate,
      coordinate.latitude.isFinite, coordinate.longitude.isFinite
    else { return nil }
    var parts = ["id=" + percentEncoded(deviceID)]
    parts.append("timestamp=\(Int(saturating: time.timeIntervalSince1970.rounded(.down)))")
    parts.append("lat=" + fixed(coordinate.latitude, 7))
    parts.append("lon=" + fixed(coordinate.longitude, 7))
    func add(_ name: String, _ value: Double?, _ decimals: Int) {
      guard let value, value.isFinite else { return }
      parts.append("\(name)=" + fixed(value, decimals))
    }
    add("speed", fix.speed.map { $0 / metersPerSecondPerKnot }, 2)
    add("bearing", fix.track, 1)
    if fix.mode == .threeDimensional { add("altitude", fix.altitudeMSL, 1) }
    add("accuracy", fix.horizontalError, 1)
    add("hdop", fix.hdop, 2)
    if let satellites = fix.satellitesUsed { parts.append("sat=\(satellites)") }
    parts.append("valid=true")
    return parts.joined(separator: "&")
  }

  /// `text` with every byte but RFC 3986's unreserved characters percent-encoded (UTF-8).
  package static func percentEncoded(_ text: String) -> String {
    var result = ""
    for byte in text.utf8 {
      switch byte {
      case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
        UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
        UInt8(ascii: "_"), UInt8(ascii: "~"):
        result.unicodeScalars.append(Unicode.Scalar(byte))
      default:
        let digits = Array("0123456789ABCDEF")
        result += "%" + String(digits[Int(byte >> 4)]) + String(digits[Int(byte & 15)])
      }
    }
    return result
  }

  private static func fixed(_ value: Double, _ decimals: Int) -> String {
    var bytes: [UInt8] = []
    JSONLine.appendFixed(value, decimals: decimals, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }
}
