import Foundation

/// CoreLocation's `CLProximity`: how near a ranged beacon is.
public enum CLProximity: Int, Sendable, Hashable {
  /// Not known.
  case unknown = 0
  /// Within centimetres.
  case immediate = 1
  /// Within a few metres.
  case near = 2
  /// Farther.
  case far = 3
}

/// CoreLocation's `CLBeacon`: a Bluetooth beacon met while ranging.
///
/// It exists so that code handling beacons compiles; none is ever delivered on Linux, as on an
/// iOS device without Bluetooth LE: ``CLLocationManager/isRangingAvailable()`` is `false` and
/// ranging fails with `CLError.rangingUnavailable`.
open class CLBeacon: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: every stored property is a `let` of a Sendable type.

  /// The beacon's UUID.
  public let uuid: UUID
  /// Its major value.
  public let major: NSNumber
  /// Its minor value.
  public let minor: NSNumber
  /// How near it is.
  public let proximity: CLProximity
  /// Its distance's uncertainty, metres; negative when unknown.
  public let accuracy: CLLocationAccuracy
  /// Its received signal strength, decibel-milliwatts.
  public let rssi: Int
  /// When it was last heard.
  public let timestamp: Date

  init(uuid: UUID, major: UInt16, minor: UInt16) {
    self.uuid = uuid
    self.major = NSNumber(value: major)
    self.minor = NSNumber(value: minor)
    proximity = .unknown
    accuracy = -1
    rssi = 0
    timestamp = Date()
    super.init()
  }

  /// The beacon itself (it never changes).
  open func copy(with zone: NSZone? = nil) -> Any { self }
}
