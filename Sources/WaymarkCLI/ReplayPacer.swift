import FoundationEssentials
import NMEA
import WaymarkCore

/// The waits of a paced replay (`--speed <factor>`), on the replay's output thread: before each
/// fix, the log time since the fix before it divided by the factor (``ReplaySpeed/delay(from:to:)``,
/// to the millisecond), slept on the injected clock. Fixes without a time never wait, and the
/// waits are relative (a slow output delays the rest of the log; nothing is skipped).
struct ReplayPacer {
  /// The speed factor; ``ReplaySpeed/max`` never waits.
  let speed: ReplaySpeed
  /// The clock the waits sleep on (a manual clock in tests).
  let clock: any Clock<Duration>
  private var previousTime: Date?

  /// A pacer at `speed` on `clock`.
  init(speed: ReplaySpeed, clock: any Clock<Duration>) {
    self.speed = speed
    self.clock = clock
  }

  /// How long to wait before `fix`, `nil` for no wait; notes its time for the next fix.
  mutating func delay(before fix: borrowing Fix) -> Duration? {
    guard let time = fix.time else { return nil }
    defer { previousTime = time }
    guard let previousTime else { return nil }
    return speed.delay(from: previousTime, to: time)
  }

  /// Blocks the calling thread (the replay's own, never one of the concurrency pool's) for
  /// `delay` of the clock: a task sleeps on the clock and the thread waits for it.
  func sleep(for delay: Duration) {
    let done = Channel<Bool>(capacity: 1, overflow: .wait)
    let clock = self.clock
    Task {
      try? await clock.sleep(for: delay)
      _ = await done.send(true)
    }
    _ = done.receive()
  }
}
