import Foundation

/// CoreLocation's `CLError`: an error of the location services, with CoreLocation's codes.
///
/// ```swift
/// func locationManager(_ manager: CLLocationManager, didFailWithError error: Error) {
///   if let error = error as? CLError, error.code == .denied { manager.stopUpdatingLocation() }
/// }
/// ```
///
/// `catch CLError.denied` matches too. Which codes Linux raises, and when:
/// ``Code``.
public struct CLError: Error, CustomNSError, Hashable, Sendable {
  /// CoreLocation's error codes, with its raw values.
  ///
  /// Raised on Linux: `locationUnknown` (no location yet, or the source ended: a log at its
  /// end, gpsd or waymarkd gone), `denied` (the program's grant says never, or location
  /// services are off), `headingFailure` is never (no magnetometer: heading updates are not
  /// started), `regionMonitoringDenied` (a region with a reduced grant),
  /// `regionMonitoringFailure` (a region with a radius of 0 or less, or an invalid centre),
  /// `rangingUnavailable` (beacon ranging: no Bluetooth beacons), `geocodeFoundNoResult`,
  /// `geocodeCanceled` (`CLGeocoder`). The others exist for code that switches over them.
  public enum Code: Int, Sendable, Hashable, Equatable {
    /// No location could be had now; the service keeps trying.
    case locationUnknown = 0
    /// The program may not have locations.
    case denied = 1
    /// The network is unavailable.
    case network = 2
    /// The heading could not be determined.
    case headingFailure = 3
    /// Region monitoring is not allowed.
    case regionMonitoringDenied = 4
    /// A region could not be monitored.
    case regionMonitoringFailure = 5
    /// Region monitoring could not start at once.
    case regionMonitoringSetupDelayed = 6
    /// Region events may be late.
    case regionMonitoringResponseDelayed = 7
    /// The geocoder found nothing.
    case geocodeFoundNoResult = 8
    /// The geocoder found part of a result.
    case geocodeFoundPartialResult = 9
    /// The geocode request was cancelled.
    case geocodeCanceled = 10
    /// Deferred updates failed.
    case deferredFailed = 11
    /// Deferred updates need updates on.
    case deferredNotUpdatingLocation = 12
    /// Deferred updates need a better accuracy.
    case deferredAccuracyTooLow = 13
    /// Deferred updates need no distance filter.
    case deferredDistanceFiltered = 14
    /// Deferred updates were cancelled.
    case deferredCanceled = 15
    /// Beacon ranging is unavailable.
    case rangingUnavailable = 16
    /// Beacon ranging failed.
    case rangingFailure = 17
    /// The person declined the prompt.
    case promptDeclined = 18
    /// Historical locations could not be had.
    case historicalLocationError = 19
  }

  /// The error's code.
  public let code: Code

  /// The region CoreLocation proposes in place of one it could not monitor: always `nil`
  /// (Waymark monitors a region of any size or fails it).
  public var alternateRegion: CLRegion? { nil }

  /// An error with `code`.
  public init(_ code: Code) { self.code = code }

  /// ``kCLErrorDomain``.
  public static var errorDomain: String { kCLErrorDomain }
  /// The code's raw value.
  public var errorCode: Int { code.rawValue }
  /// No extra information.
  public var errorUserInfo: [String: Any] { [:] }

  /// ``Code/locationUnknown``.
  public static var locationUnknown: Code { .locationUnknown }
  /// ``Code/denied``.
  public static var denied: Code { .denied }
  /// ``Code/network``.
  public static var network: Code { .network }
  /// ``Code/headingFailure``.
  public static var headingFailure: Code { .headingFailure }
  /// ``Code/regionMonitoringDenied``.
  public static var regionMonitoringDenied: Code { .regionMonitoringDenied }
  /// ``Code/regionMonitoringFailure``.
  public static var regionMonitoringFailure: Code { .regionMonitoringFailure }
  /// ``Code/regionMonitoringSetupDelayed``.
  public static var regionMonitoringSetupDelayed: Code { .regionMonitoringSetupDelayed }
  /// ``Code/regionMonitoringResponseDelayed``.
  public static var regionMonitoringResponseDelayed: Code { .regionMonitoringResponseDelayed }
  /// ``Code/geocodeFoundNoResult``.
  public static var geocodeFoundNoResult: Code { .geocodeFoundNoResult }
  /// ``Code/geocodeFoundPartialResult``.
  public static var geocodeFoundPartialResult: Code { .geocodeFoundPartialResult }
  /// ``Code/geocodeCanceled``.
  public static var geocodeCanceled: Code { .geocodeCanceled }
  /// ``Code/deferredFailed``.
  public static var deferredFailed: Code { .deferredFailed }
  /// ``Code/deferredNotUpdatingLocation``.
  public static var deferredNotUpdatingLocation: Code { .deferredNotUpdatingLocation }
  /// ``Code/deferredAccuracyTooLow``.
  public static var deferredAccuracyTooLow: Code { .deferredAccuracyTooLow }
  /// ``Code/deferredDistanceFiltered``.
  public static var deferredDistanceFiltered: Code { .deferredDistanceFiltered }
  /// ``Code/deferredCanceled``.
  public static var deferredCanceled: Code { .deferredCanceled }
  /// ``Code/rangingUnavailable``.
  public static var rangingUnavailable: Code { .rangingUnavailable }
  /// ``Code/rangingFailure``.
  public static var rangingFailure: Code { .rangingFailure }
  /// ``Code/promptDeclined``.
  public static var promptDeclined: Code { .promptDeclined }
  /// ``Code/historicalLocationError``.
  public static var historicalLocationError: Code { .historicalLocationError }
}

/// Whether `error` is a ``CLError`` with `code`: what makes `catch CLError.denied` match.
public func ~= (code: CLError.Code, error: any Error) -> Bool {
  (error as? CLError)?.code == code
}
