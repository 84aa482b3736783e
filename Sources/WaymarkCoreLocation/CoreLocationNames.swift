// CoreLocation's names with CoreLocation's shapes, over Waymark's types: iOS 17/18 code that
// uses CoreLocation compiles on Linux with `import WaymarkCoreLocation` in place of
// `import CoreLocation`. Where CoreLocation's shape differs from Waymark's (a class with −1 for
// an invalid value, a delegate, an enum), this module declares CoreLocation's type and adapts
// Waymark's; where it is the same, the name is a type alias. New code can use Waymark's own names
// with `import Waymark`.

// CoreLocation brings Foundation with it (`Date`, `UUID`, `TimeInterval`, `Measurement`,
// `NSObject`): so does this module.
@_exported import Foundation
@_exported import Waymark

/// CoreLocation's `CLServiceSession`: `ServiceSession`, a held statement of the program's
/// need and the diagnoses of why it is not met.
public typealias CLServiceSession = ServiceSession
/// CoreLocation's `CLLocationCoordinate2D`: `Coordinate` (degrees, WGS 84).
public typealias CLLocationCoordinate2D = Coordinate
/// CoreLocation's `CLLocationDegrees`: degrees as a `Double`.
public typealias CLLocationDegrees = Double
/// CoreLocation's `CLLocationDistance`: metres as a `Double`.
public typealias CLLocationDistance = Double
/// CoreLocation's `CLLocationAccuracy`: metres as a `Double`; negative means invalid.
public typealias CLLocationAccuracy = Double
/// CoreLocation's `CLLocationSpeed`: metres per second as a `Double`; negative means invalid.
public typealias CLLocationSpeed = Double
/// CoreLocation's `CLLocationSpeedAccuracy`: metres per second; negative means invalid.
public typealias CLLocationSpeedAccuracy = Double
/// CoreLocation's `CLLocationDirection`: degrees clockwise from true north; negative means
/// invalid.
public typealias CLLocationDirection = Double
/// CoreLocation's `CLLocationDirectionAccuracy`: degrees; negative means invalid.
public typealias CLLocationDirectionAccuracy = Double
/// CoreLocation's `CLHeadingComponentValue`: a magnetometer axis, microteslas.
public typealias CLHeadingComponentValue = Double
/// CoreLocation's `CLBeaconMajorValue`.
public typealias CLBeaconMajorValue = UInt16
/// CoreLocation's `CLBeaconMinorValue`.
public typealias CLBeaconMinorValue = UInt16
/// CoreLocation's `CLAuthorizationStatus`: `AuthorizationStatus`, with the same five cases.
public typealias CLAuthorizationStatus = AuthorizationStatus

extension Coordinate {
  /// CoreLocation's `CLLocationCoordinate2D()`: latitude and longitude 0.
  public init() { self.init(latitude: 0, longitude: 0) }
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// CoreLocation's `CLLocationCoordinate2DMake(_:_:)`.
///
/// - Parameters:
///   - latitude: degrees, positive north.
///   - longitude: degrees, positive east.
/// - Returns: the coordinate.
public func CLLocationCoordinate2DMake(
  _ latitude: CLLocationDegrees, _ longitude: CLLocationDegrees
) -> CLLocationCoordinate2D {
  CLLocationCoordinate2D(latitude: latitude, longitude: longitude)
}

// swift-format-ignore: AlwaysUseLowerCamelCase
/// CoreLocation's `CLLocationCoordinate2DIsValid(_:)`: latitude within ±90°, longitude within
/// ±180°, both finite.
public func CLLocationCoordinate2DIsValid(_ coordinate: CLLocationCoordinate2D) -> Bool {
  coordinate.isValid
}
