/// The dimension of a fix, as gpsd reports it in `TPV.mode`.
public enum FixMode: Int, Sendable, Hashable, Codable, Comparable {
  /// Nothing seen yet that tells the mode.
  case unknown = 0
  /// The receiver reports no usable position.
  case noFix = 1
  /// Latitude and longitude, no trustworthy altitude.
  case twoDimensional = 2
  /// Latitude, longitude and altitude.
  case threeDimensional = 3

  /// Whether the fix carries a usable position (2D or 3D).
  public var hasPosition: Bool { self >= .twoDimensional }

  public static func < (lhs: FixMode, rhs: FixMode) -> Bool { lhs.rawValue < rhs.rawValue }
}

/// How a fix was obtained, with gpsd's `TPV.status` numbers.
public enum FixStatus: Int, Sendable, Hashable, Codable {
  /// Not reported.
  case unknown = 0
  /// Autonomous GNSS.
  case gps = 1
  /// Differential GNSS (SBAS, DGPS).
  case dgps = 2
  /// RTK with fixed integers.
  case rtkFixed = 3
  /// RTK with float integers.
  case rtkFloat = 4
  /// Dead reckoning only.
  case deadReckoning = 5
  /// GNSS combined with dead reckoning.
  case gnssDeadReckoning = 6
  /// Time only or surveyed-in position.
  case timeOnly = 7
  /// A simulator produced this fix.
  case simulated = 8
  /// Military P(Y) code.
  case precise = 9
}
