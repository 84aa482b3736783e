/// A value bound to a statement parameter or read from a result column.
///
/// Values are always bound, never interpolated into SQL text.
public enum SQLValue: Sendable, Hashable {
  /// SQL `NULL`.
  case null
  /// A 64-bit integer.
  case integer(Int64)
  /// A double-precision float.
  case real(Double)
  /// UTF-8 text.
  case text(String)
  /// Raw bytes.
  case blob([UInt8])

  /// `.text(value)`, or `.null` when `value` is `nil`.
  public static func text(_ value: String?) -> SQLValue {
    value.map { .text($0) } ?? .null
  }

  /// `.real(value)`, or `.null` when `value` is `nil` or not finite.
  public static func real(_ value: Double?) -> SQLValue {
    guard let value, value.isFinite else { return .null }
    return .real(value)
  }

  /// `.integer(value)`, or `.null` when `value` is `nil`.
  public static func integer(_ value: Int?) -> SQLValue {
    value.map { .integer(Int64($0)) } ?? .null
  }
}
