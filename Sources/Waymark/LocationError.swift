import FoundationEssentials
import WaymarkCore

/// Why a location request failed.
public enum LocationError: Error, Sendable, Hashable {
  /// The client may not have locations: the status it has.
  case notAuthorized(AuthorizationStatus)
  /// No location at the desired accuracy came in time; the most accurate one seen, if any.
  case timedOut(bestSeen: Location?)
  /// The source ended (a replay reached its end) before a location at the desired accuracy;
  /// the most accurate one seen, if any.
  case sourceEnded(bestSeen: Location?)
  /// No usable fix for ``LocationManager/staleInterval`` while the source runs (the receiver
  /// lost its fix, or the source went quiet); the time of the last usable fix, if any. Not
  /// fatal: locations resume with the next fix.
  case stale(lastFixTime: Date?)
}

/// One thing that happened in a ``LocationManager``. The delegate and the streams are fed from
/// the same sequence of events.
public enum LocationManagerEvent: Sendable, Hashable {
  /// A location was delivered.
  case location(Location)
  /// The authorization status or accuracy changed (also sent when a delegate is set).
  case authorization(AuthorizationState)
  /// The source reported its health.
  case health(SourceHealth)
  /// A location request failed.
  case failure(LocationError)
}

/// Receives a ``LocationManager``'s events, CoreLocation style.
///
/// Calls come one at a time, in the order of the events, from a task of the manager (not the
/// main thread). The manager holds its delegate weakly. Every method has an empty default.
public protocol LocationManagerDelegate: AnyObject, Sendable {
  /// New locations, oldest first (one at a time here).
  func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location])
  /// The authorization changed; also called once when the delegate is set.
  func locationManager(_ manager: LocationManager, didChangeAuthorization state: AuthorizationState)
  /// The source reported its health (gpsd unreachable, device gone, stale fix…).
  func locationManager(_ manager: LocationManager, didChangeHealth health: SourceHealth)
  /// A location request failed.
  func locationManager(_ manager: LocationManager, didFailWithError error: LocationError)
}

extension LocationManagerDelegate {
  public func locationManager(
    _ manager: LocationManager, didUpdateLocations locations: [Location]
  ) {}
  public func locationManager(
    _ manager: LocationManager, didChangeAuthorization state: AuthorizationState
  ) {}
  public func locationManager(_ manager: LocationManager, didChangeHealth health: SourceHealth) {}
  public func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {}
}
