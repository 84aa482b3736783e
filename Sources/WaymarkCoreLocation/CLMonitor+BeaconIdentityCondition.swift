import Foundation

extension CLMonitor {
  /// CoreLocation's `CLMonitor.BeaconIdentityCondition`: a Bluetooth beacon by its identity.
  ///
  /// A monitor accepts it and reports it at once with an event of state `.unmonitored` and
  /// ``Event/conditionUnsupported`` set, as iOS does on a device without Bluetooth LE: Linux
  /// locations here come from a GNSS receiver, with no beacon ranging.
  public struct BeaconIdentityCondition: CLCondition {
    /// The beacons' UUID.
    public var uuid: UUID
    /// The major value, or `nil` for any.
    public var major: CLBeaconMajorValue?
    /// The minor value, or `nil` for any.
    public var minor: CLBeaconMinorValue?

    /// Beacons with `uuid`.
    public init(uuid: UUID) { self.uuid = uuid }

    /// Beacons with `uuid` and `major`.
    public init(uuid: UUID, major: CLBeaconMajorValue) {
      self.uuid = uuid
      self.major = major
    }

    /// The beacon with `uuid`, `major` and `minor`.
    public init(uuid: UUID, major: CLBeaconMajorValue, minor: CLBeaconMinorValue) {
      self.uuid = uuid
      self.major = major
      self.minor = minor
    }
  }
}
