import Foundation
import Testing
import WaymarkCore
import WaymarkPipeline
import WaymarkTesting

/// The pipeline's inbox (a `Channel` of fixes, policy `wait`): a source read through
/// `admitting(_:)` is read no faster than the inbox is emptied, loses nothing, and stops being
/// read once the inbox is closed. The waits are bounded (`FixPipelineTests.wait`).
@Suite struct PipelineInboxTests {
  @Test func aSourceReadThroughTheInboxWaitsForRoomAndStopsWhenItCloses() async throws {
    let wakes = Locked(0)
    let inbox = PipelineInbox(
      capacity: 2, overflow: .wait, whenNonEmpty: { wakes.withLock { $0 += 1 } })
    let drive = FixPipelineTests.drive(7)
    let source = inbox.admitting(ScriptedSource.finite(drive))
    let read = Locked(0)
    let ended = Locked(false)
    let reader = Task {
      for await fix in source.fixes() {
        read.withLock { $0 += 1 }
        inbox.sendIgnoringCapacity(fix)
      }
      ended.withLock { $0 = true }
    }
    defer { reader.cancel() }
    // Full at two: the reader waits for room (a third would be in the inbox by now).
    try await FixPipelineTests.wait { inbox.count == 2 }
    for _ in 0..<200 { await Task.yield() }
    #expect(inbox.count == 2)
    #expect(read.withLock { $0 } == 2)
    #expect(wakes.withLock { $0 } == 1)
    // Taken: the reader goes on (positive control) until full again.
    var taken = inbox.receiveAll()
    try await FixPipelineTests.wait { inbox.count == 2 }
    #expect(read.withLock { $0 } == 4)
    #expect(wakes.withLock { $0 } == 2)
    taken += inbox.receiveAll()
    #expect(taken.map(\.time) == drive.prefix(4).map(\.time))
    // Closed: the source is read no more, and the reader ends with what it had read.
    try await FixPipelineTests.wait { inbox.count == 2 }
    #expect(!ended.withLock { $0 })
    inbox.close()
    try await FixPipelineTests.wait { ended.withLock { $0 } }
    #expect(ended.withLock { $0 })
    #expect(read.withLock { $0 } == 6)
    #expect(inbox.receiveAll().map(\.time) == drive[4..<6].map(\.time))
    #expect(inbox.highWater == 2)
  }
}
