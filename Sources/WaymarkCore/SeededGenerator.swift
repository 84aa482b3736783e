import FoundationEssentials
import Glibc

/// SplitMix64: a small, fast, seedable generator with the same sequence on every platform.
///
/// Everything random in Waymark (synthetic noise, reconnect jitter, benchmark data) draws from
/// it, so that a seed always gives the same run.
public struct SeededGenerator: RandomNumberGenerator, Sendable {
  private var state: UInt64

  /// Creates a generator from a seed.
  public init(seed: UInt64) { state = seed }

  /// The next 64 random bits.
  public mutating func next() -> UInt64 {
    state &+= 0x9E37_79B9_7F4A_7C15
    var z = state
    z = (z ^ (z >> 30)) &* 0xBF58_476D_1CE4_E5B9
    z = (z ^ (z >> 27)) &* 0x94D0_49BB_1331_11EB
    return z ^ (z >> 31)
  }

  /// A uniform double in [0, 1).
  public mutating func nextUnit() -> Double { Double(next() >> 11) / Double(1 << 53) }

  /// Two independent standard normal values (Box–Muller).
  public mutating func nextGaussianPair() -> (Double, Double) {
    let u1 = max(nextUnit(), .leastNonzeroMagnitude)
    let u2 = nextUnit()
    let radius = (-2 * log(u1)).squareRoot()
    return (radius * cos(2 * .pi * u2), radius * sin(2 * .pi * u2))
  }
}
