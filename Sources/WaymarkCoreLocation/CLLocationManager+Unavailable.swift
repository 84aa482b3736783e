import Foundation

/// What an iOS device without Bluetooth beacons, a location push service or deferred updates
/// answers, and Linux therefore answers: the calls exist, and their failures come to the
/// delegate on the main queue as iOS sends them.
extension CLLocationManager {
  // MARK: Beacons

  /// The constraints being ranged: always empty.
  public var rangedBeaconConstraints: Set<CLBeaconIdentityConstraint> { [] }

  /// Fails at once: `locationManager(_:didFailRangingFor:error:)` with
  /// `CLError.rangingUnavailable` (``isRangingAvailable()`` is `false`).
  public func startRangingBeacons(satisfying constraint: CLBeaconIdentityConstraint) {
    post(.rangingFailed(constraint))
  }

  /// Nothing is being ranged.
  public func stopRangingBeacons(satisfying constraint: CLBeaconIdentityConstraint) {}

  /// Deprecated on iOS. Fails at once: `locationManager(_:rangingBeaconsDidFailFor:withError:)`
  /// with `CLError.rangingUnavailable`.
  public func startRangingBeacons(in region: CLBeaconRegion) {
    post(.regionRangingFailed(region))
  }

  /// Nothing is being ranged.
  public func stopRangingBeacons(in region: CLBeaconRegion) {}

  // MARK: Location pushes

  /// No push service on Linux: `completion` gets no token and
  /// `CLLocationPushServiceError.unsupportedPlatform`, on the main queue.
  public func startMonitoringLocationPushes(completion: ((Data?, (any Error)?) -> Void)?) {
    guard let completion else { return }
    let call = UncheckedCompletion(call: completion)
    DispatchQueue.main.async {
      call.call(nil, CLLocationPushServiceError(.unsupportedPlatform))
    }
  }

  /// No push service on Linux: throws `CLLocationPushServiceError.unsupportedPlatform`.
  public func startMonitoringLocationPushes() async throws -> Data {
    throw CLLocationPushServiceError(.unsupportedPlatform)
  }

  /// Nothing is being monitored.
  public func stopMonitoringLocationPushes() {}

  // MARK: Deferred updates (deprecated on iOS)

  /// `false`, as on iOS since 13.
  public class func deferredLocationUpdatesAvailable() -> Bool { false }

  /// Fails at once: `locationManager(_:didFinishDeferredUpdatesWithError:)` with
  /// `CLError.deferredFailed`.
  public func allowDeferredLocationUpdates(
    untilTraveled distance: CLLocationDistance, timeout: TimeInterval
  ) {
    post(.deferredFailed)
  }

  /// Nothing is deferred.
  public func disallowDeferredLocationUpdates() {}
}

/// A completion on its way to the main queue, which alone calls it.
private struct UncheckedCompletion: @unchecked Sendable {
  // @unchecked: called on the main queue only, as CoreLocation calls it.
  let call: (Data?, (any Error)?) -> Void
}
