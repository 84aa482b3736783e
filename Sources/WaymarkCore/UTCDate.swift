import FoundationEssentials

/// A proleptic Gregorian calendar date in UTC, with conversions that need no `Calendar`.
///
/// Waymark formats and parses times itself so that output is byte-identical on every machine,
/// whatever the locale or time zone, and fast enough for the replay hot path.
public struct UTCDate: Sendable, Hashable, Comparable {
  /// Year, for example 2026.
  public var year: Int
  /// Month, 1...12.
  public var month: Int
  /// Day of the month, 1...31.
  public var day: Int

  /// Creates a date; returns `nil` when the day does not exist in that month.
  public init?(year: Int, month: Int, day: Int) {
    // Years of four digits: an instant of any such date fits its millisecond arithmetic (the
    // fuzzer found a ZDA year of 20201777777770 overflowing it).
    guard (1...9999).contains(year), (1...12).contains(month), day >= 1,
      day <= UTCDate.daysInMonth(year: year, month: month)
    else { return nil }
    self.year = year
    self.month = month
    self.day = day
  }

  private init(unchecked year: Int, _ month: Int, _ day: Int) {
    self.year = year
    self.month = month
    self.day = day
  }

  /// Whether `year` is a Gregorian leap year.
  public static func isLeapYear(_ year: Int) -> Bool {
    (year % 4 == 0 && year % 100 != 0) || year % 400 == 0
  }

  /// Number of days in `month` of `year`.
  public static func daysInMonth(year: Int, month: Int) -> Int {
    switch month {
    case 2: return isLeapYear(year) ? 29 : 28
    case 4, 6, 9, 11: return 30
    default: return 31
    }
  }

  /// Days since 1970-01-01 (negative before it).
  public var daysSinceEpoch: Int {
    // Shift the year to start in March so that the leap day is the last day of the year.
    let shiftedYear = month <= 2 ? year - 1 : year
    let era = (shiftedYear >= 0 ? shiftedYear : shiftedYear - 399) / 400
    let yearOfEra = shiftedYear - era * 400
    let monthFromMarch = (month + 9) % 12
    let dayOfYear = (153 * monthFromMarch + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
  }

  /// The date `daysSinceEpoch` days after 1970-01-01.
  public init(daysSinceEpoch days: Int) {
    let shifted = days + 719_468
    let era = (shifted >= 0 ? shifted : shifted - 146_096) / 146_097
    let dayOfEra = shifted - era * 146_097
    let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
    let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
    let monthFromMarch = (5 * dayOfYear + 2) / 153
    let day = dayOfYear - (153 * monthFromMarch + 2) / 5 + 1
    let month = monthFromMarch < 10 ? monthFromMarch + 3 : monthFromMarch - 9
    let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
    self.init(unchecked: year, month, day)
  }

  /// The next calendar day.
  public var next: UTCDate { UTCDate(daysSinceEpoch: daysSinceEpoch + 1) }

  /// The instant at `milliseconds` after midnight UTC of this date.
  public func instant(millisecondsOfDay milliseconds: Int) -> Date {
    Timestamp.date(milliseconds: Int64(daysSinceEpoch) * 86_400_000 + Int64(milliseconds))
  }

  public static func < (lhs: UTCDate, rhs: UTCDate) -> Bool {
    (lhs.year, lhs.month, lhs.day) < (rhs.year, rhs.month, rhs.day)
  }
}

extension UTCDate {
  /// Parses `yyyy-mm-dd`.
  public init?(iso string: some StringProtocol) {
    let parts = string.split(separator: "-")
    guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
      let year = Int(parts[0]), let month = Int(parts[1]), let day = Int(parts[2])
    else { return nil }
    self.init(year: year, month: month, day: day)
  }
}
