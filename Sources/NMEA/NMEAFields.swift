import WaymarkCore

/// The comma-separated fields of one framed sentence, as byte ranges into the line.
///
/// Field 0 is the address (`GPGGA`). Empty fields read as `nil`, never as zero. The value is only
/// valid while the line's bytes are alive; it never escapes the decoder.
struct NMEAFields {
  let base: UnsafePointer<UInt8>
  let starts: UnsafePointer<Int32>
  let ends: UnsafePointer<Int32>
  /// Number of fields, the address included.
  let count: Int

  /// Splits `base[start..<end]` at commas into `storage`, which must outlive the value.
  init(base: UnsafePointer<UInt8>, start: Int, end: Int, reusing storage: NMEAFieldStorage) {
    self.base = base
    let starts = storage.starts
    let ends = storage.ends
    var count = 0
    var fieldStart = start
    var index = start
    // A framed sentence is at most `maximumSentenceLength` bytes, so it has fewer fields than
    // the storage holds.
    while index < end {
      if base[index] == UInt8(ascii: ",") {
        starts[count] = Int32(fieldStart)
        ends[count] = Int32(index)
        count += 1
        fieldStart = index + 1
      }
      index += 1
    }
    starts[count] = Int32(fieldStart)
    ends[count] = Int32(end)
    self.count = count + 1
    self.starts = UnsafePointer(starts)
    self.ends = UnsafePointer(ends)
  }

  @inline(__always)
  func isEmpty(_ index: Int) -> Bool {
    index >= count || starts[index] == ends[index]
  }

  @inline(__always)
  func length(_ index: Int) -> Int {
    index < count ? Int(ends[index] - starts[index]) : 0
  }

  /// The single character of a field, or `nil` when empty.
  @inline(__always)
  func character(_ index: Int) -> UInt8? {
    isEmpty(index) ? nil : base[Int(starts[index])]
  }

  /// The bytes of a field as a string (for text fields; not on the hot path).
  func string(_ index: Int) -> String? {
    guard !isEmpty(index) else { return nil }
    let buffer = UnsafeBufferPointer(
      start: base + Int(starts[index]), count: Int(ends[index] - starts[index]))
    return String(decoding: buffer, as: UTF8.self)
  }

  /// A decimal number with an optional sign and fraction, or `nil` when empty or malformed.
  func double(_ index: Int) -> Double? {
    guard let decimal = decimal(index) else { return nil }
    return decimal.value
  }

  /// An unsigned or signed integer, or `nil` when empty or malformed. A fraction is refused.
  func int(_ index: Int) -> Int? {
    guard let decimal = decimal(index), decimal.scale == 0 else { return nil }
    return Int(decimal.mantissa)
  }

  /// A parsed decimal: `mantissa / 10^scale`, exact while the digits fit in 18.
  struct Decimal {
    var mantissa: Int64
    var scale: Int
    var negative: Bool
    var integerPart: Int64
    var fraction: Int64
    var value: Double {
      let magnitude = Double(mantissa) / NMEAFields.powersOfTen[min(scale, 22)]
      return negative ? -magnitude : magnitude
    }
  }

  static let powersOfTen: [Double] = (0...22).map { exponent in
    var value = 1.0
    for _ in 0..<exponent { value *= 10 }
    return value
  }

  func decimal(_ index: Int) -> Decimal? {
    guard !isEmpty(index) else { return nil }
    var position = Int(starts[index])
    let end = Int(ends[index])
    var negative = false
    if base[position] == UInt8(ascii: "-") || base[position] == UInt8(ascii: "+") {
      negative = base[position] == UInt8(ascii: "-")
      position += 1
    }
    var integerPart: Int64 = 0
    var fraction: Int64 = 0
    var scale = 0
    var digits = 0
    var sawPoint = false
    while position < end {
      let byte = base[position]
      if byte == UInt8(ascii: ".") {
        if sawPoint { return nil }
        sawPoint = true
      } else if byte >= 0x30 && byte <= 0x39 {
        digits += 1
        if digits > 18 {  // beyond exact Int64 range: ignore further fraction digits
          if !sawPoint { return nil }
        } else if sawPoint {
          fraction = fraction * 10 + Int64(byte - 0x30)
          scale += 1
        } else {
          integerPart = integerPart * 10 + Int64(byte - 0x30)
        }
      } else {
        return nil
      }
      position += 1
    }
    guard digits > 0 else { return nil }
    var scaleFactor: Int64 = 1
    for _ in 0..<scale { scaleFactor *= 10 }
    return Decimal(
      mantissa: integerPart * scaleFactor + fraction, scale: scale, negative: negative,
      integerPart: integerPart, fraction: fraction)
  }

