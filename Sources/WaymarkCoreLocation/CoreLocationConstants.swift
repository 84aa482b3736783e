import Foundation

// CoreLocation's constants, with CoreLocation's values.

/// `distanceFilter` for every movement: −1.
public let kCLDistanceFilterNone: CLLocationDistance = -1
/// `desiredAccuracy` for navigation: −2 (as ``kCLLocationAccuracyBest`` on Linux: a receiver
/// has one accuracy).
public let kCLLocationAccuracyBestForNavigation: CLLocationAccuracy = -2
/// `desiredAccuracy` for the best the receiver gives: −1.
public let kCLLocationAccuracyBest: CLLocationAccuracy = -1
/// `desiredAccuracy` of ten metres.
public let kCLLocationAccuracyNearestTenMeters: CLLocationAccuracy = 10
/// `desiredAccuracy` of a hundred metres.
public let kCLLocationAccuracyHundredMeters: CLLocationAccuracy = 100
/// `desiredAccuracy` of a kilometre.
public let kCLLocationAccuracyKilometer: CLLocationAccuracy = 1000
/// `desiredAccuracy` of three kilometres.
public let kCLLocationAccuracyThreeKilometers: CLLocationAccuracy = 3000
/// `desiredAccuracy` that asks for approximate locations (as a reduced grant gives them): 3000
/// here (CoreLocation does not document its value).
public let kCLLocationAccuracyReduced: CLLocationAccuracy = 3000
/// `headingFilter` for every change: −1.
public let kCLHeadingFilterNone: CLLocationDegrees = -1
/// The error domain of ``CLError``.
public let kCLErrorDomain = "kCLErrorDomain"
/// The `userInfo` key of a region error's alternate region.
public let kCLErrorUserInfoAlternateRegionKey = "alternateRegion"
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The largest distance: `Double.greatestFiniteMagnitude`.
public let CLLocationDistanceMax: CLLocationDistance = .greatestFiniteMagnitude
// swift-format-ignore: AlwaysUseLowerCamelCase
/// The longest time interval: `Double.greatestFiniteMagnitude`.
public let CLTimeIntervalMax: TimeInterval = .greatestFiniteMagnitude
/// An invalid coordinate: latitude and longitude −180.
public let kCLLocationCoordinate2DInvalid = CLLocationCoordinate2D(
  latitude: -180, longitude: -180)
