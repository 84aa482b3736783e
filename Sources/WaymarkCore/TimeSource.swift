import FoundationEssentials

/// Where a long-running part of Waymark reads the time: the broker, the daemon's loop, the MQTT
/// and Traccar senders, the hooks and the peer identifier are handed one, so that a test can
/// move their time instead of waiting for it.
///
/// Two readings, never mixed: ``now`` (monotonic, for deadlines, timeouts, back-off and rate
/// budgets: a system clock set back by NTP must not stretch a question's deadline) and
/// ``date()`` (the wall clock, for what is recorded: a grant's time, an outbox message's age, a
/// fix checked against the system time). The domain logic (filters, place monitoring, visits)
/// reads neither: it goes by fix timestamps.
///
/// ```swift
/// let shifted = TimeSource.system.shifted(by: .seconds(3600))
/// // shifted.now is an hour after the system's monotonic time, shifted.date() an hour after now.
/// ```
package struct TimeSource: Sendable {
  private let monotonic: @Sendable () -> ContinuousClock.Instant
  private let wall: @Sendable () -> Date

  /// A time source reading `monotonic` for instants and `wall` for dates.
  package init(
    monotonic: @escaping @Sendable () -> ContinuousClock.Instant,
    wall: @escaping @Sendable () -> Date
  ) {
    self.monotonic = monotonic
    self.wall = wall
  }

  /// The system's clocks: `CLOCK_MONOTONIC` (as `ContinuousClock`) and the wall clock.
  package static let system = TimeSource(monotonic: { ContinuousClock.now }, wall: { Date() })

  /// The monotonic time now: what deadlines and rate budgets are measured on.
  package var now: ContinuousClock.Instant { monotonic() }

  /// The wall-clock time now: what records are dated with.
  package func date() -> Date { wall() }

  /// This source with both readings moved by `offset` (which may be negative) — the current
  /// offset read each time from `offset`, so a test can move time while the reader runs.
  package func shifted(by offset: @escaping @Sendable () -> Duration) -> TimeSource {
    let base = self
    return TimeSource(
      monotonic: { base.now + offset() },
      wall: { base.date().addingTimeInterval(offset().seconds) })
  }

  /// This source with both readings moved by a fixed `offset`.
  package func shifted(by offset: Duration) -> TimeSource {
    shifted(by: { offset })
  }
}
