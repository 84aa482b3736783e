import Waymark

/// CoreLocation's `CLAccuracyAuthorization`: the accuracy a program's grant allows.
public enum CLAccuracyAuthorization: Int, Sendable, Hashable {
  /// Locations as precise as the receiver gives them (a grant with full accuracy).
  case fullAccuracy = 0
  /// Coordinates snapped to a 5 km grid, at most one location per 10 minutes (a reduced
  /// grant).
  case reducedAccuracy = 1

  /// The CoreLocation value of a Waymark accuracy.
  public init(_ accuracy: AccuracyAuthorization) {
    self = accuracy == .full ? .fullAccuracy : .reducedAccuracy
  }
}
