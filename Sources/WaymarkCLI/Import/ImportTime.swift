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
    guard let date = Timestamp.parseISO8601(text) else { return nil }
    return plausible((date.timeIntervalSince1970 * 1000).rounded())
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
}
