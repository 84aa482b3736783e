import Foundation
import Testing
import WaymarkCore
import WaymarkPipeline

/// The pipeline's inbox (a `Channel` of fixes, policy `wait`): a source read as waymarkd reads
/// gpsd (a thread that waits for room, then reads and hands the fix over) is read no faster than
/// the inbox is emptied, loses nothing, and stops being read once the inbox is closed. The waits
/// are bounded (`FixPipelineTests.wait`).
@Suite struct PipelineInboxTests {
  @Test func aSourceReadThroughTheInboxWaitsForRoomAndStopsWhenItCloses() async throws {
    let wakes = Locked(0)
    let inbox = PipelineInbox(
      capacity: 2, overflow: .wait, whenNonEmpty: { wakes.withLock { $0 += 1 } })
    let drive = FixPipelineTests.drive(7)
    let read = Locked(0)
    let ended = Locked(false)
    DetachedThread.start(name: "inbox-reader") {
      for fix in drive {
        guard inbox.waitForRoom() else { break }
        read.withLock { $0 += 1 }
        inbox.sendIgnoringCapacity(fix)
      }
      ended.withLock { $0 = true }
    }
    // Full at two: the reader waits for room (a third would be in the inbox by now).
    try await FixPipelineTests.wait { inbox.count == 2 }
    try await Task.sleep(for: .milliseconds(50))
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
