import Foundation
import Testing
import Waymark
import WaymarkCore

@testable import WaymarkDaemon
@testable import WaymarkPipeline
@testable import WaymarkStore

/// ``WaymarkPipeline/checkpoint()``, what the daemon's saves and its stop call: it saves the
/// monitor's state, the open stay and each sink's buffers, reports each part that failed to the
/// store's health (a real ``StoreSink``) in that order, and ends nothing. The failure is real
/// SQLite refusing to write (`PRAGMA query_only`).
@Suite struct PipelineCheckpointTests {
  /// A pipeline over a real store with one place, a stay recorder, a track in large batches,
  /// and the store's health logging to `logPath`.
  struct Rig {
    let database: Database
    let tracker: VisitTracker
    let stays: StayRecorder
    let context: PipelineContext
    let pipeline: WaymarkPipeline

    init(directory: TemporaryDirectory, log: DaemonLog) throws {
      database = try Database(path: directory.file("waymark.db"))
      let place = Place(
        id: "home", name: "Home", coordinate: StoreWriteFailureTests.home, radiusMeters: 50)
      try database.write { _ = try PlaceRepository($0).upsert([place]) }
      tracker = try VisitTracker(places: [place], database: database, source: "test")
      tracker.holdsFailedEvents = true
      stays = try StayRecorder(
        database: database, places: .list([place]),
        configuration: StayDetector.Configuration(minimumDurationSeconds: 60), source: "test",
        resumes: true, saveIntervalSeconds: .infinity)
      context = PipelineContext(
        track: try TrackRecorder(
          database: database,
          settings: TrackRecorder.Settings(
            batchPoints: 10_000, batchSeconds: .infinity, retentionDays: 0)))
      let store = StoreSink(log: log, tracker: tracker, context: context)
      pipeline = WaymarkPipeline(
        tracker: tracker, stayRecorder: stays, context: context,
        sinks: [store, TrackSink(context: context)])
    }
  }

  @Test("checkpoint reports each part that failed, in order, and saves them all once it can")
  func checkpointReportsEachPart() throws {
    let directory = try TemporaryDirectory()
    let logPath = directory.file("daemon.log")
    let descriptor = open(logPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    try #require(descriptor >= 0)
    defer { close(descriptor) }
    let rig = try Rig(directory: directory, log: DaemonLog(descriptor: descriptor))
    // Moving east, then staying home for 10 minutes: a visit and a stay are open, track
    // points wait for their batch.
    for second in 0..<120 {
      let east = 600 - 5 * Double(second)
      try rig.pipeline.process(StoreWriteFailureTests.fix(Double(second), east: east))
    }
    for second in 120..<720 {
      try rig.pipeline.process(StoreWriteFailureTests.fix(Double(second), east: 0))
    }
    let waiting = try #require(rig.context.track?.pendingCount)
    #expect(waiting > 0)
    #expect(rig.tracker.openPlaceIDs == ["home"])
    #expect(rig.stays.openStay != nil)

    // The disk refuses writes: every part fails, in order, and what waits is kept.
    try StoreWriteFailureTests.setQueryOnly(rig.database, true)
    let failed = rig.pipeline.checkpoint()
    #expect(
      failed.map(\.part) == [
        "the monitor state", "the open stay", "the track (\(waiting) point(s) wait)",
      ])
    #expect(failed.allSatisfy { $0.error is StoreError })
    #expect(rig.context.track?.pendingCount == waiting)
    #expect(try rig.database.read { try TrackRepository($0).count() } == 0)

    // Writes work again: nothing fails, the points are written, and nothing was ended.
    try StoreWriteFailureTests.setQueryOnly(rig.database, false)
    #expect(rig.pipeline.checkpoint().isEmpty)
    #expect(rig.context.track?.pendingCount == 0)
    #expect(try rig.database.read { try TrackRepository($0).count() } == waiting)
    #expect(rig.tracker.openPlaceIDs == ["home"])
    let stored = try #require(try rig.database.read { try StayRepository($0).open() })
    #expect(stored.stay.departureDate == nil)
    #expect(stored.stay.arrivalDate == rig.stays.openStay?.arrivalDate)

    // The store's health logged the episode once, and its end once.
    let log = try String(contentsOfFile: logPath, encoding: .utf8)
    let lines = log.split(separator: "\n").map(String.init)
    #expect(lines.filter { $0.hasPrefix("<3>store: cannot write the monitor state: ") }.count == 1)
    #expect(lines.filter { $0.hasPrefix("<3>store: cannot write") }.count == 1)
    #expect(
      lines.filter { $0.hasPrefix("<5>store: writes succeed again after 3 failed attempt(s); ") }
        .count == 1)
  }
}
