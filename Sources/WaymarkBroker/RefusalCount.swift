/// Connections refused for one reason, logged at most once a second: a connect storm at a
/// limit would otherwise cost a warning each.
struct RefusalCount {
  private var sinceLog = 0
  private var lastLog: ContinuousClock.Instant?

  /// Counts one refusal at `now`; returns how many to report when a warning is due (then the
  /// count starts again), else `nil`.
  mutating func refused(at now: ContinuousClock.Instant) -> Int? {
    sinceLog += 1
    guard lastLog.map({ $0.duration(to: now) >= .seconds(1) }) ?? true else { return nil }
    defer {
      sinceLog = 0
      lastLog = now
    }
    return sinceLog
  }
}
