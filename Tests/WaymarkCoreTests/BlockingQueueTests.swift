import Foundation
import Testing
@testable import WaymarkCore

@Suite struct BlockingQueueTests {
  @Test func firstInFirstOutAndTheOldestGoesWhenFull() {
    let queue = BlockingQueue<Int>(capacity: 3)
    for value in 1...5 { queue.push(value) }
    #expect(queue.dropped == 2)
    let first: [Int] = [queue.pop(), queue.pop(), queue.pop()]
    #expect(first == [3, 4, 5])
    queue.push(6)
    #expect(queue.pop() == 6)
  }

  @Test func popWaitsForAPushFromAnotherThread() async {
    let queue = BlockingQueue<String>(capacity: 2048)
    let popped = Locked<[String]>([])
    let done = BlockingQueue<Bool>(capacity: 1)
    DetachedThread.start(name: "queue-test") {
      for _ in 0..<1000 {
        let value = queue.pop()
        popped.withLock { $0.append(value) }
      }
      done.push(true)
    }
    for index in 0..<1000 {
      queue.push(String(index))
      if index % 7 == 0 { await Task.yield() }
    }
    _ = done.pop()
    let values: [String] = popped.withLock { $0 }
    let expected: [String] = (0..<1000).map { String($0) }
    #expect(values == expected)
    #expect(queue.dropped == 0)
  }

  /// Regression (fault campaign, clock stage): the timed wait's deadline was on CLOCK_REALTIME,
  /// so setting the system clock back an hour made a 1 s wait last an hour and a second. It is
  /// on CLOCK_MONOTONIC now, about `milliseconds` after the monotonic now.
  @Test func timedWaitsAreOnTheMonotonicClock() {
    #expect(BlockingQueue<Int>.waitClock == CLOCK_MONOTONIC)
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let deadline = BlockingQueue<Int>.deadline(afterMilliseconds: 2500)
    let ahead =
      Double(deadline.tv_sec - now.tv_sec) + Double(deadline.tv_nsec - now.tv_nsec) / 1e9
    #expect(ahead >= 2.5 && ahead < 3.5, "deadline \(ahead) s ahead of the monotonic clock")
    #expect(deadline.tv_nsec >= 0 && deadline.tv_nsec < 1_000_000_000)
  }

  /// The condition variable waits on the same clock as the deadline: a monotonic deadline on a
  /// realtime condition would lie decades in the past and the wait would end at once, empty.
  @Test func aTimedPopWaitsForALatePush() {
    let queue = BlockingQueue<Int>(capacity: 4)
    DetachedThread.start(name: "late-push") {
      usleep(50_000)
      queue.push(7)
    }
    #expect(queue.pop(timeoutMilliseconds: 30_000) == 7)
    #expect(queue.pop(timeoutMilliseconds: 1) == nil)
  }
}
