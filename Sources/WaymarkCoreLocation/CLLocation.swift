import Foundation
import Waymark

/// CoreLocation's `CLLocation`: an immutable location with CoreLocation's conventions.
///
/// Every value is there, none optional: an unknown one is negative, as on iOS. A
/// ``horizontalAccuracy`` below 0 means the coordinate is invalid, a ``verticalAccuracy`` of 0
/// or less that ``altitude`` and ``ellipsoidalAltitude`` are, a ``speed`` or ``course`` below 0
/// that they are unknown, and their accuracies are −1 then. A location made from a Waymark
/// `Location` (``init(_:)``) takes each `nil` as that invalid value.
open class CLLocation: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: every stored property is a `let` of a Sendable type.

  /// Latitude and longitude, degrees (WGS 84).
  public let coordinate: CLLocationCoordinate2D
  /// Altitude above mean sea level, metres; valid when ``verticalAccuracy`` is above 0.
  public let altitude: CLLocationDistance
  /// Height above the WGS 84 ellipsoid, metres; valid when ``verticalAccuracy`` is above 0.
  /// A location made with an initializer that takes no ellipsoidal altitude has ``altitude``.
  public let ellipsoidalAltitude: CLLocationDistance
  /// Radius of uncertainty of ``coordinate``, metres; negative when the coordinate is invalid.
  public let horizontalAccuracy: CLLocationAccuracy
  /// Uncertainty of the altitudes, metres; 0 or negative when they are invalid.
  public let verticalAccuracy: CLLocationAccuracy
  /// Speed over ground, metres per second; negative when unknown.
  public let speed: CLLocationSpeed
  /// Uncertainty of ``speed``, metres per second; negative when unknown.
  public let speedAccuracy: CLLocationSpeedAccuracy
  /// Course over ground, degrees clockwise from true north (0–359.9); negative when unknown.
  public let course: CLLocationDirection
  /// Uncertainty of ``course``, degrees; negative when unknown.
  public let courseAccuracy: CLLocationDirectionAccuracy
  /// When the location was determined: the fix time (UTC) for a receiver's location.
  public let timestamp: Date
  /// The floor of a building: always `nil` (a GNSS receiver knows no floors; iOS gives `nil`
  /// outside the venues it has maps of).
  public let floor: CLFloor?
  /// How the location was produced (simulated by software, by an accessory); `nil` when
  /// not known.
  public let sourceInformation: CLLocationSourceInformation?

  /// CoreLocation's `init(latitude:longitude:)`: a coordinate alone, timestamped now;
  /// ``horizontalAccuracy`` 0, ``altitude`` 0 with ``verticalAccuracy`` −1, speed and course
  /// −1.
  public init(latitude: CLLocationDegrees, longitude: CLLocationDegrees) {
    coordinate = CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
    altitude = 0
    ellipsoidalAltitude = 0
    horizontalAccuracy = 0
    verticalAccuracy = -1
    speed = -1
    speedAccuracy = -1
    course = -1
    courseAccuracy = -1
    timestamp = Date()
    floor = nil
    sourceInformation = nil
    super.init()
  }

  /// CoreLocation's full initializer: every value given (metres, metres per second, degrees;
  /// negative for invalid), with how it was produced.
  public init(
    coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    course: CLLocationDirection, courseAccuracy: CLLocationDirectionAccuracy,
    speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy, timestamp: Date,
    sourceInfo: CLLocationSourceInformation
  ) {
    self.coordinate = coordinate
    self.altitude = altitude
    ellipsoidalAltitude = altitude
    horizontalAccuracy = hAccuracy
    verticalAccuracy = vAccuracy
    self.speed = speed
    self.speedAccuracy = speedAccuracy
    self.course = course
    self.courseAccuracy = courseAccuracy
    self.timestamp = timestamp
    floor = nil
    sourceInformation = sourceInfo
    super.init()
  }

  /// CoreLocation's initializer with course and speed accuracies; no source information.
  public convenience init(
    coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    course: CLLocationDirection, courseAccuracy: CLLocationDirectionAccuracy,
    speed: CLLocationSpeed, speedAccuracy: CLLocationSpeedAccuracy, timestamp: Date
  ) {
    self.init(
      location: Values(
        coordinate: coordinate, altitude: altitude, ellipsoidalAltitude: altitude,
        horizontalAccuracy: hAccuracy, verticalAccuracy: vAccuracy, speed: speed,
        speedAccuracy: speedAccuracy, course: course, courseAccuracy: courseAccuracy,
        timestamp: timestamp, sourceInformation: nil))
  }

  /// CoreLocation's initializer with course and speed; their accuracies are −1.
  public convenience init(
    coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    course: CLLocationDirection, speed: CLLocationSpeed, timestamp: Date
  ) {
    self.init(
      coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy,
      verticalAccuracy: vAccuracy, course: course, courseAccuracy: -1, speed: speed,
      speedAccuracy: -1, timestamp: timestamp)
  }

  /// CoreLocation's initializer without course and speed: both −1, as their accuracies.
  public convenience init(
    coordinate: CLLocationCoordinate2D, altitude: CLLocationDistance,
    horizontalAccuracy hAccuracy: CLLocationAccuracy,
    verticalAccuracy vAccuracy: CLLocationAccuracy,
    timestamp: Date
  ) {
    self.init(
      coordinate: coordinate, altitude: altitude, horizontalAccuracy: hAccuracy,
      verticalAccuracy: vAccuracy, course: -1, courseAccuracy: -1, speed: -1, speedAccuracy: -1,
      timestamp: timestamp)
  }

  /// A Waymark `Location` with CoreLocation's conventions: each unknown (`nil`) value becomes
  /// its invalid value (−1; an unknown altitude 0 with ``verticalAccuracy`` −1), and the
  /// provenance the source information (a log or a simulator: simulated by software; a
  /// receiver through gpsd: produced by an accessory).
  public convenience init(_ location: Location) {
    let altitudesKnown = location.verticalAccuracy != nil
    self.init(
      location: Values(
        coordinate: location.coordinate,
        altitude: location.altitude ?? 0,
        ellipsoidalAltitude: location.ellipsoidalAltitude ?? location.altitude ?? 0,
        horizontalAccuracy: location.horizontalAccuracy ?? -1,
        verticalAccuracy: altitudesKnown && location.altitude != nil
          ? location.verticalAccuracy ?? -1 : -1,
        speed: location.speed ?? -1,
        speedAccuracy: location.speed == nil ? -1 : location.speedAccuracy ?? -1,
        course: location.course ?? -1,
        courseAccuracy: location.course == nil ? -1 : location.courseAccuracy ?? -1,
        timestamp: location.timestamp,
        sourceInformation: location.source.map(CLLocationSourceInformation.init)))
  }

  /// The values of a location, for the initializers that set the ellipsoidal altitude.
  struct Values {
    var coordinate: CLLocationCoordinate2D
    var altitude: Double
    var ellipsoidalAltitude: Double
    var horizontalAccuracy: Double
    var verticalAccuracy: Double
    var speed: Double
    var speedAccuracy: Double
    var course: Double
    var courseAccuracy: Double
    var timestamp: Date
    var sourceInformation: CLLocationSourceInformation?
  }

  init(location values: Values) {
    coordinate = values.coordinate
    altitude = values.altitude
    ellipsoidalAltitude = values.ellipsoidalAltitude
    horizontalAccuracy = values.horizontalAccuracy
    verticalAccuracy = values.verticalAccuracy
    speed = values.speed
    speedAccuracy = values.speedAccuracy
    course = values.course
    courseAccuracy = values.courseAccuracy
    timestamp = values.timestamp
    floor = nil
    sourceInformation = values.sourceInformation
    super.init()
  }

  /// The same location as a Waymark `Location`: each invalid value `nil`.
  public var waymarkLocation: Location {
    let altitudes = verticalAccuracy > 0
    return Location(
      coordinate: coordinate,
      altitude: altitudes ? altitude : nil,
      ellipsoidalAltitude: altitudes ? ellipsoidalAltitude : nil,
      horizontalAccuracy: horizontalAccuracy >= 0 ? horizontalAccuracy : nil,
      verticalAccuracy: altitudes ? verticalAccuracy : nil,
      speed: speed >= 0 ? speed : nil,
      speedAccuracy: speedAccuracy >= 0 ? speedAccuracy : nil,
      course: course >= 0 ? course : nil,
      courseAccuracy: courseAccuracy >= 0 ? courseAccuracy : nil,
      timestamp: timestamp)
  }

  /// CoreLocation's `distance(from:)`: the distance to `location` along the surface, metres
  /// (great circle on the mean Earth sphere; within 0.5 % of the ellipsoid's, altitude
  /// ignored, as iOS ignores it).
  open func distance(from location: CLLocation) -> CLLocationDistance {
    coordinate.distance(to: location.coordinate)
  }

  /// The location itself: a `CLLocation` never changes.
  open func copy(with zone: NSZone? = nil) -> Any { self }

  /// CoreLocation's form: `<+52.52000000,+13.40500000> +/- 5.00m (speed 1.20 mps / course
  /// 90.00) @ 2026-11-29 08:00:00 +0000`.
  open override var description: String {
    let position = String(
      format: "<%+.8f,%+.8f> +/- %.2fm", coordinate.latitude, coordinate.longitude,
      horizontalAccuracy)
    let motion = String(format: "(speed %.2f mps / course %.2f)", speed, course)
    return "\(position) \(motion) @ \(timestamp)"
  }
}
