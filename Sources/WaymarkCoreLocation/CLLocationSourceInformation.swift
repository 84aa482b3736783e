import Foundation
import Waymark

/// CoreLocation's `CLLocationSourceInformation`: whether a location was simulated by software
/// or produced by an accessory.
///
/// On Linux a replayed log or a simulator's fixes are simulated by software (as Xcode's
/// simulated locations are), and a receiver's fixes through gpsd or waymarkd come from an
/// external accessory (the GNSS receiver on USB or serial).
open class CLLocationSourceInformation: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: its stored properties are `let` Bools.

  /// Whether the location was produced by software (a replayed log, a simulator).
  public let isSimulatedBySoftware: Bool
  /// Whether the location came from an accessory (a receiver, through gpsd).
  public let isProducedByAccessory: Bool

  /// CoreLocation's initializer.
  public init(softwareSimulationState isSoftware: Bool, andExternalAccessoryState isAccessory: Bool)
  {
    isSimulatedBySoftware = isSoftware
    isProducedByAccessory = isAccessory
    super.init()
  }

  /// The information of a Waymark provenance: a log or a simulator is software, a device an
  /// accessory.
  public convenience init(_ provenance: FixProvenance) {
    switch provenance {
    case .device:
      self.init(softwareSimulationState: false, andExternalAccessoryState: true)
    case .file, .simulated:
      self.init(softwareSimulationState: true, andExternalAccessoryState: false)
    }
  }

  /// The information itself: it never changes.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}
