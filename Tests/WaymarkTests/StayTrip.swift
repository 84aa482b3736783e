import Foundation
import NMEA
import Waymark
import WaymarkCore

/// A route for the stay detector's tests, with the truth kept as it is built: when each stop
/// began and ended and where it was.
struct StayTrip {
  struct TrueStay {
    var arrival: Date
    var departure: Date
    var centre: Coordinate
    var seconds: Double { departure.timeIntervalSince(arrival) }
  }

  var route: RouteSynthesizer
  /// What a receiver at rest reports, laid over the stops (`nil`: a speed of exactly 0).
  var standstill: StandstillNoise?
  /// A phone's logger between the receiver and the log (`nil`: every fix is logged): it
  /// sleeps at rest, wakes on movement, reports no speed and HDOP 1.0.
  var logger: DutyCycledLogger?
  var position: Coordinate
  var heading: Double
  /// Every stop, red lights included; stops separated only by a fix loss, a burst or a jump
  /// are one.
  private(set) var truth: [TrueStay] = []
  private var elapsed = 0.0
  private var stopped = false

  init(seed: UInt64) {
    position = StayDetectorTests.origin
    route = RouteSynthesizer(start: StayDetectorTests.start, origin: position, seed: seed)
    route.noiseMeters = 3
    var rng = SeededGenerator(seed: seed &+ 1000)
    heading = Double.random(in: 0..<360, using: &rng)
  }

  /// A drive of `meters` at `speed`, a stop of `seconds`, and the same drive on.
  static func stopOnTheWay(
    seed: UInt64, seconds: Double, meters: Double = 800, speed: Double = 12
  ) -> StayTrip {
    var trip = StayTrip(seed: seed)
    trip.drive(meters, speed: speed)
    trip.stay(seconds: seconds)
    trip.drive(meters, speed: speed)
    return trip
  }

  /// The stops that are stays (two minutes or more).
  var mergedTruth: [TrueStay] { truth.filter { $0.seconds >= 120 } }

  mutating func drive(_ meters: Double, speed: Double) {
    position = position.offset(by: meters, bearingDegrees: heading)
    route.drive(to: position, speedMetersPerSecond: speed)
    elapsed += meters / speed
    stopped = false
  }

  mutating func tunnel(_ meters: Double, seconds: Double) {
    position = position.offset(by: meters, bearingDegrees: heading)
    route.tunnel(to: position, seconds: seconds)
    elapsed += seconds
    stopped = false
  }

  /// Stops for `seconds`, then applies `then` (a burst, a jump, a gap) at the same place.
  mutating func stay(seconds: Double, then: (inout RouteSynthesizer) -> Void = { _ in }) {
    let arrival = route.start.addingTimeInterval(elapsed)
    route.stop(seconds: seconds)
    elapsed += seconds
    let departure = route.start.addingTimeInterval(elapsed)
    if stopped {
      truth[truth.count - 1].departure = departure
    } else {
      truth.append(TrueStay(arrival: arrival, departure: departure, centre: position))
    }
    stopped = true
    let before = route.steps.count
    then(&route)
    for step in route.steps[before...] {
      switch step {
      case .gap(let seconds): elapsed += seconds
      case .outlier: elapsed += 1 / route.rateHz
      case .stop(let seconds): elapsed += seconds
      default: break
      }
    }
  }

  /// The route as a receiver reports it, through NMEA.
  func locations() -> [Location] {
    var fixes = route.fixes()
    if let logger { fixes = logger.apply(to: fixes) }
    let log = NMEAWriter.log(standstill.map { $0.apply(to: fixes) } ?? fixes)
    return NMEALog.decode(Array(log.utf8), path: "stays.nmea").fixes.compactMap(Location.init)
  }

  func events(
    _ configuration: StayDetector.Configuration = .init(), finishing: Bool = true
  ) -> [StayDetector.Event] {
    var detector = StayDetector(configuration: configuration)
    var events: [StayDetector.Event] = []
    for location in locations() { events += detector.process(location) }
    if finishing { events += detector.finish() }
    return events
  }

