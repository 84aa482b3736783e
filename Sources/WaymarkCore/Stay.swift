import FoundationEssentials

/// Where a device stayed, found from its fixes alone (no place declared): CoreLocation's
/// `CLVisit` without the place.
///
/// The arrival is the time of the stay's first fix, the departure the time of its last fix
/// inside — or, when the logger slept while the device stood here and the device reappeared
/// within walking reach, a time inferred in that gap (``observedDepartureDate`` then keeps the
/// last fix seen here). The centre and accuracy come from all of its fixes, weighted by their
/// error.
public struct Stay: Sendable, Hashable, TimeSpan {
  /// Time of the first fix of the stay.
  public var arrivalDate: Date
  /// When the device left: the time of the last fix inside the stay, or a time inferred in a
  /// gap of the fixes (``isDepartureInferred``); `nil` while the device is still there.
  public var departureDate: Date?
  /// The observed part's end when the departure is inferred: the time of the last fix seen at
  /// the stay before the gap in which the device left; `nil` when the departure was observed
  /// (or the stay is open). The inferred part is ``inferredSeconds``.
  public var observedDepartureDate: Date?
  /// Centre of the stay: the mean of its fixes, each weighted by 1 / error².
  public var coordinate: Coordinate
  /// Radius of uncertainty of `coordinate`, metres: the weighted RMS distance of the fixes from
  /// the centre, combined with the centre's own error (one fix gives its own accuracy).
  public var horizontalAccuracy: Double
  /// Fixes inside the stay.
  public var fixCount: Int
  /// The declared place the stay lies in (``place(in:)``), `nil` at no declared place: a stay
  /// at a place is that place's visit, not a second one.
  public var placeID: String?
  /// Where the fixes came from (device path, log file, `waymarkd`).
  public var source: String?

  /// Creates a stay.
  public init(
    arrivalDate: Date, departureDate: Date? = nil, observedDepartureDate: Date? = nil,
    coordinate: Coordinate, horizontalAccuracy: Double, fixCount: Int, placeID: String? = nil,
    source: String? = nil
  ) {
    self.placeID = placeID
    self.source = source
    self.arrivalDate = arrivalDate
    self.departureDate = departureDate
    self.observedDepartureDate = departureDate == nil ? nil : observedDepartureDate
    self.coordinate = coordinate
    self.horizontalAccuracy = horizontalAccuracy
    self.fixCount = fixCount
  }

  /// Whether the departure was inferred in a gap of the fixes rather than observed.
  public var isDepartureInferred: Bool { observedDepartureDate != nil }

  /// Seconds of the stay that were inferred, not observed: from the last fix seen at the stay
  /// to the inferred departure (0 when the departure was observed or the stay is open).
  public var inferredSeconds: Double {
    guard let departureDate, let observedDepartureDate else { return 0 }
    return max(0, departureDate.timeIntervalSince(observedDepartureDate))
  }

  /// The declared place the stay lies in: among the places whose circle holds the stay's
  /// centre, the one whose centre is nearest; `nil` at no declared place.
  public func place(in places: [Place]) -> Place? {
    var best: (place: Place, distance: Double)?
    for place in places {
      let distance = place.coordinate.distance(to: coordinate)
      if distance <= place.radiusMeters, distance < best?.distance ?? .infinity {
        best = (place, distance)
      }
    }
    return best?.place
  }
}
