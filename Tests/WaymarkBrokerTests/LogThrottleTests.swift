import Testing

@testable import WaymarkBroker

@Suite("Log throttle and line rate")
struct LogThrottleTests {
  @Test("a uid gets its lines a minute, then one summary; others are not held back")
  func throttles() {
    var throttle = LogThrottle(limit: 3, window: .seconds(60))
    let start = ContinuousClock.now
    let admitted = (0..<10).filter { _ in throttle.admit(uid: 1000, at: start) }.count
    #expect(admitted == 3)
    let other = throttle.admit(uid: 1001, at: start)
    #expect(other)
    #expect(throttle.nextSummary == start + .seconds(60))
    let early = throttle.summaries(at: start + .seconds(59))
    #expect(early.isEmpty)
    let due = throttle.summaries(at: start + .seconds(60))
    #expect(due.map(\.uid) == [1000] && due.map(\.count) == [7])
    #expect(throttle.nextSummary == nil)
    let again = throttle.admit(uid: 1000, at: start + .seconds(61))
    #expect(again)
  }

  @Test("a line budget: a burst, then the rate")
  func lineRate() {
    let start = ContinuousClock.now
    var rate = LineRate(perSecond: 200, burst: 400)
    let burst = rate.take(400, at: start)
    let over = rate.take(1, at: start)
    #expect(burst && !over)
    var calm = LineRate(perSecond: 200, burst: 400)
    let first = calm.take(300, at: start)
    let later = calm.take(200, at: start + .seconds(1))
    #expect(first && later)
  }
}
