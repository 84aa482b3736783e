import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// ``NMEAReplay`` over a real file: the log read and decoded on a thread of its own, paced on
/// an injected clock (a manual one here: nothing sleeps for real).
@Suite struct NMEAReplayTests {
  /// Three RMC epochs at 12:00:00, 12:00:02 and 12:00:07.
  static func threeEpochs() throws -> String {
    var text = ""
    for second in ["00", "02", "07"] {
      text += NMEAWriter.checksummed(
        "GPRMC,1200\(second),A,4807.038,N,01131.000,E,0.0,,230394,,,A")
    }
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-nmea-replay-\(UUID().uuidString).nmea").path
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func aPacedReplayWaitsTheLogStepsDividedByTheFactorOnTheInjectedClock() async throws {
    let path = try Self.threeEpochs()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let clock = ManualClock()
    let source = NMEAReplay.source(path: path, speed: .factor(2), clock: clock)
    let task = Task {
      var times: [Date] = []
      for await fix in source.fixes() { times.append(fix.time!) }
      return times
    }
    var requests = clock.requests.makeAsyncIterator()
    // The first fix goes at once; then 2 s / 2 and 5 s / 2, each only once the clock moves.
    await clock.waitForSleepers(1)
    #expect(await requests.next() == .seconds(1))
    clock.advance(by: .seconds(1))
    await clock.waitForSleepers(1)
    #expect(await requests.next() == .milliseconds(2500))
    clock.advance(by: .milliseconds(2500))
    let times = await task.value
    #expect(times.map { Int($0.timeIntervalSince1970) % 60 } == [0, 2, 7])
  }

  @Test func fullSpeedNeverWaits() async throws {
    let path = try Self.threeEpochs()
    defer { try? FileManager.default.removeItem(atPath: path) }
    let clock = ManualClock()
    var count = 0
    for await _ in NMEAReplay.source(path: path, speed: .max, clock: clock).fixes() { count += 1 }
    #expect(count == 3)
    // Positive control of the same file: paced, the clock is asked to sleep.
    let paced = Task {
      var count = 0
      for await _ in NMEAReplay.source(path: path, speed: .factor(1), clock: clock).fixes() {
        count += 1
      }
      return count
    }
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(10))
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(10))
    #expect(await paced.value == 3)
  }

  /// A log file of one RMC a second, from 12:00:00 on for `seconds` seconds; its path.
  static func rmcLog(seconds: Int) throws -> String {
    var text = ""
    for second in 0..<seconds {
      text += NMEAWriter.checksummed(
        "GPRMC,1200\(String(format: "%02d", second)),A,4807.038,N,01131.000,E,0.0,,230394,,,A")
    }
    let path = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-read-ahead-\(UUID().uuidString).nmea").path
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  @Test func aReadAheadHandsEveryBatchInOrderFromItsThreadAndStopsOnCancel() throws {
    let path = try Self.rmcLog(seconds: 50)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let descriptor = open(path, O_RDONLY)
    defer { close(descriptor) }
    // Tiny chunks and one waiting batch: the reading thread is held back many times.
    let reader = NMEALogReader(descriptor: descriptor, path: path, chunkBytes: 100)
    let readAhead = NMEAReadAhead(capacity: 1)
    readAhead.startFilling(from: reader)
    var seconds: [Int] = []
    while let batch = readAhead.nextBlocking() {
      seconds += batch.map { Int($0.time!.timeIntervalSince1970) % 60 }
    }
    #expect(seconds == Array(0..<50))
    #expect(readAhead.failure == nil)
    #expect(reader.progress.epochs == 50)

    // Cancelled, a consumer gets nothing more.
    let cancelled = NMEAReadAhead()
    cancelled.cancel()
    #expect(cancelled.nextBlocking() == nil)
  }

  @Test func aReadAheadHandsOverWhatItsStageReturnsForEachBatch() throws {
    let path = try Self.rmcLog(seconds: 30)
    defer { try? FileManager.default.removeItem(atPath: path) }
    let seconds = { (batches: [[Fix]]) in
      batches.joined().map { Int($0.time!.timeIntervalSince1970) % 60 }
    }
    func batches(through stage: (([Fix]) -> [Fix])?) -> [[Fix]] {
      let descriptor = open(path, O_RDONLY)
      defer { close(descriptor) }
      let reader = NMEALogReader(descriptor: descriptor, path: path, chunkBytes: 100)
      // Room for every batch: filled on this thread, then taken.
      let readAhead = NMEAReadAhead(capacity: 64)
      readAhead.fill(from: reader, through: stage)
      var batches: [[Fix]] = []
      while let batch = readAhead.nextBlocking() { batches.append(batch) }
      return batches
    }
    let plain = batches(through: nil)
    #expect(seconds(plain) == Array(0..<30))
    #expect(plain.count > 1)
    // The stage sees each decoded batch in order; what it returns is handed over instead.
    var seen: [Int] = []
    let staged = batches { batch in
      seen += seconds([batch])
      return batch.filter { Int($0.time!.timeIntervalSince1970) % 2 == 0 }
    }
    #expect(seen == Array(0..<30))
    #expect(staged.count == plain.count)
    #expect(seconds(staged) == Array(stride(from: 0, to: 30, by: 2)))
  }
}
