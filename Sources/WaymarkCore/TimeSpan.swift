import FoundationEssentials

/// Something with an arrival and, once over, a departure: a ``Visit`` at a declared place or a
/// ``Stay`` found from the fixes alone. Gives both the same ``isOpen`` and ``durationSeconds``.
public protocol TimeSpan {
  /// When the device arrived.
  var arrivalDate: Date { get }
  /// When the device left; `nil` while it is still there.
  var departureDate: Date? { get }
}

extension TimeSpan {
  /// Whether the device is still there.
  public var isOpen: Bool { departureDate == nil }

  /// Seconds from arrival to departure; `nil` while open.
  public var durationSeconds: Double? { departureDate.map { $0.timeIntervalSince(arrivalDate) } }
}
