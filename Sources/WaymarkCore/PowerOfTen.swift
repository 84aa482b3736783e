/// Exact powers of ten for the number parsers and formatters, without a global table (a static
/// array costs a lazy-initialisation check on every access in the hot path).
public enum PowerOfTen {
  /// 10^`exponent` as a `Double`, exact for 0...22 (and the nearest double above that).
  @inline(__always)
  public static func double(_ exponent: Int) -> Double {
    switch exponent {
    case 0: 1
    case 1: 1e1
    case 2: 1e2
    case 3: 1e3
    case 4: 1e4
    case 5: 1e5
    case 6: 1e6
    case 7: 1e7
    case 8: 1e8
    case 9: 1e9
    case 10: 1e10
    case 11: 1e11
    case 12: 1e12
    case 13: 1e13
    case 14: 1e14
    case 15: 1e15
    case 16: 1e16
    case 17: 1e17
    case 18: 1e18
    default: exponent < 0 ? 1 : pow10Slow(exponent)
    }
  }

  /// 10^`exponent` as an `Int64`, for 0...18.
  @inline(__always)
  public static func integer(_ exponent: Int) -> Int64 {
    var value: Int64 = 1
    for _ in 0..<min(max(exponent, 0), 18) { value &*= 10 }
    return value
  }

  private static func pow10Slow(_ exponent: Int) -> Double {
    var value = 1e18
    for _ in 18..<exponent { value *= 10 }
    return value
  }
}
