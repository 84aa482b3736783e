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

  /// The fields of the sentence `start..<end`, whose `commas` comma positions framing has
  /// already recorded in `storage` as the ends of fields 0..<commas and the starts of fields
  /// 1...commas (``NMEAFraming/frame(_:count:fields:)``); only the first start and the last end
  /// are set here.
  init(
    base: UnsafePointer<UInt8>, start: Int, end: Int, commas: Int, storage: NMEAFieldStorage
  ) {
    self.base = base
    storage.starts[0] = Int32(start)
    storage.ends[commas] = Int32(end)
    self.count = commas + 1
    self.starts = UnsafePointer(storage.starts)
    self.ends = UnsafePointer(storage.ends)
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
  ///
  /// The value is `mantissa / 10^scale`, correctly rounded: the mantissa is the field's digits,
  /// integer part and fraction (at most 18: further fraction digits are below any precision we
  /// keep; more integer digits are refused), as ``decimal(_:)`` reads them in one pass — the
  /// one scan of every number field, inlined here so that its parts stay in registers.
  @inline(__always)
  func double(_ index: Int) -> Double? {
    guard let parsed = decimal(index) else { return nil }
    // Exact: 18 digits at most fit an Int64.
    let mantissa = parsed.integerPart &* parsed.scaleFactor &+ parsed.fraction
    let magnitude = Double(mantissa) / PowerOfTen.double(parsed.scale)
    return parsed.negative ? -magnitude : magnitude
  }

  /// An integer, or `nil` when empty or malformed. A fraction is refused; a point with no
  /// digit kept after it (`12.`, or a fraction beyond 18 digits in all) is not a fraction. A
  /// leading `-` makes it negative (a ZDA's zone west of Greenwich, a GSV elevation below the
  /// horizon), a leading `+` is read. The scan is ``decimal(_:)``'s (inlined: called, it
  /// cost 1.1 M more instructions on 8 MB of a 10 Hz log).
  @inline(__always)
  func int(_ index: Int) -> Int? {
    guard let parsed = decimal(index), parsed.scale == 0 else { return nil }
    return Int(parsed.negative ? -parsed.integerPart : parsed.integerPart)
  }

  /// A parsed decimal: `integerPart + fraction / scaleFactor`, `scaleFactor` being 10^`scale`
  /// (exact while the digits fit in 18), for the angles and times of day, which take the
  /// integer part apart.
  struct Decimal {
    var scale: Int
    /// 10^`scale`, counted up with the fraction's digits (not computed again from `scale`).
    var scaleFactor: Int64
    var negative: Bool
    var integerPart: Int64
    var fraction: Int64
  }

  @inline(__always)  // into the angle and the time of day, which use only some of its members
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
    var scaleFactor: Int64 = 1
    if position < end {
      guard base[position] == UInt8(ascii: ".") else { return nil }
      position += 1
      while position < end {
        let digit = base[position] &- 0x30
        guard digit <= 9 else { return nil }
        if digits < 18 {  // further fraction digits are below any precision we keep
          fraction = fraction &* 10 &+ Int64(digit)
          scale += 1
          scaleFactor &*= 10
          digits += 1
        }
        position += 1
      }
    }
    guard digits > 0 else { return nil }
    return Decimal(
      scale: scale, scaleFactor: scaleFactor, negative: negative, integerPart: integerPart,
      fraction: fraction)
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
    let scaleFactor = decimal.scaleFactor
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
///
/// Framing fills it as it finds the commas: comma `k` is the end of field `k` and, one byte
/// further, the start of field `k + 1`.
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
