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
    #expect(Locked<Int>.waitClock == CLOCK_MONOTONIC)
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    let deadline = Locked<Int>.deadline(afterMilliseconds: 2500)
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

@Suite struct BlockingQueuePolicyTests {
  /// Only evictable elements go when the queue is full (the broker keeps its events and drops
  /// fixes); with none evictable the element is queued over capacity.
  @Test func aFullQueueDropsTheOldestEvictableElement() {
    let queue = BlockingQueue<Int>(capacity: 3, isEvictable: { $0 % 2 == 0 })
    for value in [1, 2, 3] { queue.push(value) }
    guard case .queuedDropping(let dropped) = queue.push(5) else {
      Issue.record("nothing dropped")
      return
    }
    #expect(dropped == 2)
    guard case .queued = queue.push(7) else {
      Issue.record("an odd element was dropped")
      return
    }
    #expect(queue.popAll().elements == [1, 3, 5, 7])
    #expect(queue.dropped == 1)
  }

  @Test func aClosedQueueRefusesPushesAndEndsNextWhenEmpty() {
    let queue = BlockingQueue<Int>(capacity: 4)
    queue.push(1)
    queue.close()
    guard case .refused = queue.push(2) else {
      Issue.record("a closed queue took an element")
      return
    }
    #expect(queue.next() == 1)
    #expect(queue.next() == nil)
    #expect(queue.popAll().isClosed)
  }

  @Test func closeWakesAWaitingConsumer() {
    let queue = BlockingQueue<Int>(capacity: 4)
    let ended = BlockingQueue<Bool>(capacity: 1)
    DetachedThread.start(name: "queue-close") { ended.push(queue.next() == nil) }
    queue.close()
    #expect(ended.pop(timeoutMilliseconds: 30_000) == true)
  }
}
