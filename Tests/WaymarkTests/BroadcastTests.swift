import Dispatch
import Glibc
import Testing
import WaymarkCore
import WaymarkTesting

@Suite struct BroadcastTests {
  @Test func lateSubscriberGetsLatestThenLive() async {
    let broadcast = Broadcast<Int>()
    broadcast.send(1)
    broadcast.send(2)
    var iterator = broadcast.subscription.makeAsyncIterator()
    broadcast.send(3)
    broadcast.finish()
    var seen: [Int] = []
    while let value = await iterator.next() { seen.append(value) }
    #expect(seen == [2, 3])
  }

  @Test func withoutReplayOnlyLiveValues() async {
    let broadcast = Broadcast<Int>(replaysLatest: false)
    broadcast.send(1)
    let stream = broadcast.subscribe()
    broadcast.send(2)
    broadcast.finish()
    var seen: [Int] = []
    for await value in stream { seen.append(value) }
    #expect(seen == [2])
  }

  @Test func eachIterationIsItsOwnSubscription() async {
    let broadcast = Broadcast<Int>(initial: 0)
    let updates = broadcast.subscription
    var first = updates.makeAsyncIterator()
    var second = updates.makeAsyncIterator()
    #expect(broadcast.subscriberCount == 2)
    broadcast.send(1)
    #expect(await first.next() == 0)
    #expect(await first.next() == 1)
    #expect(await second.next() == 0)
    #expect(await second.next() == 1)
  }

  @Test func slowSubscriberDropsItsOwnOldestAndOthersGetEverything() async {
    let broadcast = Broadcast<Int>(replaysLatest: false, bufferingNewest: 4)
    let stalled = broadcast.subscribe()
    let fast = (0..<99).map { _ in broadcast.subscribe(bufferingNewest: 1000) }
    for value in 0..<500 { broadcast.send(value) }
    broadcast.finish()
    for stream in fast {
      var seen: [Int] = []
      for await value in stream { seen.append(value) }
      #expect(seen == Array(0..<500))
    }
    var slow: [Int] = []
    for await value in stalled { slow.append(value) }
    #expect(slow == [496, 497, 498, 499])
  }

  @Test func cancellingRemovesTheSubscription() async {
    let broadcast = Broadcast<Int>(initial: 0)
    let (started, startedContinuation) = AsyncStream.makeStream(of: Void.self)
    let task = Task {
      for await _ in broadcast.subscription { startedContinuation.yield() }
    }
    var startedIterator = started.makeAsyncIterator()
    await startedIterator.next()
    #expect(broadcast.subscriberCount == 1)
    task.cancel()
    await task.value
    #expect(broadcast.subscriberCount == 0)
  }

  /// A subscriber cancelled while values are sent to it: the runtime holds the subscriber's
  /// status lock while its subscription ends (and removes itself from the broadcast), and a
  /// send that resumes the subscriber needs that same lock. Before the fix the broadcast
  /// yielded under its own lock, which the ending subscription waited for: a deadlock that
  /// hung a test run. 2,000 subscribers, each cancelled while a thread sends without pause,
  /// all end within the bound; the control: they received values while being cancelled.
  @Test func cancellingSubscribersWhileSendingNeverDeadlocks() async throws {
    let broadcast = Broadcast<Int>(replaysLatest: false)
    let sending = Locked(true)
    let received = Locked(0)
    let senderDone = DispatchSemaphore(value: 0)
    DetachedThread.start(name: "broadcast-sender") {
      var value = 0
      while sending.withLock({ $0 }) {
        broadcast.send(value)
        value += 1
      }
      senderDone.signal()
    }
    let cancels = Task.detached {
      for round in 0..<2_000 {
        let subscriber = Task {
          for await _ in broadcast.subscription { received.withLock { $0 += 1 } }
        }
        while broadcast.subscriberCount == 0 { await Task.yield() }
        // The positive control: the first subscriber is cancelled only once it has received a
        // value (bounded by the 60 s watch below), so `received` cannot stay 0 by timing.
        if round == 0 { while received.withLock({ $0 }) == 0 { await Task.yield() } }
        subscriber.cancel()
        await subscriber.value
      }
    }
    // Waited for on a thread of its own: a deadlocked run holds threads of the pool.
    let finished = DispatchSemaphore(value: 0)
    Task.detached {
      await cancels.value
      finished.signal()
    }
    let ended = await withCheckedContinuation { continuation in
      DetachedThread.start(name: "broadcast-watch") {
        continuation.resume(returning: finished.wait(timeout: .now() + 60) == .success)
      }
    }
    sending.withLock { $0 = false }
    #expect(ended, "2,000 cancels did not end within 60 s: a send and a cancel wait for each other")
    guard ended else { return }  // the deadlocked threads hold the broadcast's locks
    #expect(senderDone.wait(timeout: .now() + 10) == .success)
    #expect(received.withLock { $0 } > 0)
    #expect(broadcast.subscriberCount == 0)
  }

