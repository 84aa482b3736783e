/// A connection's budget of lines: `perSecond` lines a second on average, `burst` at once (a
/// token bucket on the monotonic clock). Every line counts, blank or not, answered or not: a
/// client of the protocol sends a handful a minute, a flood is cut off within one read.
struct LineRate: Sendable {
  /// Lines per second, on average.
  let perSecond: Double
  /// Lines allowed at once.
  let burst: Double
  private var tokens: Double
  private var last: ContinuousClock.Instant?

  /// A full bucket.
  init(perSecond: Double, burst: Double) {
    self.perSecond = perSecond
    self.burst = burst
    tokens = burst
  }

  /// Takes `count` lines at `now`; `false` when that goes over the budget.
  mutating func take(_ count: Int, at now: ContinuousClock.Instant) -> Bool {
    if let last {
      let elapsed = last.duration(to: now)
      let seconds =
        Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
      tokens = min(burst, tokens + max(0, seconds) * perSecond)
    }
    last = now
    tokens -= Double(count)
    return tokens >= 0
  }
}
