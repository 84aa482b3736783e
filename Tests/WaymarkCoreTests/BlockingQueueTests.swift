import Foundation
import Testing
import WaymarkCore

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
}
