import Foundation
import Waymark

/// CoreLocation's `CLVisit`: a place where the device stayed, from Waymark's `Stay`.
///
/// As on iOS, a visit that is still going on has ``departureDate`` `Date.distantFuture`, and one
/// whose arrival was not seen has ``arrivalDate`` `Date.distantPast`.
open class CLVisit: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: every stored property is a `let` of a Sendable type.

  /// When the device arrived (the first fix of the stay); `Date.distantPast` when unknown.
  public let arrivalDate: Date
  /// When it left (the last fix of the stay, or a time inferred in a gap of fixes);
  /// `Date.distantFuture` while the visit goes on.
  public let departureDate: Date
  /// The centre of the visit, degrees.
  public let coordinate: CLLocationCoordinate2D
  /// The radius of uncertainty of ``coordinate``, metres.
  public let horizontalAccuracy: CLLocationAccuracy

  /// The visit of a Waymark stay: an open stay's departure is `Date.distantFuture`.
  public init(_ stay: Stay) {
    arrivalDate = stay.arrivalDate
    departureDate = stay.departureDate ?? .distantFuture
    coordinate = stay.coordinate
    horizontalAccuracy = stay.horizontalAccuracy
    super.init()
  }

  /// The visit itself: a `CLVisit` never changes.
  open func copy(with zone: NSZone? = nil) -> Any { self }
}
