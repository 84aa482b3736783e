import Foundation
import Waymark
import WaymarkCore

extension SeededGenerator {
  /// A standard normal deviate (Box–Muller).
  mutating func gaussian() -> Double {
    let u1 = Double.random(in: Double.ulpOfOne..<1, using: &self)
    let u2 = Double.random(in: 0..<1, using: &self)
    return (-2 * log(u1)).squareRoot() * cos(2 * .pi * u2)
  }
}

/// Builds a synthetic drive or walk: one fix per `interval` seconds of fix time, with seeded
/// Gaussian noise, and keeps the true positions for checking.
struct Walk {
  var time: Date
  var position: Coordinate
  var rng: SeededGenerator
  /// Standard deviation of the position noise on each axis, metres.
  var noiseMeters = 0.0
  /// Reported horizontal accuracy, metres.
  var accuracyMeters: Double? = 5
  /// Seconds between fixes.
  var interval = 1.0
  private(set) var locations: [Location] = []
  private(set) var truth: [(time: Date, coordinate: Coordinate)] = []

  init(start: String, at origin: Coordinate, seed: UInt64 = 1) {
    time = Timestamp.parse(start)!
    position = origin
    rng = SeededGenerator(seed: seed)
  }

  /// Emits one fix at the current position and time.
  mutating func emit(accuracy: Double? = nil, displacedTo: Coordinate? = nil) {
    var coordinate = displacedTo ?? position
    if noiseMeters > 0 {
      let east = rng.gaussian() * noiseMeters
      let north = rng.gaussian() * noiseMeters
      let bearing = atan2(east, north) * 180 / .pi
      coordinate = coordinate.offset(
        by: (east * east + north * north).squareRoot(), bearingDegrees: bearing)
    }
    locations.append(
      Location(
        coordinate: coordinate, horizontalAccuracy: accuracy ?? accuracyMeters, timestamp: time))
    truth.append((time, position))
  }

  /// Travels in a straight line to `target` at `speed` metres per second, one fix per tick.
  mutating func move(to target: Coordinate, speed: Double) {
    let start = position
    let length = start.distance(to: target)
    let bearing = start.bearing(to: target)
    let steps = Int((length / (speed * interval)).rounded(.up))
    for step in 1...max(1, steps) {
      time += interval
      position = start.offset(
        by: min(length, Double(step) * speed * interval), bearingDegrees: bearing)
      emit()
    }
    position = target
  }

  /// Stays put for `seconds`, one fix per tick.
  mutating func stay(seconds: Double) {
    for _ in 0..<Int(seconds / interval) {
      time += interval
      emit()
    }
  }

  /// No fix for `seconds` (the position does not change unless `moveTo` is given).
  mutating func gap(seconds: Double, moveTo target: Coordinate? = nil) {
    time += seconds
    if let target { position = target }
  }
}

/// Shared fixtures for the detection tests.
enum Fixture {
  static let origin = Coordinate(latitude: 48.137, longitude: 11.575)

  static func place(_ id: String, at coordinate: Coordinate, radius: Double = 100) -> Place {
    Place(id: id, name: "Place \(id)", coordinate: coordinate, radiusMeters: radius)
  }

  static func run(
    _ locations: [Location], places: [Place],
    configuration: PlaceMonitor.Configuration = .init()
  ) -> [PlaceEvent] {
    let monitor = PlaceMonitor(
      places: places, configuration: configuration)
    return locations.flatMap { monitor.process($0) }
  }

  static func ndjson(_ events: [PlaceEvent]) -> [UInt8] {
    var bytes: [UInt8] = []
    for event in events { event.jsonLine().write(to: &bytes) }
    return bytes
  }
}

extension PlaceEvent {
  var reason: EventReason {
    switch self {
    case .arrival(let arrival): arrival.reason
    case .departure(let departure): departure.reason
    }
  }
}
