import FoundationEssentials
import WaymarkCore

/// Conversions between `Date` and the store's integer milliseconds since 1970 (UTC).
enum StoreTime {
  /// `date` as whole milliseconds since 1970, rounded like ``Timestamp``.
  static func value(_ date: Date) -> SQLValue { .integer(Timestamp.milliseconds(date)) }

  /// `date` as milliseconds, or `NULL`.
  static func value(_ date: Date?) -> SQLValue { date.map(value) ?? .null }

  /// The `Date` for `milliseconds` since 1970.
  static func date(_ milliseconds: Int64) -> Date {
    Timestamp.date(milliseconds: milliseconds)
  }
}
