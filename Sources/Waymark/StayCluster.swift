import FoundationEssentials
import Glibc
import WaymarkCore

/// Fixes that agree on one position: their error-weighted centre, on a local plane around the
/// first fix (metres east and north), and their time span.
struct StayCluster: Sendable {
  struct Sample: Sendable {
    var coordinate: Coordinate
    var accuracy: Double
    var time: Date
  }

  let anchor: Coordinate
  private let metersPerDegreeLongitude: Double
  private var weight = 0.0
  private var east = 0.0
  private var north = 0.0
  private var squares = 0.0
  var first: Date
  var lastInside: Date
  var count = 0
  var isStay = false

  init(_ sample: Sample) {
    anchor = sample.coordinate
    metersPerDegreeLongitude = Coordinate.metersPerDegree * cos(anchor.latitude * .pi / 180)
    first = sample.time
    lastInside = sample.time
    add(sample)
  }

  /// The error-weighted mean of the fixes.
  var centre: Coordinate {
    let x = east / weight
    let y = north / weight
    var longitude = anchor.longitude + x / max(metersPerDegreeLongitude, 1e-6)
    longitude = (longitude + 540).truncatingRemainder(dividingBy: 360) - 180
    return Coordinate(
      latitude: anchor.latitude + y / Coordinate.metersPerDegree, longitude: longitude)
  }

  /// Weighted RMS distance of the fixes from the centre combined with the centre's formal error
  /// (`1 / √Σw`), metres.
  var accuracy: Double {
    let x = east / weight
    let y = north / weight
    let spread = max(0, squares / weight - x * x - y * y)
    return (spread + 1 / weight).squareRoot()
  }

  func contains(_ sample: Sample, _ configuration: StayDetector.Configuration) -> Bool {
    let radius = max(
      configuration.minimumRadiusMeters, configuration.accuracyFactor * sample.accuracy)
    return centre.distance(to: sample.coordinate) <= radius
  }

  mutating func add(_ sample: Sample) {
    var dLongitude = sample.coordinate.longitude - anchor.longitude
    if dLongitude > 180 { dLongitude -= 360 } else if dLongitude < -180 { dLongitude += 360 }
    let x = dLongitude * metersPerDegreeLongitude
    let y = (sample.coordinate.latitude - anchor.latitude) * Coordinate.metersPerDegree
    let w = 1 / (sample.accuracy * sample.accuracy)
    weight += w
    east += w * x
    north += w * y
    squares += w * (x * x + y * y)
    count += 1
    first = min(first, sample.time)
    lastInside = max(lastInside, sample.time)
  }

  func stay(closed: Bool) -> Stay {
    Stay(
      arrivalDate: first, departureDate: closed ? lastInside : nil, coordinate: centre,
      horizontalAccuracy: accuracy, fixCount: count)
  }
}
