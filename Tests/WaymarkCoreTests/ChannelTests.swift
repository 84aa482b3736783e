import Glibc
import Testing

@testable import WaymarkCore

/// The channel's logic: order, each overflow policy with its count, close, many producers.
/// Every wait is bounded (a receive with a timeout), so a bug fails the test instead of hanging.
@Suite struct ChannelTests {
  static let bound = 20_000

  @Test func valuesComeOutInTheOrderTheyWentIn() {
    let channel = Channel<Int>(capacity: 8, overflow: .wait)
    for value in 1...5 { #expect(channel.send(value).isSent) }
    #expect(channel.count == 5)
    let received = (1...5).map { _ in channel.receive(timeoutMilliseconds: Self.bound) }
    #expect(received == [1, 2, 3, 4, 5])
    #expect(channel.receiveIfAvailable() == nil)
    #expect(channel.dropped == 0)
  }

  @Test func dropOldestKeepsTheNewestAndCountsAndReturnsWhatWent() {
    let channel = Channel<Int>(capacity: 3, overflow: .dropOldest)
    var droppedValues: [Int] = []
    for value in 1...5 {
      if case .sentDroppingOldest(let dropped) = channel.send(value) {
        droppedValues.append(dropped)
      }
    }
    #expect(droppedValues == [1, 2])
    #expect(channel.dropped == 2)
    #expect(channel.receiveAll() == [3, 4, 5])
  }

  @Test func refuseKeepsTheOldestAndSaysFull() {
    let channel = Channel<Int>(capacity: 2, overflow: .refuse)
    let outcomes = (1...4).map { channel.send($0).isSent }
    #expect(outcomes == [true, true, false, false])
    if case .full = channel.send(9) {} else { Issue.record("a full channel refused nothing") }
    #expect(channel.dropped == 0)
    #expect(channel.receiveAll() == [1, 2])
    // Room again: the next send goes in.
    #expect(channel.send(5).isSent)
    #expect(channel.receiveAll() == [5])
  }

  @Test func closeLetsReceiversDrainThenEnds() {
    let channel = Channel<Int>(capacity: 4, overflow: .wait)
    channel.send(1)
    channel.send(2)
    channel.close()
    if case .closed = channel.send(3) {} else { Issue.record("a closed channel took a value") }
    #expect(channel.receive(timeoutMilliseconds: Self.bound) == 1)
    #expect(channel.receive(timeoutMilliseconds: Self.bound) == 2)
    // Closed and empty: nil at once, not after the bound.
    #expect(channel.receive() == nil)
    #expect(channel.isClosed)
  }

  @Test func aReceiverWaitingOnAnEmptyChannelWakesOnClose() {
    let channel = Channel<Int>(capacity: 4, overflow: .wait)
    let result = Channel<Int?>(capacity: 1, overflow: .wait)
    DetachedThread.start(name: "chan-receive") { result.send(channel.receive()) }
    channel.close()
    let received = result.receive(timeoutMilliseconds: Self.bound)
    #expect(received == .some(nil))
  }

  @Test func aBlockedSenderWaitsForRoomAndIsReleasedByClose() {
    let channel = Channel<Int>(capacity: 1, overflow: .wait)
    channel.send(1)
    let outcomes = Channel<Bool>(capacity: 2, overflow: .wait)
    // Positive control: a sender blocked on a full channel goes in once a value is taken.
    DetachedThread.start(name: "chan-send-a") { outcomes.send(channel.send(2).isSent) }
    #expect(channel.receive(timeoutMilliseconds: Self.bound) == 1)
    #expect(outcomes.receive(timeoutMilliseconds: Self.bound) == true)
    #expect(channel.count == 1)
    // The channel is full again (2): this sender blocks until close releases it, refused.
    DetachedThread.start(name: "chan-send-b") { outcomes.send(channel.send(3).isSent) }
    channel.close()
    #expect(outcomes.receive(timeoutMilliseconds: Self.bound) == false)
    #expect(channel.receiveAll() == [2])
  }

  @Test func aSuspendedSenderGoesInWhenRoomIsMadeAndIsReleasedByClose() async {
    let channel = Channel<Int>(capacity: 1, overflow: .wait)
    await channel.send(1)
    let second = Task { await channel.send(2).isSent }
    // A receive takes 1 and admits the suspended 2 (or 2 comes later, if it had not suspended).
    #expect(channel.receive(timeoutMilliseconds: Self.bound) == 1)
    #expect(await second.value)
    #expect(channel.receive(timeoutMilliseconds: Self.bound) == 2)
    await channel.send(3)
    let third = Task { await channel.send(4).isSent }
    // Wait (bounded) until the third sender is suspended or in, then close.
    for _ in 0..<2000 where channel.count < 2 { await Task.yield() }
    channel.close()
    let thirdWent = await third.value
    #expect(channel.receiveAll() == (thirdWent ? [3, 4] : [3]))
    #expect(!thirdWent || channel.count == 0)
  }

  @Test func manyProducersLoseNothingAndKeepEachOnesOrder() {
    let channel = Channel<(producer: Int, index: Int)>(capacity: 16, overflow: .wait)
    let producers = 4
    let perProducer = 2000
    for producer in 0..<producers {
      DetachedThread.start(name: "chan-prod-\(producer)") {
        for index in 0..<perProducer { channel.send((producer, index)) }
      }
    }
    var next = Array(repeating: 0, count: producers)
    var inOrder = true
    for _ in 0..<(producers * perProducer) {
      guard let (producer, index) = channel.receive(timeoutMilliseconds: Self.bound) else { break }
      if index != next[producer] { inOrder = false }
      next[producer] = index + 1
    }
    #expect(next == Array(repeating: perProducer, count: producers))
    #expect(inOrder)
    #expect(channel.dropped == 0)
  }

  @Test func aSmallerCapacityKeepsWhatWaitsAndTheNextSendSeesItFull() {
    let channel = Channel<Int>(capacity: 4, overflow: .dropOldest)
    for value in 1...4 { channel.send(value) }
    channel.setCapacity(2)
    #expect(channel.count == 4)
    channel.send(5)
    #expect(channel.dropped == 1)
    #expect(channel.receiveAll() == [2, 3, 4, 5])
  }

  @Test func aSuspendedReceiverGetsTheNextValueAndIsReleasedByClose() async {
    let channel = Channel<Int>(capacity: 2, overflow: .wait)
    // A value already waiting comes at once.
    await channel.send(1)
    #expect(await channel.receive() == 1)
    // A receiver suspended on the empty channel gets the next value sent, from another thread.
    let waiting = Task { await channel.receive() }
    DetachedThread.start(name: "chan-send-r") { channel.send(2) }
    #expect(await waiting.value == 2)
    #expect(channel.count == 0)
    // Closed: a suspended receiver gets nil.
    let released = Task { await channel.receive() }
    channel.close()
    #expect(await released.value == nil)
  }

  @Test func anAsyncReceiveLetsASuspendedSenderIn() async {
    let channel = Channel<Int>(capacity: 1, overflow: .wait)
    await channel.send(1)
    let second = Task { await channel.send(2).isSent }
    #expect(await channel.receive() == 1)
    #expect(await second.value)
    #expect(await channel.receive() == 2)
    #expect(channel.receiveIfAvailable() == nil)
  }

  @Test func whenNonEmptyIsCalledOnceABatch() {
    let wakes = Locked(0)
    let channel = Channel<Int>(
      capacity: 8, overflow: .wait, whenNonEmpty: { wakes.withLock { $0 += 1 } })
    channel.send(1)
    channel.send(2)
    channel.sendIgnoringCapacity(3)
    // Positive control: the first value woke it; the next two found values waiting.
    #expect(wakes.withLock { $0 } == 1)
    #expect(channel.receiveAll() == [1, 2, 3])
    #expect(wakes.withLock { $0 } == 1)
    // Empty again: the next value wakes it again.
    channel.send(4)
    #expect(wakes.withLock { $0 } == 2)
    // Refused and closed sends wake nothing.
    channel.close()
    channel.send(5)
    #expect(wakes.withLock { $0 } == 2)
    #expect(channel.receiveAll() == [4])
  }

  @Test func sendIgnoringCapacityNeverWaitsNorDropsAndCountsTheHighWater() {
    let channel = Channel<Int>(capacity: 2, overflow: .wait)
    for value in 1...5 { #expect(channel.sendIgnoringCapacity(value).isSent) }
    // Past the capacity, nothing dropped; a sender that waits for room would wait.
    #expect(channel.count == 5)
    #expect(channel.dropped == 0)
    #expect(channel.highWater == 5)
    #expect(!channel.waitForRoom(timeoutMilliseconds: 1))
    #expect(channel.receiveAll() == [1, 2, 3, 4, 5])
    #expect(channel.waitForRoom(timeoutMilliseconds: 1))
    #expect(channel.highWater == 5)
    channel.close()
    if case .closed = channel.sendIgnoringCapacity(6) {
    } else {
      Issue.record("a closed channel took a value")
    }
    #expect(channel.count == 0)
  }

  @Test func aThreadWaitingForRoomGoesOnWhenAValueIsTakenAndStopsOnClose() {
    let channel = Channel<Int>(capacity: 1, overflow: .wait)
    channel.send(1)
    let answers = Channel<Bool>(capacity: 2, overflow: .wait)
    // Positive control: the waiting thread is let go by a receive, with room.
    DetachedThread.start(name: "chan-room-a") { answers.send(channel.waitForRoom()) }
    #expect(channel.receive(timeoutMilliseconds: Self.bound) == 1)
    #expect(answers.receive(timeoutMilliseconds: Self.bound) == true)
    // Full again: this one is let go by close, without room.
    channel.send(2)
    DetachedThread.start(name: "chan-room-b") { answers.send(channel.waitForRoom()) }
    channel.close()
    #expect(answers.receive(timeoutMilliseconds: Self.bound) == false)
    #expect(channel.receiveAll() == [2])
  }

  @Test func aTaskWaitingForRoomGoesOnWhenValuesAreTakenAndStopsOnClose() async {
    let channel = Channel<Int>(capacity: 1, overflow: .wait)
    #expect(await channel.waitForRoom())
    await channel.send(1)
    let first = Task { await channel.waitForRoom() }
    #expect(channel.receiveAll() == [1])
    #expect(await first.value)
    await channel.send(2)
    let second = Task { await channel.waitForRoom() }
    channel.close()
    #expect(await second.value == false)
    #expect(channel.receiveAll() == [2])
  }

  /// The broker's inbox: only the values `isEvictable` accepts go when the channel is full
  /// (fixes; a newer one follows), and with none evictable the value is queued over capacity
  /// (events are never lost).
  @Test func dropOldestWhereDropsOnlyEvictableValuesAndNeverTheOthers() {
    let channel = Channel<Int>(capacity: 3, droppingOldestWhere: { $0 % 2 == 0 })
    for value in [1, 2, 3] { #expect(channel.send(value).isSent) }
    guard case .sentDroppingOldest(let dropped) = channel.send(5) else {
      Issue.record("nothing dropped from a full channel holding an even value")
      return
    }
    #expect(dropped == 2)
    // Full of odd values: the next one is queued over capacity, none dropped.
    guard case .sent = channel.send(7) else {
      Issue.record("an odd value was dropped or refused")
      return
    }
    #expect(channel.count == 4)
    #expect(channel.dropped == 1)
    #expect(channel.receiveAll() == [1, 3, 5, 7])
    channel.close()
    if case .closed = channel.send(8) {} else { Issue.record("a closed channel took a value") }
  }

  /// The condition variable waits on the same clock as the deadline: a monotonic deadline on a
  /// realtime condition would lie decades in the past and the wait would end at once, empty.
  @Test func aTimedReceiveWaitsForALateSend() {
    let channel = Channel<Int>(capacity: 4, overflow: .wait)
    DetachedThread.start(name: "late-send") {
      usleep(50_000)
      channel.send(7)
    }
    #expect(channel.receive(timeoutMilliseconds: 30_000) == 7)
    #expect(channel.receive(timeoutMilliseconds: 1) == nil)
  }
}
