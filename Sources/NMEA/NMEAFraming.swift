import Foundation

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

    // The last `$` or `!`, found with memchr (vectorised; most lines have one `$`, first).
    let dollarIndex = lastIndex(of: UInt8(ascii: "$"), in: bytes, from: first, to: end)
    let bangIndex = lastIndex(of: UInt8(ascii: "!"), in: bytes, from: first, to: end)
    let marker = max(dollarIndex, bangIndex)
    guard marker >= 0 else { return .bad(.junk) }
    let dollar = marker
    if end - dollar > maximumSentenceLength { return .bad(.overlong) }

    let start = dollar + 1
    var checksum: UInt8 = 0
    var star = start
    var outsideASCII: UInt8 = 0
    while star < end {
      let byte = bytes[star]
      if byte == UInt8(ascii: "*") { break }
      // Printable ASCII is 0x20...0x7E: (byte - 0x20) wraps above 0x5E for everything else.
      outsideASCII |= (byte &- 0x20) > 0x5E ? 1 : 0
      checksum ^= byte
      star += 1
    }
    if outsideASCII != 0 { return .bad(.nonASCII) }
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

  /// The index of the last `byte` in `bytes[from..<to]`, or -1.
  @inline(__always)
  private static func lastIndex(of byte: UInt8, in bytes: UnsafePointer<UInt8>, from: Int, to: Int)
    -> Int
  {
    var found = -1
    var position = from
    while position < to, let hit = memchr(bytes + position, Int32(byte), to - position) {
      found = UnsafeRawPointer(hit) - UnsafeRawPointer(bytes)
      position = found + 1
    }
    return found
  }

  private static func addressLength(_ bytes: UnsafePointer<UInt8>, from start: Int, to end: Int)
    -> Int
  {
    var index = start
    while index < end && bytes[index] != UInt8(ascii: ",") { index += 1 }
    return index - start
  }
}