  static func closedStays(_ events: [StayDetector.Event]) -> [Stay] {
    events.compactMap {
      guard case .departure(let stay) = $0 else { return nil }
      return stay
    }
  }

  static func median(_ values: [Double]) -> Double {
    let sorted = values.sorted()
    guard !sorted.isEmpty else { return 0 }
    return sorted.count % 2 == 1
      ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
  }

  /// A day drawn from `seed`: five stays of 2.5–20 minutes (some with a burst, a jump or a fix
  /// loss inside), drives between them with red lights of 20–100 s, bursts beside the road and
  /// tunnels, at 1, 2, 5 or 10 Hz with 2–6 m of noise.
  static func randomDay(seed: UInt64) -> StayTrip {
    var rng = SeededGenerator(seed: seed &+ 500)
    var trip = StayTrip(seed: seed)
    trip.route.rateHz = [1, 2, 5, 10].randomElement(using: &rng)!
    trip.route.noiseMeters = Double.random(in: 2...6, using: &rng)
    trip.route.horizontalAccuracyMeters =
      trip.route.noiseMeters
      * Double.random(
        in: 1.2...2, using: &rng)
    if Bool.random(using: &rng) {
      trip.route.multipath(
        seconds: Double.random(in: 5...20, using: &rng).rounded(),
        offsetMeters: Double.random(in: 200...800, using: &rng),
        bearingDegrees: Double.random(in: 0..<360, using: &rng),
        accuracyMeters: Double.random(in: 10...60, using: &rng))
    }
    for _ in 0..<5 {
      for _ in 0..<Int.random(in: 2...4, using: &rng) {
        let speed = Double.random(in: 8...20, using: &rng)
        if Double.random(in: 0..<1, using: &rng) < 0.3 {
          trip.route.multipath(
            seconds: Double.random(in: 5...25, using: &rng).rounded(),
            offsetMeters: Double.random(in: 100...300, using: &rng),
            bearingDegrees: trip.heading + 90,
            accuracyMeters: Double.random(in: 8...40, using: &rng))
        }
        trip.drive(Double.random(in: 300...1500, using: &rng), speed: speed)
        if Double.random(in: 0..<1, using: &rng) < 0.2 {
          let seconds = Double.random(in: 30...120, using: &rng).rounded()
          trip.tunnel(seconds * speed, seconds: seconds)
        }
        if Bool.random(using: &rng) {
          trip.stay(seconds: Double.random(in: 20...100, using: &rng).rounded())
        }
        trip.heading += Double.random(in: -100...100, using: &rng)
      }
      let total = Double.random(in: 150...1200, using: &rng).rounded()
      switch Int.random(in: 0..<4, using: &rng) {
      case 0:
        let part = (total * Double.random(in: 0.3...0.7, using: &rng)).rounded()
        trip.stay(seconds: part) { route in
          route.multipath(
            seconds: Double.random(in: 5...60, using: &rng).rounded(),
            offsetMeters: Double.random(in: 80...300, using: &rng),
            bearingDegrees: Double.random(in: 0..<360, using: &rng),
            accuracyMeters: Double.random(in: 5...40, using: &rng))
        }
        trip.stay(seconds: total - part)
      case 1:
        let part = (total * Double.random(in: 0.3...0.7, using: &rng)).rounded()
        trip.stay(seconds: part) { route in
          route.outlier(
            offsetMeters: Double.random(in: 200...5000, using: &rng),
            bearingDegrees: Double.random(in: 0..<360, using: &rng), accuracyMeters: 8)
        }
        trip.stay(seconds: total - part)
      case 2:
        let part = (total * Double.random(in: 0.3...0.7, using: &rng)).rounded()
        trip.stay(seconds: part) { $0.gap(seconds: Double.random(in: 60...900, using: &rng)) }
        trip.stay(seconds: total - part)
      default:
        trip.stay(seconds: total)
      }
    }
    trip.drive(1000, speed: 12)
    return trip
  }
}
