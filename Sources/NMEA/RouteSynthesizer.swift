import Foundation
import WaymarkCore

/// Synthesizes a deterministic sequence of fixes along a route: drives, stops, fix-loss gaps and
/// outliers, with seeded Gaussian position noise.
///
/// ```swift
/// var route = RouteSynthesizer(start: start, origin: home, seed: 7)
/// route.noiseMeters = 3
/// route.stop(seconds: 60)
/// route.drive(to: office, speedMetersPerSecond: 12)
/// let log = NMEAWriter.log(route.fixes())
/// ```
///
/// The same settings and seed always give the same fixes, on every machine.
public struct RouteSynthesizer: Sendable {
  /// One piece of the route.
  public enum Step: Sendable, Hashable {
    /// Travel in a straight (great-circle) line to a coordinate at a speed, metres per second.
    case drive(to: Coordinate, speedMetersPerSecond: Double)
    /// Stay put for a number of seconds.
    case stop(seconds: Double)
    /// The receiver loses the fix for a number of seconds: time passes, no fixes are produced.
    case gap(seconds: Double)
    /// One fix displaced by `offsetMeters` towards `bearingDegrees`, reporting
    /// `accuracyMeters` of horizontal error; the route then goes on from where it was.
    case outlier(offsetMeters: Double, bearingDegrees: Double, accuracyMeters: Double)
  }

  /// Time of the first fix.
  public var start: Date
  /// Where the route starts.
  public var origin: Coordinate
  /// Seed of the noise generator.
  public var seed: UInt64
  /// Fixes per second.
  public var rateHz: Double = 1
  /// Standard deviation of the horizontal position noise, metres (0: exact positions).
  public var noiseMeters: Double = 0
  /// Horizontal error reported with each fix, metres.
  public var horizontalAccuracyMeters: Double = 5
  /// Altitude above mean sea level, metres.
  public var altitudeMeters: Double = 50
  /// Geoid separation reported with each fix, metres.
  public var geoidSeparationMeters: Double = 47
  /// The steps, in order.
  public private(set) var steps: [Step] = []

  /// Creates an empty route starting at `origin` at `start`.
  public init(start: Date, origin: Coordinate, seed: UInt64 = 1) {
    self.start = start
    self.origin = origin
    self.seed = seed
  }

  /// Appends a drive to `destination` at `speedMetersPerSecond`.
  public mutating func drive(to destination: Coordinate, speedMetersPerSecond: Double) {
    steps.append(.drive(to: destination, speedMetersPerSecond: speedMetersPerSecond))
  }

  /// Appends a stop of `seconds`.
  public mutating func stop(seconds: Double) { steps.append(.stop(seconds: seconds)) }

  /// Appends a fix-loss gap of `seconds`.
  public mutating func gap(seconds: Double) { steps.append(.gap(seconds: seconds)) }

  /// Appends one outlier fix.
  public mutating func outlier(offsetMeters: Double, bearingDegrees: Double, accuracyMeters: Double)
  {
    steps.append(
      .outlier(
        offsetMeters: offsetMeters, bearingDegrees: bearingDegrees, accuracyMeters: accuracyMeters))
  }

  /// The fixes of the whole route, one every `1 / rateHz` seconds of route time.
  public func fixes() -> [Fix] {
    var generator = SeededGenerator(seed: seed)
    let interval = 1 / rateHz
    var fixes: [Fix] = []
    var elapsed = 0.0  // seconds since start of the next fix
    var position = origin
    var stepStart = 0.0

    func emit(at coordinate: Coordinate, speed: Double, track: Double?, accuracy: Double) {
      var noisy = coordinate
      if noiseMeters > 0 {
        let (north, east) = generator.nextGaussianPair()
        let distance = (north * north + east * east).squareRoot() * noiseMeters
        let bearing = atan2(east, north) * 180 / .pi
        noisy = coordinate.offset(by: distance, bearingDegrees: bearing)
      }
      let milliseconds = (elapsed * 1000).rounded()
      var fix = Fix(
        time: start.addingTimeInterval(milliseconds / 1000), mode: .threeDimensional, status: .gps,
        coordinate: noisy, altitudeMSL: altitudeMeters, geoidSeparation: geoidSeparationMeters,
        speed: speed, track: track, horizontalError: accuracy, verticalError: accuracy * 1.5,
        hdop: accuracy / ErrorModel.userEquivalentRangeError(for: .gps),
        vdop: accuracy * 1.5 / ErrorModel.userEquivalentRangeError(for: .gps),
        pdop: accuracy * 1.8 / ErrorModel.userEquivalentRangeError(for: .gps),
        satellitesUsed: 9, satellitesVisible: 12, provenance: .simulated("RouteSynthesizer"))
      fix.timeOfDayMilliseconds = Timestamp.split(fix.time!).millisecondsOfDay
      fixes.append(fix)
    }

    // The first fix is at the origin, at time 0.
    for step in steps {
      switch step {
      case .drive(let destination, let speed):
        let distance = position.distance(to: destination)
        let bearing = position.bearing(to: destination)
        let duration = speed > 0 ? distance / speed : 0
        let end = stepStart + duration
        while elapsed < end {
          let travelled = (elapsed - stepStart) * speed
          emit(
            at: position.offset(by: travelled, bearingDegrees: bearing), speed: speed,
            track: bearing, accuracy: horizontalAccuracyMeters)
          elapsed += interval
        }
        position = destination
        stepStart = end
      case .stop(let seconds):
        let end = stepStart + seconds
        while elapsed < end {
          emit(at: position, speed: 0, track: nil, accuracy: horizontalAccuracyMeters)
          elapsed += interval
        }
        stepStart = end
      case .gap(let seconds):
        stepStart += seconds
        while elapsed < stepStart { elapsed += interval }
      case .outlier(let offset, let bearing, let accuracy):
        emit(
          at: position.offset(by: offset, bearingDegrees: bearing), speed: 0, track: nil,
          accuracy: accuracy)
        elapsed += interval
        stepStart = max(stepStart, elapsed)
      }
    }
    emit(at: position, speed: 0, track: nil, accuracy: horizontalAccuracyMeters)
    return fixes
  }
}
