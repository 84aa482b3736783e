import FoundationEssentials

/// ISO 8601 UTC timestamps with milliseconds, as in `2026-11-29T12:00:07.000Z`.
///
/// Formatting is done by hand so that it is byte-identical everywhere and cheap enough for the
/// replay hot path.
public enum Timestamp {
  /// Milliseconds since 1970, rounded to the nearest millisecond.
  public static func milliseconds(_ date: Date) -> Int64 {
    Int64(saturating: (date.timeIntervalSince1970 * 1000).rounded())
  }

  /// The instant `milliseconds` after 1970-01-01T00:00:00Z; the inverse of
  /// ``milliseconds(_:)``.
  public static func date(milliseconds: Int64) -> Date {
    Date(timeIntervalSince1970: Double(milliseconds) / 1000)
  }

  /// Formats `date` as `yyyy-mm-ddThh:mm:ss.sssZ`.
  public static func format(_ date: Date) -> String {
    var bytes: [UInt8] = []
    bytes.reserveCapacity(24)
    append(date, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }

  /// The UTC calendar date of `date` and the milliseconds since its midnight.
  public static func split(_ date: Date) -> (date: UTCDate, millisecondsOfDay: Int) {
    let total = milliseconds(date)
    var days = total / 86_400_000
    var rest = total % 86_400_000
    if rest < 0 {
      rest += 86_400_000
      days -= 1
    }
    return (UTCDate(daysSinceEpoch: Int(days)), Int(rest))
  }

  /// Appends `date` as `yyyy-mm-ddThh:mm:ss.sssZ` to `bytes`.
  public static func append(_ date: Date, to bytes: inout [UInt8]) {
    let (civil, ms) = split(date)
    appendDigits(civil.year, count: 4, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendDigits(civil.month, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: "-"))
    appendDigits(civil.day, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: "T"))
    appendDigits(ms / 3_600_000, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDigits(ms / 60_000 % 60, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    appendDigits(ms / 1000 % 60, count: 2, to: &bytes)
    bytes.append(UInt8(ascii: "."))
    appendDigits(ms % 1000, count: 3, to: &bytes)
    bytes.append(UInt8(ascii: "Z"))
  }

  /// Parses `yyyy-mm-ddThh:mm:ss[.fff]Z` (also without fraction). Returns `nil` otherwise.
  public static func parse(_ string: String) -> Date? {
    let utf8 = Array(string.utf8)
    guard utf8.count >= 20, utf8.last == UInt8(ascii: "Z"), utf8[10] == UInt8(ascii: "T"),
      utf8.count == 20 || utf8[19] == UInt8(ascii: ".")
    else { return nil }
    return parseISO8601(utf8)
  }

  /// Parses ISO 8601 as exports write it: `yyyy-mm-ddThh:mm:ss` (or a space for the `T`), an
  /// optional fraction of any length (after `.` or `,`; milliseconds kept, further digits
  /// truncated) and an optional zone, `Z`, `±hh:mm`, `±hhmm` or `±hh` (none: UTC). Returns
  /// `nil` for anything else. ``parse(_:)`` is its strict form.
  public static func parseISO8601(_ string: some StringProtocol) -> Date? {
    parseISO8601(Array(string.utf8))
  }

  private static func parseISO8601(_ utf8: [UInt8]) -> Date? {
    guard utf8.count >= 19, utf8[10] == UInt8(ascii: "T") || utf8[10] == UInt8(ascii: " "),
      let date = UTCDate(iso: String(decoding: utf8[0..<10], as: UTF8.self))
    else { return nil }
    func number(_ range: Range<Int>) -> Int? {
      guard range.upperBound <= utf8.count else { return nil }
      var value = 0
      for byte in utf8[range] {
        guard byte >= 48, byte <= 57 else { return nil }
        value = value * 10 + Int(byte - 48)
      }
      return value
    }
    guard utf8[13] == UInt8(ascii: ":"), utf8[16] == UInt8(ascii: ":"),
      let hour = number(11..<13), let minute = number(14..<16), let second = number(17..<19),
      hour < 24, minute < 60, second < 61
    else { return nil }
    var index = 19
    var milliseconds = 0
    if index < utf8.count, utf8[index] == UInt8(ascii: ".") || utf8[index] == UInt8(ascii: ",") {
      index += 1
      // Milliseconds are the first three digits; further digits are truncated, so a fraction
      // of any length cannot overflow.
      var scale = 100
      let start = index
      while index < utf8.count, utf8[index] >= 48, utf8[index] <= 57 {
        milliseconds += Int(utf8[index] - 48) * scale
        scale /= 10
        index += 1
      }
      guard index > start else { return nil }
    }
    var offsetMinutes = 0
    if index < utf8.count {
      switch utf8[index] {
      case UInt8(ascii: "Z"), UInt8(ascii: "z"):
        guard index + 1 == utf8.count else { return nil }
      case UInt8(ascii: "+"), UInt8(ascii: "-"):
        let rest = utf8.count - index - 1
        guard let hours = number(index + 1..<index + 3), hours <= 23 else { return nil }
        var minutes = 0
        if rest == 5, utf8[index + 3] == UInt8(ascii: ":"),
          let value = number(index + 4..<index + 6)
        {
          minutes = value
        } else if rest == 4, let value = number(index + 3..<index + 5) {
          minutes = value
        } else if rest != 2 {
          return nil
        }
        guard minutes < 60 else { return nil }
        offsetMinutes = (utf8[index] == UInt8(ascii: "-") ? -1 : 1) * (hours * 60 + minutes)
      default:
        return nil
      }
    }
    let local = date.instant(
      millisecondsOfDay: ((hour * 60 + minute) * 60 + second) * 1000 + milliseconds)
    return offsetMinutes == 0 ? local : local.addingTimeInterval(-Double(offsetMinutes) * 60)
  }

  private static func appendDigits(_ value: Int, count: Int, to bytes: inout [UInt8]) {
    var divisor = 1
    for _ in 1..<count { divisor *= 10 }
    var value = value
    if value >= divisor * 10 {  // more digits than asked: print them all
      divisor = 1
      while divisor * 10 <= value { divisor *= 10 }
    }
    while divisor > 0 {
      bytes.append(UInt8(48 + value / divisor))
      value %= divisor
      divisor /= 10
    }
  }
}
