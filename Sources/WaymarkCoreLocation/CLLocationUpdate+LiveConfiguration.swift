import Waymark

extension CLLocationUpdate {
  /// CoreLocation's `CLLocationUpdate.LiveConfiguration`: an enum of the five activities, so
  /// that a `switch` over it is exhaustive as on iOS. Each case is Waymark's configuration of
  /// the same name (``waymarkConfiguration``: filters, stationarity, pausing).
  public enum LiveConfiguration: Sendable, Hashable, CaseIterable {
    /// Any activity.
    case `default`
    /// Driving with turn-by-turn directions.
    case automotiveNavigation
    /// Navigation on foot, by bicycle or boat.
    case otherNavigation
    /// Exercise.
    case fitness
    /// Flight.
    case airborne

    /// Waymark's configuration of this activity.
    public var waymarkConfiguration: LocationUpdate.LiveConfiguration {
      switch self {
      case .default: .default
      case .automotiveNavigation: .automotiveNavigation
      case .otherNavigation: .otherNavigation
      case .fitness: .fitness
      case .airborne: .airborne
      }
    }
  }
}
