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

  /// Uses the `commas` comma positions already in `storage.commas` (recorded while framing).
  init(
    base: UnsafePointer<UInt8>, start: Int, end: Int, commas: Int, storage: NMEAFieldStorage
  ) {
    self.base = base
    let starts = storage.starts
    let ends = storage.ends
    var fieldStart = Int32(start)
    for field in 0..<commas {
      let comma = storage.commas[field]
      starts[field] = fieldStart
      ends[field] = comma
      fieldStart = comma + 1
    }
    starts[commas] = fieldStart
    ends[commas] = Int32(end)
    self.count = commas + 1
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
      let magnitude = Double(mantissa) / PowerOfTen.double(scale)
      return negative ? -magnitude : magnitude
    }
  }

  func decimal(_ index: Int) -> Decimal? {
    guard index < count else { return nil }
    var position = Int(starts[index])
    let end = Int(ends[index])
    guard position < end else { return nil }
    var negative = false
    let first = base[position]
    if first == UInt8(ascii: "-") || first == UInt8(ascii: "+") {
      negative = first == UInt8(ascii: "-")
      position += 1
    }
    var integerPart: Int64 = 0
    var digits = 0
    while position < end {
      let digit = base[position] &- 0x30
      if digit > 9 { break }
      integerPart = integerPart &* 10 &+ Int64(digit)
      digits += 1
      position += 1
    }
    guard digits <= 18 else { return nil }  // beyond exact Int64 range
    var fraction: Int64 = 0
    var scale = 0
    if position < end {
      guard base[position] == UInt8(ascii: ".") else { return nil }
      position += 1
      while position < end {
        let digit = base[position] &- 0x30
        guard digit <= 9 else { return nil }
        if digits < 18 {  // further fraction digits are below any precision we keep
          fraction = fraction &* 10 &+ Int64(digit)
          scale += 1
          digits += 1
        }
        position += 1
      }
    }
    guard digits > 0 else { return nil }
    let scaleFactor = PowerOfTen.integer(scale)
    return Decimal(
      mantissa: integerPart * scaleFactor + fraction, scale: scale, negative: negative,
      integerPart: integerPart, fraction: fraction)
  }

  /// A `ddmm.mmmm` / `dddmm.mmmm` angle with its hemisphere letter in the next field, in signed
  /// degrees (S and W negative). `nil` when either field is empty or malformed, the minutes
  /// are 60 or more (except exactly 60, which some receivers use for a placeholder pole), or
  /// the angle is beyond 90° (N/S) or 180° (E/W).
  func angle(_ index: Int, hemisphere: Int) -> Double? {
    guard let decimal = decimal(index), !decimal.negative, let letter = character(hemisphere)
    else { return nil }
    let sign: Double
    let limit: Double
    switch letter {
    case UInt8(ascii: "N"): (sign, limit) = (1, 90)
    case UInt8(ascii: "S"): (sign, limit) = (-1, 90)
    case UInt8(ascii: "E"): (sign, limit) = (1, 180)
    case UInt8(ascii: "W"): (sign, limit) = (-1, 180)
    default: return nil
    }
    let degrees = decimal.integerPart / 100
    let wholeMinutes = decimal.integerPart % 100
    // Minutes up to 60 exactly (a fraction is below one unit of the scale). Not as
    // `minuteUnits <= 60 * scaleFactor`: with 18 fraction digits that product overflows
    // (found by the fuzzer: a latitude field ".900004444…" trapped).
    guard wholeMinutes < 60 || (wholeMinutes == 60 && decimal.fraction == 0) else { return nil }
    let scaleFactor = PowerOfTen.integer(decimal.scale)
    let minuteUnits = wholeMinutes * scaleFactor + decimal.fraction  // minutes * 10^scale
    let value = Double(degrees) + Double(minuteUnits) / (60 * Double(scaleFactor))
    guard value <= limit else { return nil }
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
  /// Comma positions, filled while framing.
  let commas: UnsafeMutablePointer<Int32>

  init() {
    starts = .allocate(capacity: NMEAFieldStorage.capacity)
    ends = .allocate(capacity: NMEAFieldStorage.capacity)
    commas = .allocate(capacity: NMEAFieldStorage.capacity)
  }

  deinit {
    starts.deallocate()
    ends.deallocate()
    commas.deallocate()
  }
}
