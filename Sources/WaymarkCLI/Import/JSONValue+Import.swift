import WaymarkCore

/// The readings of JSON values that the import's formats share.
extension JSONValue {
  /// The number, or a string that holds one (Takeout writes `timestampMs` as a string).
  var importNumber: Double? {
    switch self {
    case .number(let number): number
    case .string(let text): Double(text)
    default: nil
    }
  }

  /// The string.
  var importText: String? {
    guard case .string(let text) = self else { return nil }
    return text
  }

  /// The elements of an array.
  var importElements: [JSONValue]? {
    guard case .array(let elements) = self else { return nil }
    return elements
  }

  /// A time: an ISO 8601 string, or a number (or numeric string) of seconds or milliseconds.
  var importMilliseconds: Int64? {
    switch self {
    case .number(let number): ImportTime.milliseconds(number: number)
    case .string(let text): ImportTime.milliseconds(text)
    default: nil
    }
  }

  /// The member at `keys`, one object inside another.
  subscript(path keys: String...) -> JSONValue? {
    var value: JSONValue? = self
    for key in keys { value = value?[key] }
    return value
  }

  /// An angle in degrees from E7 (degrees × 10⁷) at `key`, as Takeout writes them. A value
  /// beyond `limit` × 10⁷ but below 2³² is a signed 32-bit value written unsigned (some
  /// Takeout exports have them) and is read as such; anything else beyond the limit is
  /// returned as it is, for the caller to reject.
  func importE7(_ key: String, limit: Double) -> Double? {
    guard let value = self[key]?.importNumber else { return nil }
    if abs(value) > limit * 1e7, value < 4_294_967_296, value > 0 {
      return (value - 4_294_967_296) / 1e7
    }
    return value / 1e7
  }
}