  /// A `ddmm.mmmm` / `dddmm.mmmm` angle with its hemisphere letter in the next field, in signed
  /// degrees (S and W negative). `nil` when either field is empty or malformed, or the minutes
  /// are 60 or more (except exactly 60, which some receivers use for a placeholder pole).
  func angle(_ index: Int, hemisphere: Int) -> Double? {
    guard let decimal = decimal(index), !decimal.negative, let letter = character(hemisphere)
    else { return nil }
    let sign: Double
    switch letter {
    case UInt8(ascii: "N"), UInt8(ascii: "E"): sign = 1
    case UInt8(ascii: "S"), UInt8(ascii: "W"): sign = -1
    default: return nil
    }
    let degrees = decimal.integerPart / 100
    let wholeMinutes = decimal.integerPart % 100
    var scaleFactor: Int64 = 1
    for _ in 0..<decimal.scale { scaleFactor *= 10 }
    let minuteUnits = wholeMinutes * scaleFactor + decimal.fraction  // minutes * 10^scale
    guard minuteUnits <= 60 * scaleFactor else { return nil }
    let value = Double(degrees) + Double(minuteUnits) / (60 * Double(scaleFactor))
    return sign * value
  }

  /// A `hhmmss[.sss]` UTC time of day in milliseconds (fractions beyond milliseconds rounded
  /// down), or `nil` when empty or out of range.
  func timeOfDay(_ index: Int) -> Int? {
    guard length(index) >= 6, let decimal = decimal(index), !decimal.negative else { return nil }
    let hhmmss = decimal.integerPart
    let hours = hhmmss / 10_000
    let minutes = hhmmss / 100 % 100
    let seconds = hhmmss % 100
    guard hours < 24, minutes < 60, seconds < 61 else { return nil }
    var milliseconds = decimal.fraction
    var scale = decimal.scale
    while scale > 3 {
      milliseconds /= 10
      scale -= 1
    }
    while scale < 3 {
      milliseconds *= 10
      scale += 1
    }
    return Int(((hours * 60 + minutes) * 60 + seconds) * 1000 + milliseconds)
  }

  /// A `ddmmyy` date, with the two-digit year resolved by `century` (for example 2000), or by
  /// the rule 80–99 → 19xx, 00–79 → 20xx when `century` is `nil`.
  func date(_ index: Int, century: Int?) -> UTCDate? {
    guard length(index) == 6, let value = int(index) else { return nil }
    let day = value / 10_000
    let month = value / 100 % 100
    let shortYear = value % 100
    let year = century.map { $0 + shortYear } ?? (shortYear >= 80 ? 1900 : 2000) + shortYear
    return UTCDate(year: year, month: month, day: day)
  }
}

/// Reusable storage for field boundaries, so that splitting a line allocates nothing.
final class NMEAFieldStorage {
  /// Room for the fields of the longest accepted sentence.
  static let capacity = NMEAFraming.maximumSentenceLength + 2
  let starts: UnsafeMutablePointer<Int32>
  let ends: UnsafeMutablePointer<Int32>

  init() {
    starts = .allocate(capacity: NMEAFieldStorage.capacity)
    ends = .allocate(capacity: NMEAFieldStorage.capacity)
  }

  deinit {
    starts.deallocate()
    ends.deallocate()
  }
}
