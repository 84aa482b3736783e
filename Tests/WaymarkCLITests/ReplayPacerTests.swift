import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

@testable import WaymarkCLI

/// A paced replay's waits: the log time between fixes divided by the factor, fixes without a
/// time never waiting, and the output thread blocked on the injected clock until it moves.
@Suite struct ReplayPacerTests {
  static let start = Date(timeIntervalSince1970: 1_796_000_000)

  static func fix(at seconds: Double?) -> Fix {
    Fix(time: seconds.map { start.addingTimeInterval($0) }, mode: .threeDimensional)
  }

  @Test func theWaitsAreTheLogsStepsDividedByTheFactor() {
    var pacer = ReplayPacer(speed: .factor(2), clock: ManualClock())
    let delays = [0, 1, nil, 3, 3, 2.5, 4.25].map { pacer.delay(before: Self.fix(at: $0)) }
    // The first fix and one without a time never wait; the one after the untimed fix waits
    // from the last timed one; a step back or none waits nothing, and the next fix waits from
    // it (4.25 s after 2.5 s: 875 ms).
    #expect(
      delays == [
        nil, .milliseconds(500), nil, .milliseconds(1000), nil, nil, .milliseconds(875),
      ])
    var full = ReplayPacer(speed: .max, clock: ManualClock())
    #expect([0, 1, 2].map { full.delay(before: Self.fix(at: $0)) } == [nil, nil, nil])
  }

  @Test func theThreadWaitsUntilTheClockHasMoved() async throws {
    let clock = ManualClock()
    let pacer = ReplayPacer(speed: .factor(1), clock: clock)
    let woke = Locked(false)
    DetachedThread.start(name: "pacer-test") {
      pacer.sleep(for: .seconds(2))
      woke.withLock { $0 = true }
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(1))
    try await Task.sleep(for: .milliseconds(50))
    #expect(!woke.withLock { $0 })
    // The positive control: at the deadline the thread goes on (bounded wait).
    clock.advance(by: .seconds(1))
    let deadline = ContinuousClock.now + .seconds(10)
    while !woke.withLock({ $0 }) && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(woke.withLock { $0 })
  }
}
