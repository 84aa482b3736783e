import Foundation

/// CoreLocation's `CLBeaconRegion`: a region defined by Bluetooth beacons.
///
/// It exists so that code using beacon regions compiles; on Linux (no Bluetooth beacons)
/// ``CLLocationManager/isMonitoringAvailable(for:)`` is `false` for it, monitoring one fails
/// with `CLError.regionMonitoringFailure` and ranging one with `CLError.rangingUnavailable`, as
/// on an iOS device without Bluetooth LE.
open class CLBeaconRegion: CLRegion, @unchecked Sendable {
  // @unchecked: the identity is immutable; the notify flags are set before monitoring starts.

  /// The identity of the region's beacons.
  public let beaconIdentityConstraint: CLBeaconIdentityConstraint
  /// Whether the state is reported when the display turns on (kept; Linux has no such event).
  open var notifyEntryStateOnDisplay = false

  /// The beacons' UUID.
  open var uuid: UUID { beaconIdentityConstraint.uuid }
  /// The major value, or `nil` for any.
  open var major: NSNumber? { beaconIdentityConstraint.major.map { NSNumber(value: $0) } }
  /// The minor value, or `nil` for any.
  open var minor: NSNumber? { beaconIdentityConstraint.minor.map { NSNumber(value: $0) } }

  /// The beacons of `constraint`, named `identifier`.
  public init(beaconIdentityConstraint constraint: CLBeaconIdentityConstraint, identifier: String) {
    beaconIdentityConstraint = constraint
    super.init(identifier: identifier)
  }

  /// Beacons with `uuid`.
  public convenience init(uuid: UUID, identifier: String) {
    self.init(
      beaconIdentityConstraint: CLBeaconIdentityConstraint(uuid: uuid), identifier: identifier)
  }

  /// Beacons with `uuid` and `major`.
  public convenience init(uuid: UUID, major: CLBeaconMajorValue, identifier: String) {
    self.init(
      beaconIdentityConstraint: CLBeaconIdentityConstraint(uuid: uuid, major: major),
      identifier: identifier)
  }

  /// The beacon with `uuid`, `major` and `minor`.
  public convenience init(
    uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue, identifier: String
  ) {
    self.init(
      beaconIdentityConstraint: CLBeaconIdentityConstraint(uuid: uuid, major: major, minor: minor),
      identifier: identifier)
  }
}
