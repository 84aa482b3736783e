import Foundation

/// CoreLocation's `CLLocationManagerDelegate`, with its method names; every method has an empty
/// default, as CoreLocation's are optional.
///
/// Calls come on the main queue, one at a time, in the order of the events (iOS calls on the
/// run loop of the thread that made the manager, the main thread in an app): serve it with
/// `dispatchMain()`, `RunLoop.main.run()` or an `async` main.
///
/// The order, as on iOS: ``locationManagerDidChangeAuthorization(_:)`` once the manager knows
/// the program's status (after it was made) and on every change; then locations, failures,
/// visits and region events as they happen.
public protocol CLLocationManagerDelegate: NSObjectProtocol {
  /// New locations, oldest first.
  func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation])
  /// A failure: a ``CLError`` (`locationUnknown`: no location now, the service keeps trying;
  /// `denied`: stop asking).
  func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error)
  /// The authorization status or accuracy changed; also called once when the manager has
  /// read it after being made.
  func locationManagerDidChangeAuthorization(_ manager: CLLocationManager)
  /// The iOS 4–13 form of the authorization change, called after
  /// ``locationManagerDidChangeAuthorization(_:)``.
  func locationManager(
    _ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus)
  /// A visit began (``CLVisit/departureDate`` `distantFuture`) or ended.
  func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit)
  /// The device entered a monitored region.
  func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion)
  /// The device left a monitored region.
  func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion)
  /// A region's state: after each crossing (after the enter or exit call) and in answer to
  /// `requestState(for:)`.
  func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion)
  /// Monitoring of a region began.
  func locationManager(_ manager: CLLocationManager, didStartMonitoringFor region: CLRegion)
  /// A region cannot be monitored.
  func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?,
    withError error: any Error)
  /// A new heading: never called (no magnetometer, ``CLLocationManager/headingAvailable()`` is
  /// `false`).
  func locationManager(_ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading)
  /// Whether to show the compass calibration: never asked.
  func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool
  /// Updates paused: never called (a Linux program is in the foreground while it runs).
  func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager)
  /// Updates resumed: never called.
  func locationManagerDidResumeLocationUpdates(_ manager: CLLocationManager)
  /// Deferred updates ended: after `allowDeferredLocationUpdates(untilTraveled:timeout:)`, with
  /// `CLError.deferredFailed` (deferred updates are not available, as on iOS since 13).
  func locationManager(
    _ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?)
  /// Beacons ranged: never called (no Bluetooth beacons).
  func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint)
  /// Ranging failed: after `startRangingBeacons(satisfying:)`, with
  /// `CLError.rangingUnavailable`.
  func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error)
  /// Beacons of a region ranged (deprecated on iOS): never called.
  func locationManager(
    _ manager: CLLocationManager, didRangeBeacons beacons: [CLBeacon], in region: CLBeaconRegion)
  /// Ranging a region failed (deprecated on iOS): after `startRangingBeacons(in:)`, with
  /// `CLError.rangingUnavailable`.
  func locationManager(
    _ manager: CLLocationManager, rangingBeaconsDidFailFor region: CLBeaconRegion,
    withError error: any Error)
}

extension CLLocationManagerDelegate {
  public func locationManager(
    _ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]
  ) {}
  public func locationManager(_ manager: CLLocationManager, didFailWithError error: any Error) {}
  public func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {}
  public func locationManager(
    _ manager: CLLocationManager, didChangeAuthorization status: CLAuthorizationStatus
  ) {}
  public func locationManager(_ manager: CLLocationManager, didVisit visit: CLVisit) {}
  public func locationManager(_ manager: CLLocationManager, didEnterRegion region: CLRegion) {}
  public func locationManager(_ manager: CLLocationManager, didExitRegion region: CLRegion) {}
  public func locationManager(
    _ manager: CLLocationManager, didDetermineState state: CLRegionState, for region: CLRegion
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, didStartMonitoringFor region: CLRegion
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, monitoringDidFailFor region: CLRegion?,
    withError error: any Error
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, didUpdateHeading newHeading: CLHeading
  ) {}
  public func locationManagerShouldDisplayHeadingCalibration(_ manager: CLLocationManager) -> Bool {
    false
  }
  public func locationManagerDidPauseLocationUpdates(_ manager: CLLocationManager) {}
  public func locationManagerDidResumeLocationUpdates(_ manager: CLLocationManager) {}
  public func locationManager(
    _ manager: CLLocationManager, didFinishDeferredUpdatesWithError error: (any Error)?
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, didRange beacons: [CLBeacon],
    satisfying beaconConstraint: CLBeaconIdentityConstraint
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, didFailRangingFor beaconConstraint: CLBeaconIdentityConstraint,
    error: any Error
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, didRangeBeacons beacons: [CLBeacon], in region: CLBeaconRegion
  ) {}
  public func locationManager(
    _ manager: CLLocationManager, rangingBeaconsDidFailFor region: CLBeaconRegion,
    withError error: any Error
  ) {}
}
