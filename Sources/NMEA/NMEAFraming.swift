import FoundationEssentials
import Glibc

/// Finds the sentence in one line of a log and checks its checksum, without allocating.
///
/// Rules, in order: trailing CR/LF/blanks are ignored; a line whose first non-blank byte is `#`
/// is a comment; the sentence starts at the **last** `$` or `!` of the line (so a damaged prefix,
/// a `$$` prefix or a truncated sentence glued in front is skipped); it must end in `*hh`, the
/// XOR of the bytes between the start character and `*`, in upper- or lower-case hex.
public enum NMEAFraming {
  /// Longest accepted sentence in bytes, from `$` to the checksum. NMEA 0183 says 82 including
  /// CR LF; real receivers exceed it (MediaTek's `$PMTKCHN` is 203 bytes, and gpsd accepts it),
  /// so anything up to 255 bytes is read and longer lines are called overlong.
  public static let maximumSentenceLength = 255

  /// The outcome of framing one line.
  public enum Result: Equatable, Sendable {
    /// A sentence with a valid checksum. `start` is the index just after `$`/`!`, `end` the
    /// index of `*`; `isEncapsulated` is true for `!` (AIS and other encapsulated data).
    case sentence(start: Int, end: Int, isEncapsulated: Bool)
    /// A `#` line.
    case comment
    /// Nothing but blanks.
    case blank
    /// Not a usable sentence.
    case bad(BadLineKind)
  }

  @inline(__always)
  static func hexValue(_ byte: UInt8) -> UInt8? {
    switch byte {
    case 0x30...0x39: byte &- 0x30
    case 0x41...0x46: byte &- 0x37
    case 0x61...0x66: byte &- 0x57
    default: nil
    }
  }

  /// Frames the line `bytes[0..<count]` (without its line terminator, or with it).
  public static func frame(_ bytes: UnsafePointer<UInt8>, count: Int) -> Result {
    frame(bytes, count: count, comma: { _ in }, resetCommas: {})
  }

  /// Frames a line and, in the same pass that computes the checksum, records the fields'
  /// boundaries in `fields`: comma `k` of the sentence as the end of field `k` and, plus one,
  /// the start of field `k + 1` (``NMEAFields`` sets the first start and the last end).
  ///
  /// - Returns: the result and the number of commas recorded (meaningful for a sentence).
  static func frame(
    _ bytes: UnsafePointer<UInt8>, count: Int, fields: NMEAFieldStorage
  ) -> (result: Result, commas: Int) {
    var commaCount = 0
    let starts = fields.starts
    let ends = fields.ends
    let result = frame(
      bytes, count: count,
      comma: { index in
        ends[commaCount] = Int32(index)
        commaCount += 1
        starts[commaCount] = Int32(index + 1)
      },
      resetCommas: { commaCount = 0 })
    return (result, commaCount)
  }

