import Testing

@testable import WaymarkCore

/// The worker's logic: jobs in order on its thread with its state, results handed back, and
/// `finish` by its two rules. Waits are bounded (a gate with a timeout, a finish with one).
@Suite struct WorkerTests {
  static let bound = 20_000

  /// The state a worker owns; it says (through `released`) when it is freed.
  final class Ledger {
    var entries: [Int] = []
    let released: Channel<[Int]>
    init(released: Channel<[Int]>) { self.released = released }
    deinit { released.send(entries) }
  }

  @Test func jobsRunInOrderOnTheWorkerThreadAndDrainBeforeTheStateIsReleased() throws {
    let released = Channel<[Int]>(capacity: 1, overflow: .wait)
    let worker = Worker(threadName: "worker-test", capacity: 64, overflow: .wait) {
      Ledger(released: released)
    }
    for value in 1...20 { worker.perform { $0.entries.append(value) } }
    let onWorker = try worker.performAndWait { _ in worker.isCurrentThread }
    #expect(onWorker == true)
    #expect(!worker.isCurrentThread)
    for value in 21...30 { worker.perform { $0.entries.append(value) } }
    let outcome = worker.finish(.drain, timeoutMilliseconds: Self.bound)
    #expect(outcome.ended && outcome.abandoned == 0)
    // The state was released before `finish` returned, with every job's entry in order.
    #expect(released.receiveIfAvailable() == Array(1...30))
    #expect(!worker.perform { $0.entries.append(99) })
    #expect(try worker.performAndWait { $0.entries.count } == nil)
  }

  @Test func performAndWaitReturnsAndRethrows() throws {
    struct Failure: Error {}
    let worker = Worker(threadName: "worker-result", capacity: 4, overflow: .wait) { 41 }
    #expect(
      try worker.performAndWait { state -> Int in
        state += 1
        return state
      } == 42)
    #expect(throws: Failure.self) { _ = try worker.performAndWait { _ -> Int in throw Failure() } }
    worker.finish(.drain)
    #expect(worker.hasEnded)
  }

  @Test func theAsyncPerformAndWaitSuspendsUntilTheJobRan() async {
    let worker = Worker(threadName: "worker-async", capacity: 1, overflow: .wait) { [Int]() }
    for value in 1...5 { await worker.perform { $0.append(value) } }
    let all = await worker.performAndWait { $0 }
    #expect(all == [1, 2, 3, 4, 5])
    worker.finish(.drain)
    #expect(await worker.performAndWait { $0 } == nil)
  }

  /// A worker whose first job holds its thread until `gate` gets a value (or the bound passes).
  static func heldWorker(
    _ name: String, capacity: Int, overflow: ChannelOverflow
  ) -> (worker: Worker<Void>, gate: Channel<Bool>) {
    let gate = Channel<Bool>(capacity: 1, overflow: .wait)
    let started = Channel<Bool>(capacity: 1, overflow: .wait)
    let worker = Worker(threadName: name, capacity: capacity, overflow: overflow) { () }
    worker.perform { _ in
      started.send(true)
      _ = gate.receive(timeoutMilliseconds: bound)
    }
    #expect(started.receive(timeoutMilliseconds: bound) == true)
    return (worker, gate)
  }

  /// Hands `values` to `worker`: a job that runs notes its value in `ran`, one dropped for
  /// `reason` in `dropped`.
  static func handOver(
    _ values: ClosedRange<Int>, to worker: Worker<Void>, noting reason: Worker<Void>.Drop
  ) -> (ran: Locked<[Int]>, dropped: Locked<[Int]>) {
    let ran = Locked<[Int]>([])
    let dropped = Locked<[Int]>([])
    for value in values {
      worker.perform(
        { _ in ran.withLock { $0.append(value) } },
        ifDropped: { if $0 == reason { dropped.withLock { $0.append(value) } } })
    }
    return (ran, dropped)
  }

  @Test func abandonDropsWhatWaitsAndTellsEachJob() throws {
    let (worker, gate) = Self.heldWorker("worker-abandon", capacity: 8, overflow: .wait)
    let (ran, dropped) = Self.handOver(1...3, to: worker, noting: .abandoned)
    // The running job holds the thread: a finish that may not wait does not see it end.
    let first = worker.finish(.abandon, timeoutMilliseconds: 0)
    #expect(!first.ended && first.abandoned == 3)
    gate.send(true)
    let second = worker.finish(.abandon, timeoutMilliseconds: Self.bound)
    #expect(second.ended && second.abandoned == 0)
    #expect(ran.withLock { $0 }.isEmpty)
    #expect(dropped.withLock { $0 } == [1, 2, 3])
  }

  @Test func dropOldestTellsTheJobThatWentAndCountsIt() {
    let (worker, gate) = Self.heldWorker("worker-drop", capacity: 2, overflow: .dropOldest)
    let (ran, overflowed) = Self.handOver(1...5, to: worker, noting: .overflowed)
    #expect(worker.droppedCount == 3)
    gate.send(true)
    #expect(worker.finish(.drain, timeoutMilliseconds: Self.bound).ended)
    #expect(overflowed.withLock { $0 } == [1, 2, 3])
    #expect(ran.withLock { $0 } == [4, 5])
  }

  @Test func aJobWaitingForItsOwnWorkerIsRefusedNotDeadlocked() throws {
    let worker = Worker(threadName: "worker-nested", capacity: 4, overflow: .wait) { 1 }
    let nested = try worker.performAndWait { _ in try? worker.performAndWait { $0 } }
    #expect(nested == .some(nil))
    #expect(try worker.performAndWait { $0 } == 1)
    worker.finish(.drain)
  }
}
