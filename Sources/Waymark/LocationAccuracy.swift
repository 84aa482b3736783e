import FoundationEssentials
import Glibc
import WaymarkCore

/// The accuracy an application wants, as CoreLocation's `desiredAccuracy` constants.
///
/// ``LocationManager/requestLocation(timeout:)`` resolves with the first location whose
/// horizontal accuracy is at most ``meters``; ``bestForNavigation`` and ``best`` take the first
/// location the receiver gives (within ``LocationManager/maximumHorizontalAccuracy``).
/// ``reduced`` asks for approximate locations even when full accuracy is granted.
public enum LocationAccuracy: String, Sendable, Hashable, CaseIterable {
  /// The receiver's best, for navigation.
  case bestForNavigation
  /// The receiver's best.
  case best
  /// Within 10 metres.
  case nearestTenMeters
  /// Within 100 metres.
  case hundredMeters
  /// Within 1 kilometre.
  case kilometer
  /// Within 3 kilometres.
  case threeKilometers
  /// Approximate: coordinates snapped to the ``ReducedAccuracy`` grid, at its rate.
  case reduced

  /// The accuracy threshold in metres; `nil` for "whatever the receiver gives".
  public var meters: Double? {
    switch self {
    case .bestForNavigation, .best, .reduced: nil
    case .nearestTenMeters: 10
    case .hundredMeters: 100
    case .kilometer: 1000
    case .threeKilometers: 3000
    }
  }

  /// Whether `location` is accurate enough.
  public func isSatisfied(by location: Location) -> Bool {
    guard let meters else { return true }
    guard let accuracy = location.horizontalAccuracy else { return false }
    return accuracy <= meters
  }
}

/// How approximate locations are made: coordinates snapped to the centre of a grid cell, and at
/// most one location per interval of fix time.
///
/// The default cell is 5 km (iOS uses 1–20 km) and the default interval 10 minutes ("a few
/// updates an hour"). Cells are `gridMeters` high (latitude rows) and `gridMeters` wide at the
/// centre of their row (so a cell spans more degrees of longitude towards the poles). A snapped
/// location keeps its timestamp and source; its horizontal accuracy becomes at least
/// `gridMeters`; altitude, speed and course are removed (they would tell more than the cell).
public struct ReducedAccuracy: Sendable, Hashable {
  /// Side of a grid cell, metres.
  public var gridMeters: Double
  /// Minimum fix time between two delivered approximate locations, seconds.
  public var minimumInterval: TimeInterval

  /// Creates a policy.
  public init(gridMeters: Double = 5000, minimumInterval: TimeInterval = 600) {
    self.gridMeters = gridMeters
    self.minimumInterval = minimumInterval
  }

  /// The default: 5 km cells, one location per 10 minutes.
  public static let standard = ReducedAccuracy()

  /// `location` snapped to the centre of its grid cell.
  public func snap(_ location: Location) -> Location {
    let metersPerDegree = Coordinate.metersPerDegree
    let latitudeStep = gridMeters / metersPerDegree
    let row = (location.coordinate.latitude / latitudeStep).rounded(.down)
    let latitude = min(90, max(-90, (row + 0.5) * latitudeStep))
    let cosine = cos(latitude * .pi / 180)
    let longitudeStep = cosine > 1e-9 ? min(360, gridMeters / (metersPerDegree * cosine)) : 360
    let column = ((location.coordinate.longitude + 180) / longitudeStep).rounded(.down)
    let longitude = min(180, -180 + (column + 0.5) * longitudeStep)
    return Location(
      coordinate: Coordinate(latitude: latitude, longitude: longitude),
      horizontalAccuracy: max(location.horizontalAccuracy ?? 0, gridMeters),
      timestamp: location.timestamp,
      source: location.source)
  }
}
