import FoundationEssentials

/// A delivered location, with CoreLocation's `CLLocation` fields.
///
/// Negative accuracies mean "invalid" in CoreLocation; here an unknown value is `nil` instead.
public struct Location: Sendable, Hashable {
  /// Latitude and longitude in degrees.
  public var coordinate: Coordinate
  /// Altitude above mean sea level, metres.
  public var altitude: Double?
  /// Height above the WGS 84 ellipsoid, metres.
  public var ellipsoidalAltitude: Double?
  /// Radius of uncertainty of `coordinate`, metres.
  public var horizontalAccuracy: Double?
  /// Uncertainty of the altitudes, metres.
  public var verticalAccuracy: Double?
  /// Speed over ground, metres per second.
  public var speed: Double?
  /// Uncertainty of `speed`, metres per second.
  public var speedAccuracy: Double?
  /// Course over ground, degrees clockwise from true north.
  public var course: Double?
  /// Uncertainty of `course`, degrees.
  public var courseAccuracy: Double?
  /// Fix time (UTC) of the solution.
  public var timestamp: Date
  /// Where the location came from.
  public var source: FixProvenance?

  /// Creates a location.
  public init(
    coordinate: Coordinate,
    altitude: Double? = nil,
    ellipsoidalAltitude: Double? = nil,
    horizontalAccuracy: Double? = nil,
    verticalAccuracy: Double? = nil,
    speed: Double? = nil,
    speedAccuracy: Double? = nil,
    course: Double? = nil,
    courseAccuracy: Double? = nil,
    timestamp: Date,
    source: FixProvenance? = nil
  ) {
    self.coordinate = coordinate
    self.altitude = altitude
    self.ellipsoidalAltitude = ellipsoidalAltitude
    self.horizontalAccuracy = horizontalAccuracy
    self.verticalAccuracy = verticalAccuracy
    self.speed = speed
    self.speedAccuracy = speedAccuracy
    self.course = course
    self.courseAccuracy = courseAccuracy
    self.timestamp = timestamp
    self.source = source
  }

  /// The location of a usable fix (time, 2D/3D mode, valid coordinate); `nil` otherwise.
  public init?(_ fix: Fix) {
    guard fix.isUsable, let time = fix.time, let coordinate = fix.coordinate else { return nil }
    self.init(
      coordinate: coordinate,
      altitude: fix.mode == .threeDimensional ? fix.altitudeMSL : nil,
      ellipsoidalAltitude: fix.mode == .threeDimensional ? fix.altitudeHAE : nil,
      horizontalAccuracy: fix.horizontalError,
      verticalAccuracy: fix.mode == .threeDimensional ? fix.verticalError : nil,
      speed: fix.speed,
      speedAccuracy: fix.speedError,
      course: fix.track,
      courseAccuracy: fix.trackError,
      timestamp: time,
      source: fix.provenance
    )
  }

  /// Great-circle distance to another location, metres.
  public func distance(from other: Location) -> Double {
    coordinate.distance(to: other.coordinate)
  }
}
