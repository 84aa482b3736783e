import FoundationEssentials

/// One receiver solution: what a GNSS receiver said at one instant.
///
/// Every value the receiver did not report is `nil`, never zero. Units are SI: metres, metres per
/// second, degrees.
public struct Fix: Sendable, Hashable {
  /// UTC instant of the solution. `nil` when only the time of day is known (no date yet).
  public var time: Date?
  /// UTC time of day in milliseconds since midnight, when the sentence carried one.
  public var timeOfDayMilliseconds: Int?
  /// Dimension of the fix.
  public var mode: FixMode
  /// How the fix was obtained.
  public var status: FixStatus
  /// Latitude and longitude in degrees.
  public var coordinate: Coordinate?
  /// Altitude above mean sea level, metres.
  public var altitudeMSL: Double?
  /// Geoid separation (height of the geoid above the ellipsoid), metres.
  public var geoidSeparation: Double?
  /// Speed over ground, metres per second.
  public var speed: Double?
  /// Course over ground, degrees clockwise from true north.
  public var track: Double?
  /// Vertical speed, metres per second, positive up.
  public var climb: Double?
  /// Horizontal position error estimate (1 sigma radius), metres. gpsd's `eph`.
  public var horizontalError: Double?
  /// Vertical position error estimate, metres. gpsd's `epv`.
  public var verticalError: Double?
  /// Speed error estimate, metres per second.
  public var speedError: Double?
  /// Track error estimate, degrees.
  public var trackError: Double?
  /// Horizontal dilution of precision.
  public var hdop: Double?
  /// Vertical dilution of precision.
  public var vdop: Double?
  /// Position dilution of precision.
  public var pdop: Double?
  /// Satellites used in the solution.
  public var satellitesUsed: Int?
  /// Satellites in view.
  public var satellitesVisible: Int?
  /// Where this fix came from.
  public var provenance: FixProvenance?

  /// Creates a fix; every value defaults to unknown.
  ///
  /// Inlinable: a decoder in another module then builds its fixes in place (out of line, a fix
  /// cost a call with twenty arguments and a copy of its provenance).
  @inlinable
  public init(
    time: Date? = nil,
    timeOfDayMilliseconds: Int? = nil,
    mode: FixMode = .unknown,
    status: FixStatus = .unknown,
    coordinate: Coordinate? = nil,
    altitudeMSL: Double? = nil,
    geoidSeparation: Double? = nil,
    speed: Double? = nil,
    track: Double? = nil,
    climb: Double? = nil,
    horizontalError: Double? = nil,
    verticalError: Double? = nil,
    speedError: Double? = nil,
    trackError: Double? = nil,
    hdop: Double? = nil,
    vdop: Double? = nil,
    pdop: Double? = nil,
    satellitesUsed: Int? = nil,
    satellitesVisible: Int? = nil,
    provenance: FixProvenance? = nil
  ) {
    self.time = time
    self.timeOfDayMilliseconds = timeOfDayMilliseconds
    self.mode = mode
    self.status = status
    self.coordinate = coordinate
    self.altitudeMSL = altitudeMSL
    self.geoidSeparation = geoidSeparation
    self.speed = speed
    self.track = track
    self.climb = climb
    self.horizontalError = horizontalError
    self.verticalError = verticalError
    self.speedError = speedError
    self.trackError = trackError
    self.hdop = hdop
    self.vdop = vdop
    self.pdop = pdop
    self.satellitesUsed = satellitesUsed
    self.satellitesVisible = satellitesVisible
    self.provenance = provenance
  }

  /// Height above the WGS 84 ellipsoid, metres: `altitudeMSL + geoidSeparation`.
  public var altitudeHAE: Double? {
    guard let altitudeMSL, let geoidSeparation else { return nil }
    return altitudeMSL + geoidSeparation
  }

  /// Whether this fix has a time, a 2D/3D mode and a valid coordinate.
  public var isUsable: Bool {
    time != nil && mode.hasPosition && (coordinate?.isValid ?? false)
  }
}
