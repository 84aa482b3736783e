import Foundation

/// CoreLocation's `CLBeaconIdentityConstraint`: the identity of the beacons to range, by UUID
/// and optionally major and minor values.
///
/// Accepted by ``CLLocationManager/startRangingBeacons(satisfying:)``, which fails at once with
/// `CLError.rangingUnavailable` on Linux (no Bluetooth beacons).
open class CLBeaconIdentityConstraint: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: every stored property is a `let` of a Sendable type.

  /// The beacons' UUID.
  public let uuid: UUID
  /// The major value, or `nil` for any.
  public let major: CLBeaconMajorValue?
  /// The minor value, or `nil` for any.
  public let minor: CLBeaconMinorValue?

  /// Beacons with `uuid`.
  public convenience init(uuid: UUID) {
    self.init(uuid: uuid, major: nil, minor: nil)
  }

  /// Beacons with `uuid` and `major`.
  public convenience init(uuid: UUID, major: CLBeaconMajorValue) {
    self.init(uuid: uuid, major: major, minor: nil)
  }

  /// The beacon with `uuid`, `major` and `minor`.
  public convenience init(uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue) {
    self.init(uuid: uuid, major: major, minor: Optional(minor))
  }

  private init(uuid: UUID, major: CLBeaconMajorValue?, minor: CLBeaconMinorValue?) {
    self.uuid = uuid
    self.major = major
    self.minor = minor
    super.init()
  }

  /// The constraint itself (it never changes).
  open func copy(with zone: NSZone? = nil) -> Any { self }

  /// Constraints are equal when their UUID, major and minor are.
  open override func isEqual(_ object: Any?) -> Bool {
    guard let other = object as? CLBeaconIdentityConstraint else { return false }
    return other.uuid == uuid && other.major == major && other.minor == minor
  }

  /// A hash of the UUID, major and minor.
  open override var hash: Int {
    var hasher = Hasher()
    hasher.combine(uuid)
    hasher.combine(major)
    hasher.combine(minor)
    return hasher.finalize()
  }
}
