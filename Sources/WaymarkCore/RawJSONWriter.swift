import FoundationEssentials

/// Writes JSON into a fixed buffer without allocating: the engine of ``JSONLine``'s fixed-point
/// numbers, and the hot path of `waymark replay --fixes` (`Fix.appendTPV(to:)`: each fix's TPV
/// object without an allocation).
///
/// Not a second JSON writer: write JSON with ``JSONLine``, which escapes strings and keeps
/// objects well formed; use this only where a benchmark shows ``JSONLine`` is too slow (today the
/// TPV object alone). The caller guarantees the capacity (a TPV object is under 400 bytes).
struct RawJSONWriter {
  private let base: UnsafeMutablePointer<UInt8>
  private(set) var count = 0
  private var needsComma = false

  init(_ base: UnsafeMutablePointer<UInt8>) {
    self.base = base
  }

  @inline(__always)
  mutating func byte(_ value: UInt8) {
    base[count] = value
    count += 1
  }

  @inline(__always)
  mutating func bytes(_ text: StaticString) {
    text.withUTF8Buffer { buffer in
      (base + count).update(from: buffer.baseAddress!, count: buffer.count)
      count += buffer.count
    }
  }

  /// Writes `"name":` (with a leading comma after the first member). `name` must not need
  /// escaping.
  @inline(__always)
  mutating func key(_ name: StaticString) {
    if needsComma { byte(UInt8(ascii: ",")) }
    needsComma = true
    byte(UInt8(ascii: "\""))
    bytes(name)
    byte(UInt8(ascii: "\""))
    byte(UInt8(ascii: ":"))
  }

  /// Writes the member `name` with `value` to `decimals` decimals (``fixed(_:decimals:)``), or
  /// nothing when `value` is `nil`, not finite or 10^12 or more in magnitude (a TPV object's
  /// numbers). Inlined where it is called: the name's length is then a constant.
  @inline(__always)
  mutating func number(_ name: StaticString, _ value: Double?, _ decimals: Int) {
    guard let value, value.isFinite, abs(value) < 1e12 else { return }
    key(name)
    fixed(value, decimals: decimals)
  }

  mutating func integer(_ value: Int) {
    if value < 0 { byte(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    var digits = 1
    var probe = magnitude
    while probe >= 10 {
      probe /= 10
      digits += 1
    }
    var position = count + digits
    count = position
    repeat {
      position -= 1
      base[position] = UInt8(48 + magnitude % 10)
      magnitude /= 10
    } while magnitude > 0
  }

  /// A number with exactly `decimals` digits after the point, rounded half away from zero.
  /// Returns false (writing nothing) when the value is too large for fixed point or `decimals`
  /// is outside 0...18.
  @discardableResult
  mutating func fixed(_ value: Double, decimals: Int) -> Bool {
    guard (0...18).contains(decimals) else { return false }
    let scaled = abs(value) * PowerOfTen.double(decimals)
    // From 2^52 up every double is an integer, so this is `scaled.rounded() < 9.0e18` (and
    // false for NaN).
    guard scaled < 9.0e18 else { return false }
    // Rounded half away from zero, as `rounded()` but without a call to libm: what the
    // truncation leaves, `scaled - Double(units)`, is exact.
    var units = UInt64(scaled)
    if scaled - Double(units) >= 0.5 { units += 1 }
    if value < 0 && units != 0 { byte(UInt8(ascii: "-")) }
    let (integerPart, fraction) = Self.split(units, decimals: decimals)
    var integerDigits = 1
    var probe = integerPart
    while probe >= 10 {
      probe /= 10
      integerDigits += 1
    }
    count += integerDigits
    Self.write(integerPart, digits: integerDigits, before: base + count)
    if decimals > 0 {
      base[count] = UInt8(ascii: ".")
      count += decimals + 1
      Self.write(fraction, digits: decimals, before: base + count)
    }
    return true
  }

  /// `units` as its integer part and its last `decimals` digits (0...18), each division by a
  /// constant (a multiplication).
  @inline(__always)
  private static func split(_ units: UInt64, decimals: Int) -> (UInt64, UInt64) {
    switch decimals {
    case 0: (units, 0)
    case 1: units.quotientAndRemainder(dividingBy: 10)
    case 2: units.quotientAndRemainder(dividingBy: 100)
    case 3: units.quotientAndRemainder(dividingBy: 1_000)
    case 4: units.quotientAndRemainder(dividingBy: 10_000)
    case 5: units.quotientAndRemainder(dividingBy: 100_000)
    case 6: units.quotientAndRemainder(dividingBy: 1_000_000)
    case 7: units.quotientAndRemainder(dividingBy: 10_000_000)
    case 8: units.quotientAndRemainder(dividingBy: 100_000_000)
    case 9: units.quotientAndRemainder(dividingBy: 1_000_000_000)
    default: units.quotientAndRemainder(dividingBy: UInt64(PowerOfTen.integer(decimals)))
    }
  }

  /// Writes the last `width` decimal digits of `value` (zero-padded) into the `width` bytes
  /// before `end`, two digits per division.
  @inline(__always)
  private static func write(
    _ value: UInt64, digits width: Int, before end: UnsafeMutablePointer<UInt8>
  ) {
    var value = value
    var end = end
    var width = width
    while width >= 2 {
      let next = value / 100
      let pair = UInt32(truncatingIfNeeded: value &- next &* 100)
      // pair / 10 for 0...99, without a division.
      let tens = (pair &* 103) >> 10
      end -= 2
      end[0] = UInt8(truncatingIfNeeded: 48 &+ tens)
      end[1] = UInt8(truncatingIfNeeded: 48 &+ pair &- tens &* 10)
      value = next
      width -= 2
    }
    if width == 1 { end[-1] = UInt8(truncatingIfNeeded: 48 &+ value % 10) }
  }

  @inline(__always)
  private mutating func digits(_ value: Int, _ width: Int) {
    count += width
    Self.write(UInt64(truncatingIfNeeded: value), digits: width, before: base + count)
  }

  /// `"yyyy-mm-ddThh:mm:ss.sssZ"`, with quotes.
  mutating func timestamp(_ date: Date) {
    let (civil, ms) = Timestamp.split(date)
    byte(UInt8(ascii: "\""))
    guard (0...9999).contains(civil.year) else {
      // Outside four-digit years: the general formatter handles it.
      for character in Timestamp.format(date).utf8 { byte(character) }
      byte(UInt8(ascii: "\""))
      return
    }
    digits(civil.year, 4)
    byte(UInt8(ascii: "-"))
    digits(civil.month, 2)
    byte(UInt8(ascii: "-"))
    digits(civil.day, 2)
    byte(UInt8(ascii: "T"))
    digits(ms / 3_600_000, 2)
    byte(UInt8(ascii: ":"))
    digits(ms / 60_000 % 60, 2)
    byte(UInt8(ascii: ":"))
    digits(ms / 1000 % 60, 2)
    byte(UInt8(ascii: "."))
    digits(ms % 1000, 3)
    byte(UInt8(ascii: "Z"))
    byte(UInt8(ascii: "\""))
  }
}
