import Foundation

/// CoreLocation's `CLRegion`: a region a ``CLLocationManager`` monitors (its one concrete kind
/// here is ``CLCircularRegion``). Set ``notifyOnEntry`` and ``notifyOnExit`` before
/// `startMonitoring(for:)`: the manager takes them then.
open class CLRegion: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: the notify flags are set before monitoring starts and read when it does.

  /// The region's identifier.
  public let identifier: String
  /// Whether entering calls `didEnterRegion` (default `true`).
  open var notifyOnEntry = true
  /// Whether leaving calls `didExitRegion` (default `true`).
  open var notifyOnExit = true

  init(identifier: String) {
    self.identifier = identifier
    super.init()
  }

  /// The region itself.
  open func copy(with zone: NSZone? = nil) -> Any { self }

  /// Regions are equal when their identifiers are, as CoreLocation compares them.
  open override func isEqual(_ object: Any?) -> Bool {
    (object as? CLRegion)?.identifier == identifier
  }

  /// The identifier's hash.
  open override var hash: Int { identifier.hashValue }
}

/// CoreLocation's `CLCircularRegion`: a circle on the ground, monitored by Waymark's place
/// monitor (enter radius, exit radius beyond it, confirmation by fixes).
open class CLCircularRegion: CLRegion, @unchecked Sendable {
  /// The centre, degrees.
  public let center: CLLocationCoordinate2D
  /// The radius, metres.
  public let radius: CLLocationDistance

  /// A circle of `radius` metres around `center`.
  public init(center: CLLocationCoordinate2D, radius: CLLocationDistance, identifier: String) {
    self.center = center
    self.radius = radius
    super.init(identifier: identifier)
  }

  /// Whether `coordinate` lies within ``radius`` of ``center``.
  open func contains(_ coordinate: CLLocationCoordinate2D) -> Bool {
    center.distance(to: coordinate) <= radius
  }
}

/// CoreLocation's `CLRegionState`.
public enum CLRegionState: Int, Sendable, Hashable {
  /// Not known yet (no location since monitoring began).
  case unknown = 0
  /// Inside the region.
  case inside = 1
  /// Outside the region.
  case outside = 2
}

/// CoreLocation's `CLActivityType`: what the app's updates are for. Kept by the manager and
/// applied to nothing: gpsd's dynamic model is shared by every program and set with gpsd's
/// tools.
public enum CLActivityType: Int, Sendable, Hashable {
  /// Unknown activity (the default).
  case other = 1
  /// Driving.
  case automotiveNavigation = 2
  /// Exercise.
  case fitness = 3
  /// Other navigation (boat, train, plane).
  case otherNavigation = 4
  /// Flight.
  case airborne = 5
}
