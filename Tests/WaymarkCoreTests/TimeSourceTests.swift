import FoundationEssentials
import Testing
import WaymarkCore

@Suite struct TimeSourceTests {
  /// A shifted source moves both readings by the offset it reads each time; the system source
  /// (the control) stays with the system's clocks.
  @Test func aShiftedSourceMovesBothReadingsByItsCurrentOffset() {
    let offset = Locked(Duration.zero)
    let shifted = TimeSource.system.shifted(by: { offset.withLock { $0 } })
    let before = ContinuousClock.now
    let dateBefore = Date()
    #expect(shifted.now >= before)
    #expect(shifted.now < before + .seconds(60))
    #expect(abs(shifted.date().timeIntervalSince(dateBefore)) < 60)
    offset.withLock { $0 = .seconds(3600) }
    #expect(shifted.now >= before + .seconds(3600))
    #expect(shifted.now < before + .seconds(3660))
    #expect(shifted.date().timeIntervalSince(dateBefore) >= 3600)
    #expect(shifted.date().timeIntervalSince(dateBefore) < 3660)
    #expect(TimeSource.system.now < before + .seconds(60))
    #expect(abs(TimeSource.system.date().timeIntervalSince(dateBefore)) < 60)
    offset.withLock { $0 = .seconds(-7200) }
    #expect(shifted.now <= ContinuousClock.now - .seconds(7140))
    #expect(shifted.date().timeIntervalSince(Date()) <= -7140)
  }
}
