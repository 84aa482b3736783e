import Foundation

/// CoreLocation's `CLHeading`. None is ever delivered: a GNSS receiver has no magnetometer
/// (``CLLocationManager/headingAvailable()`` is `false`, and `startUpdatingHeading()` does
/// nothing, as on an iOS device without one). The direction of travel is
/// ``CLLocation/course``.
open class CLHeading: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: every stored property is a `let`.

  /// Degrees from magnetic north.
  public let magneticHeading: CLLocationDirection
  /// Degrees from true north; negative when invalid.
  public let trueHeading: CLLocationDirection
  /// Degrees of uncertainty; negative when invalid.
  public let headingAccuracy: CLLocationDirection
  /// Magnetic field on the x axis, microteslas.
  public let x: CLHeadingComponentValue
  /// Magnetic field on the y axis, microteslas.
  public let y: CLHeadingComponentValue
  /// Magnetic field on the z axis, microteslas.
  public let z: CLHeadingComponentValue
  /// When it was measured.
  public let timestamp: Date

  init(magneticHeading: Double, trueHeading: Double, headingAccuracy: Double, timestamp: Date) {
    self.magneticHeading = magneticHeading
    self.trueHeading = trueHeading
    self.headingAccuracy = headingAccuracy
    x = 0
    y = 0
    z = 0
    self.timestamp = timestamp
    super.init()
  }

  /// The heading itself.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}

/// CoreLocation's `CLDeviceOrientation`, for ``CLLocationManager/headingOrientation``.
public enum CLDeviceOrientation: Int32, Sendable, Hashable {
  /// Unknown.
  case unknown = 0
  /// Portrait.
  case portrait = 1
  /// Portrait, upside down.
  case portraitUpsideDown = 2
  /// Landscape, home button right.
  case landscapeLeft = 3
  /// Landscape, home button left.
  case landscapeRight = 4
  /// Face up.
  case faceUp = 5
  /// Face down.
  case faceDown = 6
}
