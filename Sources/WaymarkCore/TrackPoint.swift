import FoundationEssentials

/// One point of a recorded track: where the receiver was at one fix time.
///
/// Unknown values are `nil`, never zero. Units are SI: metres, metres per second, degrees.
public struct TrackPoint: Sendable, Hashable {
  /// Fix time (UTC). A track holds at most one point per millisecond.
  public var timestamp: Date
  /// Latitude and longitude in degrees.
  public var coordinate: Coordinate
  /// Altitude above mean sea level, metres.
  public var altitude: Double?
  /// Speed over ground, metres per second.
  public var speed: Double?
  /// Course over ground, degrees clockwise from true north.
  public var course: Double?
  /// Radius of uncertainty of `coordinate` (gpsd's `eph`), metres.
  public var horizontalAccuracy: Double?
  /// The segment, numbered from 1: a new one starts after each fix loss, so a track's segments
  /// are its stretches of continuous fixes.
  public var segment: Int

  /// Creates a point.
  public init(
    timestamp: Date, coordinate: Coordinate, altitude: Double? = nil, speed: Double? = nil,
    course: Double? = nil, horizontalAccuracy: Double? = nil, segment: Int
  ) {
    self.timestamp = timestamp
    self.coordinate = coordinate
    self.altitude = altitude
    self.speed = speed
    self.course = course
    self.horizontalAccuracy = horizontalAccuracy
    self.segment = segment
  }

  /// The point of a usable `fix` (a time, a 2D/3D mode, a valid coordinate) in `segment`, or
  /// `nil` when the fix is not usable.
  public init?(_ fix: Fix, segment: Int) {
    guard fix.isUsable, let time = fix.time, let coordinate = fix.coordinate else { return nil }
    self.init(
      timestamp: time, coordinate: coordinate, altitude: fix.altitudeMSL, speed: fix.speed,
      course: fix.track, horizontalAccuracy: fix.horizontalError, segment: segment)
  }
}
