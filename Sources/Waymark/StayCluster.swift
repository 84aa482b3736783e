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
    /// Whether the fix reports the device moving (Doppler speed over ground above
    /// ``StayCluster/movingMetersPerSecond``); a fix without speed counts as still.
    var isMoving = false
  }

  /// Speed over ground above which a fix shows the device moving, metres per second: a walk
  /// (1.4 m/s) is, receiver noise at rest (a few tenths) is not.
  static let movingMetersPerSecond = 0.8

  let anchor: Coordinate
  private let metersPerDegreeLongitude: Double
  private var weight = 0.0
  private var east = 0.0
  private var north = 0.0
  private var squares = 0.0
  var first: Date
  var lastInside: Date
  var count = 0
  /// The first and the last fix that showed the device still (``Sample/isMoving`` false).
  private(set) var firstStill: Date?
  private(set) var lastStill: Date?
  var isStay = false {
    didSet { if isStay { early = [] } }
  }
  /// The fixes of a cluster that is not a stay yet, oldest first: the arrival is refined from
  /// them when it becomes one.
  private var early: [Sample] = []
  /// The fixes inside of the last `recentSeconds` of a stay, oldest first: the departure is
  /// refined from them.
  private var recent: [Sample] = []
  private var recentStart = 0
  static let recentSeconds = 60.0

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

  /// Weighted RMS distance of the fixes from the centre, metres.
  var spread: Double {
    let x = east / weight
    let y = north / weight
    return max(0, squares / weight - x * x - y * y).squareRoot()
  }

  /// Fixes this close to the centre are at the place itself, not on the way in or out:
  /// twice the spread, at least 10 m.
  private var coreRadius: Double { max(10, 2 * spread) }

  /// Dates the arrival by the first fix near the centre (the way in, inside the radius but
  /// still moving, is not the stay); call when the cluster becomes a stay.
  mutating func refineArrival() {
    let centre = centre
    let radius = coreRadius
    if let sample = early.first(where: { centre.distance(to: $0.coordinate) <= radius }) {
      first = sample.time
    }
    if let firstStill { first = max(first, firstStill) }
  }

  /// The departure: the last recent fix near the centre, else the last fix inside.
  var departure: Date {
    let centre = centre
    let radius = coreRadius
    let near =
      recent[recentStart...].last(where: { centre.distance(to: $0.coordinate) <= radius })?.time
      ?? lastInside
    return lastStill.map { max(first, min(near, $0)) } ?? near
  }

  /// Seconds between the first and the last fix that showed the device still (0 without).
  var stillSeconds: Double {
    guard let firstStill, let lastStill else { return 0 }
    return lastStill.timeIntervalSince(firstStill)
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
    if !sample.isMoving {
      firstStill = min(firstStill ?? sample.time, sample.time)
      lastStill = max(lastStill ?? sample.time, sample.time)
    }
    if isStay {
      recent.append(sample)
      while sample.time.timeIntervalSince(recent[recentStart].time) > Self.recentSeconds {
        recentStart += 1
      }
      if recentStart > 4096 {
        recent.removeFirst(recentStart)
        recentStart = 0
      }
    } else {
      early.append(sample)
    }
  }

  func stay(closed: Bool) -> Stay {
    Stay(
      arrivalDate: first, departureDate: closed ? departure : nil, coordinate: centre,
      horizontalAccuracy: accuracy, fixCount: count)
  }
}