  @Test func releasingTheIteratorRemovesTheSubscription() async {
    let broadcast = Broadcast<Int>(initial: 0)
    do {
      var iterator = broadcast.subscription.makeAsyncIterator()
      #expect(await iterator.next() == 0)
      #expect(broadcast.subscriberCount == 1)
    }
    #expect(broadcast.subscriberCount == 0)
  }

  @Test func subscribingAfterFinishGetsLatestAndEnds() async {
    let broadcast = Broadcast<String>()
    broadcast.send("last")
    broadcast.finish()
    var seen: [String] = []
    for await value in broadcast.subscription { seen.append(value) }
    #expect(seen == ["last"])
    #expect(broadcast.subscriberCount == 0)
  }

  @Test func aClosureSubscriberIsCalledOnTheSendingThreadWithEveryValue() {
    let broadcast = Broadcast<Int>(initial: 0, bufferingNewest: 1)
    let seen = Locked<[Int]>([])
    let onSender = Locked(true)
    let sender = Locked<pthread_t?>(nil)
    let id = broadcast.subscribe { value in
      seen.withLock { $0.append(value) }
      let same = sender.withLock { $0.map { pthread_equal($0, pthread_self()) != 0 } ?? true }
      onSender.withLock { $0 = $0 && same }
    }
    // The latest value at once, on this thread; then every value, none dropped (a stream with a
    // buffer of 1 would keep only the newest).
    #expect(seen.withLock { $0 } == [0])
    #expect(broadcast.subscriberCount == 1)
    let done = Channel<Bool>(capacity: 1, overflow: .wait)
    DetachedThread.start(name: "bc-sender") {
      sender.withLock { $0 = pthread_self() }
      for value in 1...100 { broadcast.send(value) }
      done.send(true)
    }
    #expect(done.receive(timeoutMilliseconds: 20_000) == true)
    #expect(seen.withLock { $0 } == Array(0...100))
    #expect(onSender.withLock { $0 })
    // Unsubscribed: called no more.
    broadcast.unsubscribe(id)
    #expect(broadcast.subscriberCount == 0)
    broadcast.send(101)
    #expect(seen.withLock { $0.count } == 101)
    // Without replay, and after finish: no value, and not kept.
    let late = Locked<[Int]>([])
    _ = broadcast.subscribe(replaying: false) { value in late.withLock { $0.append(value) } }
    broadcast.send(102)
    #expect(late.withLock { $0 } == [102])
    broadcast.finish()
    broadcast.send(103)
    _ = broadcast.subscribe { value in late.withLock { $0.append(value) } }
    #expect(late.withLock { $0 } == [102, 102])
    #expect(broadcast.subscriberCount == 0)
  }

  @Test func manualClockWakesSleepersInDeadlineOrder() async throws {
    let clock = ManualClock()
    let order = Broadcast<Int>(replaysLatest: false, bufferingNewest: 10)
    let log = order.subscribe()
    let late = Task {
      try await clock.sleep(for: .seconds(10))
      order.send(10)
    }
    let early = Task {
      try await clock.sleep(for: .seconds(5))
      order.send(5)
    }
    await clock.waitForSleepers(2)
    clock.advance(by: .seconds(4))
    #expect(clock.sleeperCount == 2)
    clock.advance(by: .seconds(1))
    try await early.value
    #expect(clock.sleeperCount == 1)
    clock.advance(by: .seconds(5))
    try await late.value
    order.finish()
    var seen: [Int] = []
    for await value in log { seen.append(value) }
    #expect(seen == [5, 10])
  }

  @Test func manualClockSleepIsCancellable() async {
    let clock = ManualClock()
    let task = Task { try await clock.sleep(for: .seconds(60)) }
    await clock.waitForSleepers(1)
    task.cancel()
    await #expect(throws: CancellationError.self) { try await task.value }
    #expect(clock.sleeperCount == 0)
  }
}
