import FoundationEssentials
import WaymarkCore

/// The times of imported files, read as milliseconds since 1970 (UTC).
///
/// ISO 8601 as GPX, Google Takeout and CSV exports write it: `yyyy-mm-ddThh:mm:ss`, a space
/// instead of the `T`, a fraction of any length (milliseconds kept, the rest truncated), and a
/// zone: `Z`, `±hh:mm`, `±hhmm` or `±hh` (none: UTC). Or a number: seconds since 1970, or
/// milliseconds when it is 1e11 or more (a date after 1973 in milliseconds; before 5138 in
/// seconds). A time outside ``Fix/Limits`` (1980-01-06 to 2200) is no time: `nil`.
enum ImportTime {
  /// `text` read as ISO 8601, or as a number of seconds or milliseconds.
  static func milliseconds(_ text: some StringProtocol) -> Int64? {
    let bytes = Array(text.utf8)
    if let first = bytes.first, first == UInt8(ascii: "-") || (first >= 48 && first <= 57),
      bytes.count < 10 || bytes[4] != UInt8(ascii: "-"), let number = Double(String(text))
    {
      return milliseconds(number: number)
    }
    return iso(bytes)
  }

  /// `number` as seconds since 1970, or milliseconds when it is 1e11 or more.
  static func milliseconds(number: Double) -> Int64? {
    guard number.isFinite else { return nil }
    let seconds = abs(number) >= 1e11 ? number / 1000 : number
    return plausible(seconds * 1000)
  }

  /// `value` (milliseconds since 1970) when it is within ``Fix/Limits``.
  static func plausible(_ value: Double) -> Int64? {
    guard value.isFinite, Fix.Limits.isPlausibleTime(seconds1970: value / 1000) else { return nil }
    return Int64(saturating: value.rounded(.down))
  }

  private static func iso(_ utf8: [UInt8]) -> Int64? {
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
    var fraction = 0
    if index < utf8.count, utf8[index] == UInt8(ascii: ".") || utf8[index] == UInt8(ascii: ",") {
      index += 1
      var scale = 100
      let start = index
      while index < utf8.count, utf8[index] >= 48, utf8[index] <= 57 {
        fraction += Int(utf8[index] - 48) * scale
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
        let sign = utf8[index] == UInt8(ascii: "-") ? -1 : 1
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
        offsetMinutes = sign * (hours * 60 + minutes)
      default:
        return nil
      }
    }
    let local = date.instant(
      millisecondsOfDay: ((hour * 60 + minute) * 60 + second) * 1000 + fraction)
    let value = local.timeIntervalSince1970 * 1000 - Double(offsetMinutes) * 60_000
    return plausible(value.rounded())
  }
}
