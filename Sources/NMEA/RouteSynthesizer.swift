import FoundationEssentials
import Glibc
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
    /// A multipath burst over the next `seconds` of route time, whatever the following steps
    /// do: every fix in it is displaced by `offsetMeters` towards `bearingDegrees` and reports
    /// `accuracyMeters` (HDOP follows), while its speed and course stay the true ones (Doppler
    /// is not fooled by a reflected code phase). Takes no time itself.
    case multipath(
      seconds: Double, offsetMeters: Double, bearingDegrees: Double, accuracyMeters: Double)
    /// Travel in a straight line to a coordinate in `seconds` with no fix at all (a tunnel, an
    /// underground car park): time passes and the position moves, no fixes are produced.
    case tunnel(to: Coordinate, seconds: Double)
  }

  /// One synthesized fix and where the receiver really was at its time.
  public struct Sample: Sendable, Hashable {
    /// The fix as a receiver reports it (noise, multipath and all).
    public var fix: Fix
    /// The true position at the fix time.
    public var truePosition: Coordinate
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

  /// Appends a multipath burst over the next `seconds` of route time.
  public mutating func multipath(
    seconds: Double, offsetMeters: Double, bearingDegrees: Double, accuracyMeters: Double
  ) {
    steps.append(
      .multipath(
        seconds: seconds, offsetMeters: offsetMeters, bearingDegrees: bearingDegrees,
        accuracyMeters: accuracyMeters))
  }

  /// Appends travel to `destination` over `seconds` without any fix.
  public mutating func tunnel(to destination: Coordinate, seconds: Double) {
    steps.append(.tunnel(to: destination, seconds: seconds))
  }

  /// The fixes of the whole route, one every `1 / rateHz` seconds of route time.
  public func fixes() -> [Fix] { samples().map(\.fix) }

  /// The fixes of the whole route with the true position of each.
  public func samples() -> [Sample] {
    var generator = SeededGenerator(seed: seed)
    let interval = 1 / rateHz
    var fixes: [Sample] = []
    var elapsed = 0.0  // seconds since start of the next fix
    var position = origin
    var stepStart = 0.0
    var bursts: [(start: Double, end: Double, offset: Double, bearing: Double, accuracy: Double)] =
      []

    func emit(at truth: Coordinate, speed: Double, track: Double?, accuracy: Double) {
      var coordinate = truth
      var accuracy = accuracy
      if let burst = bursts.last(where: { $0.start <= elapsed && elapsed < $0.end }) {
        coordinate = coordinate.offset(by: burst.offset, bearingDegrees: burst.bearing)
        accuracy = burst.accuracy
      }
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
      fixes.append(Sample(fix: fix, truePosition: truth))
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
        let truth = position
        emit(
          at: position.offset(by: offset, bearingDegrees: bearing), speed: 0, track: nil,
          accuracy: accuracy)
        fixes[fixes.count - 1].truePosition = truth
        elapsed += interval
        stepStart = max(stepStart, elapsed)
      case .multipath(let seconds, let offset, let bearing, let accuracy):
        bursts.append((stepStart, stepStart + seconds, offset, bearing, accuracy))
      case .tunnel(let destination, let seconds):
        stepStart += seconds
        while elapsed < stepStart { elapsed += interval }
        position = destination
      }
    }
    emit(at: position, speed: 0, track: nil, accuracy: horizontalAccuracyMeters)
    return fixes
  }
}
