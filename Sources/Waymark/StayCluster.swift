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
    /// ``StayCluster/movingMetersPerSecond``); a fix without speed moves when its positions do
    /// (``isMovingByPosition``).
    var isMoving = false
    /// Whether the positions of the last minute show the device moving
    /// (``StayMotionWindow``), whatever the speed says; `false` while they cannot tell.
    var isMovingByPosition = false
    /// Whether the fix reports a speed.
    var hasSpeed = true
    /// Whether the fix is known to be still: its speed says so, or (without speed) the
    /// positions of the last minute can tell and show no motion.
    var isStillKnown = true
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
  /// The first still fix that reported a speed: the positions' stillness lags the stop by
  /// up to a minute, so it does not date an arrival.
  private var firstStillBySpeed: Date?
  /// Whether the newest fix added reported a speed.
  private(set) var hasSpeed = true
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

  /// Positions (east and north of the anchor, metres) of still fixes inside, one in every
  /// `stillStride`: the sample the spread is learned from, at most ``stillReservoir`` of them
  /// spread over the whole stay.
  private var stillPoints: [(x: Double, y: Double)] = []
  private var stillStride = 1
  private var stillSeen = 0
  static let stillReservoir = 128
  /// Still fixes needed before the spread means anything.
  static let learningFixes = 5
  /// The learned radius is this many times the median distance of the still fixes from the
  /// centre: for positions scattered like a two-dimensional Gaussian (σ per axis) the median
  /// distance is 1.18 σ, so the radius is about 2.9 σ and holds 98 % of them.
  static let learnedRadiusFactor = 2.5
  /// The radius learned from the spread of the still fixes, metres (0 until
  /// ``learningFixes``): what the fixes say of their own noise, whatever the receiver claims.
  private(set) var learnedRadius = 0.0
  /// The still fixes' median position (metres east and north of the anchor) and twice their
  /// median distance from it, metres; `nil` until ``learningFixes``.
  private var stillCore: (x: Double, y: Double, radius: Double)?

  /// When the logger slept while the device stood here and it reappeared within walking
  /// reach: the latest departure consistent with walking pace (``StayDetector``), and the
  /// time of the last fix before that gap (the observed part's end).
  var inferredDeparture: Date?
  var gapStart: Date?

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
  var coreRadius: Double { max(10, 2 * spread) }

  /// Whether `coordinate` is at the place itself, not on the way in or out: within
  /// ``coreRadius`` of the centre; for a cluster whose fixes report no speed (the way in is
  /// then among its fixes, and pulls the centre), within twice the still fixes' median
  /// distance of their own median position (at least 10 m), once that is learned.
  func isNear(_ coordinate: Coordinate) -> Bool {
    if firstStillBySpeed == nil, let stillCore {
      let (x, y) = local(coordinate)
      let dx = x - stillCore.x
      let dy = y - stillCore.y
      return (dx * dx + dy * dy).squareRoot() <= max(10, stillCore.radius)
    }
    return centre.distance(to: coordinate) <= coreRadius
  }

  /// Dates the arrival by the first fix near the centre (the way in, inside the radius but
  /// still moving, is not the stay); call when the cluster becomes a stay.
  mutating func refineArrival() {
    let cluster = self
    let near: (Coordinate) -> Bool
    if firstStillBySpeed == nil, stillCore == nil, early.count >= 8 {
      // Too few still fixes to know the place from them (a logger that slept soon after the
      // stop began): the newer half of the fixes is the place, the older may be the way in.
      let newer = early.suffix((early.count + 1) / 2).map { local($0.coordinate) }
      let cx = Self.median(newer.map(\.x))
      let cy = Self.median(newer.map(\.y))
      let distances = newer.map {
        (($0.x - cx) * ($0.x - cx) + ($0.y - cy) * ($0.y - cy)).squareRoot()
      }
      let radius = max(10, 2 * Self.median(distances))
      near = { coordinate in
        let (x, y) = cluster.local(coordinate)
        return ((x - cx) * (x - cx) + (y - cy) * (y - cy)).squareRoot() <= radius
      }
    } else {
      near = { cluster.isNear($0) }
    }
    // The first fix near the place whose next fix is near too: one fix of the way in that the
    // noise throws near the place does not date the arrival.
    if let index = early.indices.first(where: {
      near(early[$0].coordinate) && ($0 + 1 == early.count || near(early[$0 + 1].coordinate))
    }) {
      first = early[index].time
    }
    if let firstStillBySpeed { first = max(first, firstStillBySpeed) }
  }

  /// The departure: the last recent fix near the centre, else the last fix inside.
  var departure: Date {
    let near = recent[recentStart...].last(where: { isNear($0.coordinate) })?.time ?? lastInside
    return lastStill.map { max(first, min(near, $0)) } ?? near
  }

  /// Seconds between the first and the last fix that showed the device still (0 without).
  var stillSeconds: Double {
    guard let firstStill, let lastStill else { return 0 }
    return lastStill.timeIntervalSince(firstStill)
  }

  func contains(_ sample: Sample, _ configuration: StayDetector.Configuration) -> Bool {
    centre.distance(to: sample.coordinate) <= radius(for: sample, configuration)
  }

  /// The radius a fix is judged inside by, metres: the largest of the minimum radius, the
  /// fix's reported error times the accuracy factor, and the radius learned from the still
  /// fixes' spread (at most ``StayDetector/Configuration/maximumLearnedRadiusMeters``).
  func radius(for sample: Sample, _ configuration: StayDetector.Configuration) -> Double {
    max(
      configuration.minimumRadiusMeters, configuration.accuracyFactor * sample.accuracy,
      min(learnedRadius, configuration.maximumLearnedRadiusMeters))
  }

  mutating func add(_ sample: Sample) {
    let (x, y) = local(sample.coordinate)
    let w = 1 / (sample.accuracy * sample.accuracy)
    weight += w
    east += w * x
    north += w * y
    squares += w * (x * x + y * y)
    count += 1
    hasSpeed = sample.hasSpeed
    first = min(first, sample.time)
    lastInside = max(lastInside, sample.time)
    if !sample.isMoving {
      firstStill = min(firstStill ?? sample.time, sample.time)
      lastStill = max(lastStill ?? sample.time, sample.time)
      if sample.hasSpeed { firstStillBySpeed = min(firstStillBySpeed ?? sample.time, sample.time) }
      if !sample.isMovingByPosition { learn(x: x, y: y) }
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

  private static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    let middle = sorted.count / 2
    return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
  }

  /// `coordinate` in metres east and north of the anchor.
  private func local(_ coordinate: Coordinate) -> (x: Double, y: Double) {
    var dLongitude = coordinate.longitude - anchor.longitude
    if dLongitude > 180 { dLongitude -= 360 } else if dLongitude < -180 { dLongitude += 360 }
    return (
      dLongitude * metersPerDegreeLongitude,
      (coordinate.latitude - anchor.latitude) * Coordinate.metersPerDegree
    )
  }

  /// Adds a still fix's position to the sample of the spread, and learns the radius again
  /// while the sample is small and at every eighth fix after.
  private mutating func learn(x: Double, y: Double) {
    stillSeen += 1
    guard stillSeen % stillStride == 0 else { return }
    stillPoints.append((x, y))
    if stillPoints.count >= Self.stillReservoir {
      // Every other one: the sample stays spread over the whole stay.
      stillPoints = stride(from: 0, to: stillPoints.count, by: 2).map { stillPoints[$0] }
      stillStride *= 2
    }
    guard stillPoints.count >= Self.learningFixes,
      stillPoints.count < 32 || stillPoints.count % 8 == 0
    else { return }
    // The median absolute deviation in two dimensions: the median distance from the
    // component-wise median position (neither is moved by a few far fixes).
    let cx = Self.median(stillPoints.map(\.x))
    let cy = Self.median(stillPoints.map(\.y))
    let median = Self.median(
      stillPoints.map { (($0.x - cx) * ($0.x - cx) + ($0.y - cy) * ($0.y - cy)).squareRoot() })
    stillCore = (cx, cy, 2 * median)
    learnedRadius = Self.learnedRadiusFactor * median
  }

  /// The stay as it is; `closed`: with its departure, inferred across a gap when the device
  /// reappeared within walking reach later than its last fix here.
  func stay(closed: Bool) -> Stay {
    guard closed else {
      return Stay(
        arrivalDate: first, coordinate: centre, horizontalAccuracy: accuracy, fixCount: count)
    }
    var observed = departure
    if inferredDeparture != nil, let gapStart {
      observed = min(observed, gapStart)
    }
    if let inferredDeparture, inferredDeparture > observed {
      return Stay(
        arrivalDate: first, departureDate: inferredDeparture, observedDepartureDate: observed,
        coordinate: centre, horizontalAccuracy: accuracy, fixCount: count)
    }
    return Stay(
      arrivalDate: first, departureDate: observed, coordinate: centre,
      horizontalAccuracy: accuracy, fixCount: count)
  }
}
