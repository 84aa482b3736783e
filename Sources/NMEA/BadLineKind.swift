/// Why a line of a log was not accepted as a sentence.
///
/// Bad lines are counted by kind and skipped; they never stop a replay (unless `--strict`).
public enum BadLineKind: String, Sendable, Hashable, CaseIterable, Comparable {
  /// The `*hh` checksum does not match the XOR of the sentence body.
  case checksumMismatch = "bad-checksum"
  /// No `*hh` checksum at all.
  case missingChecksum = "no-checksum"
  /// The sentence stops early: no complete address, or `*` with fewer than two hex digits.
  case truncated
  /// No `$` or `!` on the line: not NMEA.
  case junk
  /// Longer than ``NMEAFraming/maximumSentenceLength`` bytes.
  case overlong
  /// Bytes outside printable ASCII inside the sentence.
  case nonASCII = "non-ascii"
  /// Checksum fine, but a field that the sentence type requires is malformed.
  case malformedField = "bad-field"

  public static func < (lhs: BadLineKind, rhs: BadLineKind) -> Bool {
    lhs.rawValue < rhs.rawValue
  }
}
