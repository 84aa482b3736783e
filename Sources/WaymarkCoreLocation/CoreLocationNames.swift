// CoreLocation's names for Waymark's types: iOS 17 code that uses `CLLocationUpdate.liveUpdates()`
// and `CLMonitor` compiles on Linux with `import WaymarkCoreLocation` in place of
// `import CoreLocation`. New code can use Waymark's own names with `import Waymark`; the two are
// the same types.
@_exported import Waymark

/// CoreLocation's `CLLocationUpdate`: `LocationUpdate` (`liveUpdates(_:)`, the diagnoses).
public typealias CLLocationUpdate = LocationUpdate
/// CoreLocation's `CLMonitor`: `Monitor`, conditions and records persisted under a name.
public typealias CLMonitor = Monitor
/// CoreLocation's `CLServiceSession`: `ServiceSession`, a held statement of the program's
/// need and the diagnoses of why it is not met.
public typealias CLServiceSession = ServiceSession
/// CoreLocation's `CLLocation`: `Location` (unknown values are `nil`, not −1).
public typealias CLLocation = Location
/// CoreLocation's `CLLocationCoordinate2D`: `Coordinate` (degrees, WGS 84).
public typealias CLLocationCoordinate2D = Coordinate
/// CoreLocation's `CLLocationDegrees`: degrees as a `Double`.
public typealias CLLocationDegrees = Double
/// CoreLocation's `CLLocationDistance`: metres as a `Double`.
public typealias CLLocationDistance = Double
/// CoreLocation's `CLAuthorizationStatus`: `AuthorizationStatus`.
public typealias CLAuthorizationStatus = AuthorizationStatus
/// CoreLocation's `CLAccuracyAuthorization`: `AccuracyAuthorization`.
public typealias CLAccuracyAuthorization = AccuracyAuthorization
/// CoreLocation's `CLVisit`: `Stay` (`departureDate` is `nil` while the stay lasts).
public typealias CLVisit = Stay
