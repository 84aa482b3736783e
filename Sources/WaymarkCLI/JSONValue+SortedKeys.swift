import WaymarkCore

extension JSONValue {
  /// The value as compact JSON with the members of every object sorted by key (case-insensitive
  /// first, then by scalar), the last of repeated keys kept: the form `visits record` stores a
  /// recorded event's reason in. Whole numbers below 2^53 print without a fraction, other
  /// numbers as Swift prints a `Double`; a non-finite number prints `null`.
  var sortedKeysText: String {
    var bytes: [UInt8] = []
    appendSorted(to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  private func appendSorted(to bytes: inout [UInt8]) {
    switch self {
    case .null: bytes.append(contentsOf: "null".utf8)
    case .bool(let value): bytes.append(contentsOf: (value ? "true" : "false").utf8)
    case .number(let value):
      if !value.isFinite {
        bytes.append(contentsOf: "null".utf8)
      } else if value == value.rounded(), abs(value) < 9_007_199_254_740_992 {
        JSONLine.appendInteger(Int(value), to: &bytes)
      } else {
        bytes.append(contentsOf: value.description.utf8)
      }
    case .string(let text): JSONLine.appendString(text, to: &bytes)
    case .array(let elements):
      bytes.append(UInt8(ascii: "["))
      for (index, element) in elements.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        element.appendSorted(to: &bytes)
      }
      bytes.append(UInt8(ascii: "]"))
    case .object(let members):
      var latest: [String: JSONValue] = [:]
      for member in members { latest[member.key] = member.value }
      let keys = latest.keys.sorted { ($0.lowercased(), $0) < ($1.lowercased(), $1) }
      bytes.append(UInt8(ascii: "{"))
      for (index, key) in keys.enumerated() {
        if index > 0 { bytes.append(UInt8(ascii: ",")) }
        JSONLine.appendString(key, to: &bytes)
        bytes.append(UInt8(ascii: ":"))
        latest[key]!.appendSorted(to: &bytes)
      }
      bytes.append(UInt8(ascii: "}"))
    }
  }
}
