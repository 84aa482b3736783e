/// How long to wait before each reconnection attempt: capped exponential backoff with jitter.
///
/// The delay before attempt `n` (1-based) is `initialDelay * multiplier^(n-1)`, capped at
/// `maximumDelay`, then scaled by a random factor in `1 - jitter ... 1` so that many clients
/// restarted together do not reconnect in step. Jitter comes from a seeded generator, so a
/// test sees the same delays every run.
public struct ReconnectPolicy: Sendable, Hashable {
  /// Delay before the first reconnection attempt.
  public var initialDelay: Duration
  /// The cap on any delay.
  public var maximumDelay: Duration
  /// Growth factor between attempts (≥ 1).
  public var multiplier: Double
  /// Fraction of the delay that is random, 0...1 (0 turns jitter off).
  public var jitter: Double

  /// Creates a policy. Defaults: 250 ms, doubling, capped at 30 s, 50 % jitter.
  public init(
    initialDelay: Duration = .milliseconds(250),
    maximumDelay: Duration = .seconds(30),
    multiplier: Double = 2,
    jitter: Double = 0.5
  ) {
    self.initialDelay = initialDelay
    self.maximumDelay = maximumDelay
    self.multiplier = max(1, multiplier)
    self.jitter = min(1, max(0, jitter))
  }

  /// The delay before the capped, un-jittered attempt `attempt` (1-based).
  public func baseDelay(attempt: Int) -> Duration {
    let cap = maximumDelay.seconds
    var delay = initialDelay.seconds
    var step = 1
    while step < attempt && delay < cap {
      delay *= multiplier
      step += 1
    }
    return .seconds(min(delay, cap))
  }

  /// The delay before attempt `attempt`, with jitter drawn from `generator`.
  public func delay(attempt: Int, using generator: inout some RandomNumberGenerator) -> Duration {
    let base = baseDelay(attempt: attempt).seconds
    let factor = jitter > 0 ? Double.random(in: (1 - jitter)...1, using: &generator) : 1
    return .seconds(base * factor)
  }
}
