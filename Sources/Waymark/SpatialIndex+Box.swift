import WaymarkCore

extension SpatialIndex {
  /// A latitude/longitude box, degrees: `west` may be below −180 and `east` above 180 when the
  /// box crosses the antimeridian (the cells wrap).
  struct Box: Equatable, Sendable {
    var south: Double
    var north: Double
    var west: Double
    var east: Double
  }
}

extension SpatialIndex.Box {
  /// The box of the two ends of a short segment, widened by 10⁻⁵° (about a metre), with the
  /// end's longitude taken the shorter way round from the start's.
  init(segmentFrom start: Coordinate, to end: Coordinate) {
    let slack = 1e-5
    var endLongitude = end.longitude
    if endLongitude - start.longitude > 180 {
      endLongitude -= 360
    } else if endLongitude - start.longitude < -180 {
      endLongitude += 360
    }
    south = min(start.latitude, end.latitude) - slack
    north = max(start.latitude, end.latitude) + slack
    west = min(start.longitude, endLongitude) - slack
    east = max(start.longitude, endLongitude) + slack
  }

  /// Whether `other` lies inside this box (longitudes compared as they are, unwrapped).
  @inline(__always)
  func contains(_ other: Self) -> Bool {
    other.south >= south && other.north <= north && other.west >= west && other.east <= east
  }
}