  @inline(__always)
  private static func frame(
    _ bytes: UnsafePointer<UInt8>, count: Int, comma: (Int) -> Void, resetCommas: () -> Void
  ) -> Result {
    var end = count
    while end > 0 {
      let byte = bytes[end - 1]
      guard byte == 0x0D || byte == 0x0A || byte == 0x20 || byte == 0x09 || byte == 0 else { break }
      end -= 1
    }
    var first = 0
    while first < end && (bytes[first] == 0x20 || bytes[first] == 0x09) { first += 1 }
    if first == end { return .blank }
    if bytes[first] == UInt8(ascii: "#") { return .comment }
    if let usual = frameUsual(bytes, first: first, end: end, comma: comma) { return usual }
    resetCommas()

    // One pass: the sentence restarts at every `$`/`!`, the checksum runs up to the first `*`
    // after it, and commas are recorded on the way. Inside a sentence body, eight bytes at a
    // time are handled at once, up to the first `$`, `!` or `*` among them (the word is not
    // read again at each byte before it).
    var marker = -1
    var star = -1
    var checksum: UInt8 = 0
    var wide: UInt64 = 0
    var outsideASCII = false
    var commaCount = 0
    var index = first
    while index < end {
      if marker >= 0 && star < 0 && index + 8 <= end {
        let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
        let specials =
          zeroBytes(word ^ (0x24 &* lowBytes)) | zeroBytes(word ^ (0x21 &* lowBytes))
          | zeroBytes(word ^ (0x2A &* lowBytes))
        // The body bytes of the word: all eight, or those before its first `$`, `!` or `*`
        // (which the byte-by-byte code below then takes).
        let bodyCount = specials == 0 ? 8 : specials.trailingZeroBitCount >> 3
        let body: UInt64 = bodyCount == 8 ? ~0 : (1 << (UInt64(bodyCount) * 8)) &- 1
        var commaBits = zeroBytes(word ^ (0x2C &* lowBytes)) & body
        while commaBits != 0 {
          if commaCount < maximumSentenceLength {
            comma(index + commaBits.trailingZeroBitCount / 8)
            commaCount += 1
          }
          commaBits &= commaBits &- 1
        }
        // Any byte >= 0x80, below 0x20, or 0x7F is outside printable ASCII. (A borrow only
        // marks bytes above one that is below 0x20, so the mask keeps the test exact.)
        let low = (word &- 0x20 &* lowBytes) & ~word & highBits
        if (word & highBits | low | zeroBytes(word ^ (0x7F &* lowBytes))) & body != 0 {
          outsideASCII = true
        }
        wide ^= word & body
        index += bodyCount
        if specials == 0 { continue }
      }
      let byte = bytes[index]
      if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") {
        marker = index
        star = -1
        checksum = 0
        wide = 0
        outsideASCII = false
        commaCount = 0
        resetCommas()
      } else if marker >= 0 && star < 0 {
        if byte == UInt8(ascii: "*") {
          star = index
        } else {
          if byte == UInt8(ascii: ",") && commaCount < maximumSentenceLength {
            comma(index)
            commaCount += 1
          }
          // Printable ASCII is 0x20...0x7E: (byte - 0x20) wraps above 0x5E for everything else.
          if (byte &- 0x20) > 0x5E { outsideASCII = true }
          checksum ^= byte
        }
      }
      index += 1
    }
    guard marker >= 0 else { return .bad(.junk) }
    let dollar = marker
    if end - dollar > maximumSentenceLength { return .bad(.overlong) }
    wide ^= wide >> 32
    wide ^= wide >> 16
    wide ^= wide >> 8
    checksum ^= UInt8(truncatingIfNeeded: wide)
    let start = dollar + 1
    if star < 0 { star = end }
    if outsideASCII { return .bad(.nonASCII) }
    guard star < end else {
      return addressLength(bytes, from: start, to: end) >= 5
        ? .bad(.missingChecksum) : .bad(.truncated)
    }
    guard end - star >= 3, let high = hexValue(bytes[star + 1]),
      let low = hexValue(bytes[star + 2])
    else { return .bad(.truncated) }
    guard end - star == 3 else { return .bad(.junk) }
    guard high << 4 | low == checksum else { return .bad(.checksumMismatch) }
    guard addressLength(bytes, from: start, to: star) >= 3 else { return .bad(.truncated) }
    return .sentence(start: start, end: star, isEncapsulated: bytes[dollar] == UInt8(ascii: "!"))
  }

  /// The usual line, read in one pass with no branch in its loop but the commas': one sentence
  /// from the line's first byte to a `*hh` at its end, no `$`, `!` or `*` between them, at
  /// most ``maximumSentenceLength`` bytes. `nil` for any other line (and then no result has
  /// been decided: the general pass reads the line again), so that the result, when there is
  /// one, is the general pass's: its last `$`/`!` is the first byte, its first `*` after that
  /// the one before the checksum.
  @inline(__always)
  private static func frameUsual(
    _ bytes: UnsafePointer<UInt8>, first: Int, end: Int, comma: (Int) -> Void
  ) -> Result? {
    let star = end - 3
    guard star > first, end - first <= maximumSentenceLength,
      bytes[first] == UInt8(ascii: "$") || bytes[first] == UInt8(ascii: "!"),
      bytes[star] == UInt8(ascii: "*"), let high = hexValue(bytes[star + 1]),
      let low = hexValue(bytes[star + 2])
    else { return nil }
    var specials: UInt64 = 0
    var outside: UInt64 = 0
    var wide: UInt64 = 0
    var checksum: UInt8 = 0
    var index = first + 1
    while index + 8 <= star {
      let word = UnsafeRawPointer(bytes + index).loadUnaligned(as: UInt64.self)
      // Whether there is any, not where: the shorter test of a zero byte does.
      specials |=
        hasZeroByte(word ^ (0x24 &* lowBytes)) | hasZeroByte(word ^ (0x21 &* lowBytes))
        | hasZeroByte(word ^ (0x2A &* lowBytes))
      // Below 0x20, 0x7F, or 0x80 and up (as in the general pass).
      outside |=
        word & highBits | (word &- 0x20 &* lowBytes) & ~word & highBits
        | hasZeroByte(word ^ (0x7F &* lowBytes))
      wide ^= word
      // Fewer than 255 commas fit in a sentence this short: no count to check.
      var commaBits = zeroBytes(word ^ (0x2C &* lowBytes))
      while commaBits != 0 {
        comma(index + commaBits.trailingZeroBitCount / 8)
        commaBits &= commaBits &- 1
      }
      index += 8
    }
    while index < star {
      let byte = bytes[index]
      if byte == UInt8(ascii: "$") || byte == UInt8(ascii: "!") || byte == UInt8(ascii: "*") {
        return nil
      }
      if byte == UInt8(ascii: ",") { comma(index) }
      if (byte &- 0x20) > 0x5E { outside |= 1 }
      checksum ^= byte
      index += 1
    }
    guard specials == 0 else { return nil }
    wide ^= wide >> 32
    wide ^= wide >> 16
    wide ^= wide >> 8
    checksum ^= UInt8(truncatingIfNeeded: wide)
    let start = first + 1
    if outside != 0 { return .bad(.nonASCII) }
    guard high << 4 | low == checksum else { return .bad(.checksumMismatch) }
    guard addressLength(bytes, from: start, to: star) >= 3 else { return .bad(.truncated) }
    return .sentence(start: start, end: star, isEncapsulated: bytes[first] == UInt8(ascii: "!"))
  }

  private static let lowBytes: UInt64 = 0x0101_0101_0101_0101
  private static let highBits: UInt64 = 0x8080_8080_8080_8080

  /// 0x80 in exactly the bytes of `word` that are zero, 0 elsewhere.
  @inline(__always)
  private static func zeroBytes(_ word: UInt64) -> UInt64 {
    let sevenBits: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
    return ~(((word & sevenBits) &+ sevenBits) | word | sevenBits)
  }

  /// Not zero exactly when `word` has a zero byte (the bytes it marks above the lowest zero
  /// byte may be wrong: for a test of the whole word only).
  @inline(__always)
  private static func hasZeroByte(_ word: UInt64) -> UInt64 {
    (word &- lowBytes) & ~word & highBits
  }

  private static func addressLength(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int)
    -> Int
  {
    var index = start
    while index < end && bytes[index] != UInt8(ascii: ",") { index += 1 }
    return index - start
  }
}
