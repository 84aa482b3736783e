import FoundationEssentials
import Glibc
import WaymarkCore

/// What a real receiver reports while it stands still, laid over synthesized fixes: the
/// ``RouteSynthesizer`` reports a speed of exactly 0 at a stop, a receiver does not.
///
/// For every fix whose speed is 0 (a stop, a red light):
/// - the speed becomes jitter of 0 to ``jitterMetersPerSecond`` (Rayleigh-distributed, mostly
///   a tenth or two), with now and then a spike of ``spikeMetersPerSecond`` (about
///   ``spikesPerMinute`` a minute), and ``missingSpeedFraction`` of the fixes report no speed
///   at all;
/// - the position wanders: a random walk pulled back towards the true position (standard
///   deviation ``wanderMeters``, decorrelating over ``wanderSeconds``), on top of the
///   synthesizer's own white noise. Each stop's wander starts afresh.
///
/// Moving fixes are left as they are. The same seed and fixes always give the same result.
///
/// ```swift
/// let fixes = StandstillNoise(seed: 7).apply(to: route.fixes())
/// ```
public struct StandstillNoise: Sendable, Hashable {
  /// Seed of the noise generator.
  public var seed: UInt64
  /// Largest speed of the usual jitter at rest, metres per second.
  public var jitterMetersPerSecond = 0.5
  /// Scale of the jitter's Rayleigh distribution, metres per second (its mode).
  public var jitterScaleMetersPerSecond = 0.12
  /// Speeds of a spike, metres per second: above what the stay detector takes for moving.
  public var spikeMetersPerSecond: ClosedRange<Double> = 0.9...2.5
  /// Spikes per minute of standstill, on average.
  public var spikesPerMinute = 1.0
  /// Fraction of the fixes at rest that report no speed.
  public var missingSpeedFraction = 0.1
  /// Standard deviation of the position's wander, metres.
  public var wanderMeters = 3.0
  /// Seconds of fix time over which the wander forgets where it was.
  public var wanderSeconds = 60.0

  /// Creates the noise with the documented defaults.
  public init(seed: UInt64) { self.seed = seed }

  /// `fixes` with the noise of a receiver at rest on each fix whose speed is 0.
  public func apply(to fixes: [Fix]) -> [Fix] {
    var generator = SeededGenerator(seed: seed)
    var east = 0.0
    var north = 0.0
    var resting = false
    var previous: Date?
    return fixes.map { fix in
      // Seconds since the fix before (at most the wander's memory): the time each step covers.
      var seconds: Double?
      if let previous, let time = fix.time {
        seconds = min(max(time.timeIntervalSince(previous), 0), 60)
      }
      previous = fix.time ?? previous
      guard fix.speed == 0, fix.time != nil, let coordinate = fix.coordinate else {
        resting = false
        return fix
      }
      var fix = fix
      if !resting {
        east = 0
        north = 0
        resting = true
      }
      // The wander: an Ornstein-Uhlenbeck step over the time since the previous fix at rest.
      let keep = exp(-(seconds ?? 0) / wanderSeconds)
      let step = wanderMeters / 2.squareRoot() * (1 - keep * keep).squareRoot()
      let (dx, dy) = generator.nextGaussianPair()
      east = keep * east + step * dx
      north = keep * north + step * dy
      let distance = (east * east + north * north).squareRoot()
      fix.coordinate = coordinate.offset(
        by: distance, bearingDegrees: atan2(east, north) * 180 / .pi)
      // The speed: jitter, a spike now and then, or none.
      let (a, b) = generator.nextGaussianPair()
      let interval = seconds.flatMap { $0 > 0 ? $0 : nil } ?? 1
      if generator.nextUnit() < missingSpeedFraction {
        fix.speed = nil
      } else if generator.nextUnit() < spikesPerMinute * interval / 60 {
        let unit = generator.nextUnit()
        fix.speed =
          spikeMetersPerSecond.lowerBound
          + unit * (spikeMetersPerSecond.upperBound - spikeMetersPerSecond.lowerBound)
      } else {
        fix.speed = min(
          jitterMetersPerSecond, jitterScaleMetersPerSecond * (a * a + b * b).squareRoot())
      }
      return fix
    }
  }
}
