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
    let scale = PowerOfTen.double(decimals)
    let scaled = (abs(value) * scale).rounded()
    guard scaled < 9.0e18 else { return false }
    var units = UInt64(scaled)
    if value < 0 && units != 0 { byte(UInt8(ascii: "-")) }
    var integerDigits = 1
    var probe = units / UInt64(scale)
    while probe >= 10 {
      probe /= 10
      integerDigits += 1
    }
    let total = integerDigits + (decimals > 0 ? decimals + 1 : 0)
    var position = count + total
    count = position
    for _ in 0..<decimals {
      position -= 1
      base[position] = UInt8(48 + units % 10)
      units /= 10
    }
    if decimals > 0 {
      position -= 1
      base[position] = UInt8(ascii: ".")
    }
    repeat {
      position -= 1
      base[position] = UInt8(48 + units % 10)
      units /= 10
    } while position > count - total
    return true
  }

  @inline(__always)
  private mutating func digits(_ value: Int, _ width: Int) {
    var value = value
    var position = count + width
    count = position
    for _ in 0..<width {
      position -= 1
      base[position] = UInt8(48 + value % 10)
      value /= 10
    }
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
