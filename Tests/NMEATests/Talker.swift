/// The two-letter talker of a sentence address (`GP` in `$GPGGA`): a classification only the
/// tests use (the decoder accepts any talker), kept here beside them.
enum Talker: Sendable, Hashable {
  /// GPS.
  case gps
  /// Combined GNSS.
  case gnss
  /// GLONASS.
  case glonass
  /// Galileo.
  case galileo
  /// BeiDou, `GB` (NMEA 4.1) or `BD` (older receivers).
  case beidou
  /// QZSS, `GQ` (NMEA 4.11) or `QZ` (older receivers).
  case qzss
  /// NavIC (IRNSS).
  case navic
  /// Any other talker, such as `IN` or `EC`, with its two letters.
  case other(UInt8, UInt8)

  /// Classifies two address bytes.
  init(_ first: UInt8, _ second: UInt8) {
    switch (first, second) {
    case (0x47, 0x50): self = .gps  // GP
    case (0x47, 0x4E): self = .gnss  // GN
    case (0x47, 0x4C): self = .glonass  // GL
    case (0x47, 0x41): self = .galileo  // GA
    case (0x47, 0x42), (0x42, 0x44): self = .beidou  // GB, BD
    case (0x47, 0x51), (0x51, 0x5A): self = .qzss  // GQ, QZ
    case (0x47, 0x49): self = .navic  // GI
    default: self = .other(first, second)
    }
  }

  /// Whether this is one of the satellite-navigation talkers (GP GN GL GA GB BD GQ QZ GI).
  var isGNSS: Bool {
    if case .other = self { return false }
    return true
  }
}
