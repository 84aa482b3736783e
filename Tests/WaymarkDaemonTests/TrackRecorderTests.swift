import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkPipeline
import WaymarkStore

/// The recorder's batches and retention, observed from a second connection as another process
/// (the CLI) would see the store.
@Suite struct TrackRecorderTests {
  static let start = Timestamp.date(milliseconds: 1_795_939_200_000)
  static let origin = Coordinate(latitude: 52.52, longitude: 13.405)

  /// A fix `seconds` after the start, 12 m further east per second: every one is kept.
  static func fix(_ seconds: Double) -> Fix {
    Fix(
      time: start.addingTimeInterval(seconds), mode: .threeDimensional,
      coordinate: origin.offset(by: 12 * seconds, bearingDegrees: 90), horizontalError: 5)
  }

  static func stored(_ path: String) throws -> [TrackPoint] {
    try Database(path: path, createIfMissing: false).read { try TrackRepository($0).all() }
  }

  @Test("points are written a batch at a time: every track-batch points")
  func batchesByPointCount() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("t.db")
    let recorder = try TrackRecorder(
      database: Database(path: path),
      settings: .init(batchPoints: 10, batchSeconds: 1000, retentionDays: 0))
    var seen: [Int] = []
    for second in 0..<25 {
      #expect(try recorder.record(Self.fix(Double(second))))
      seen.append(try Self.stored(path).count)
    }
    #expect(
      seen == Array(repeating: 0, count: 9) + Array(repeating: 10, count: 10)
        + Array(repeating: 20, count: 6))
    #expect(recorder.pendingCount == 5)
    try recorder.flush()
    #expect(try Self.stored(path).count == 25)
    #expect(recorder.inserted == 25 && recorder.kept == 25)
  }

  @Test("or when a fix comes track-batch-interval seconds of fix time after the first waiting")
  func batchesByFixTime() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("t.db")
    let recorder = try TrackRecorder(
      database: Database(path: path),
      settings: .init(batchPoints: 1000, batchSeconds: 5, retentionDays: 0))
    var seen: [Int] = []
    for second in 0..<12 {
      try recorder.record(Self.fix(Double(second)))
      seen.append(try Self.stored(path).count)
    }
    // 0...5 go at 5 s, 6...11 at 11 s.
    #expect(seen == [0, 0, 0, 0, 0, 6, 6, 6, 6, 6, 6, 12])
  }

  @Test("retention deletes points older than the days before the latest point, hourly")
  func retentionByFixTime() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("t.db")
    let database = try Database(path: path)
    let day = 86_400.0
    func old(_ seconds: Double) -> TrackPoint {
      TrackPoint(
        timestamp: Self.start.addingTimeInterval(seconds), coordinate: Self.origin, segment: 1)
    }
    try database.write { _ = try TrackRepository($0).insert([old(-40 * day), old(-29 * day)]) }
    let recorder = try TrackRecorder(
      database: database, settings: .init(batchPoints: 1, batchSeconds: 1000, retentionDays: 30))
    try recorder.record(Self.fix(0))
    #expect(try Self.stored(path).map(\.timestamp) == [old(-29 * day).timestamp, Self.start])
    #expect(recorder.deleted == 1)
    // Half an hour later, a point older than 30 days is not deleted yet...
    try database.write { _ = try TrackRepository($0).insert([old(-31 * day)]) }
    try recorder.record(Self.fix(1800))
    #expect(try Self.stored(path).count == 4)
    // ...an hour after the last pass it is.
    try recorder.record(Self.fix(3600))
    #expect(try Self.stored(path).count == 4)
    #expect(recorder.deleted == 2)
    #expect(try Self.stored(path).first?.timestamp == old(-29 * day).timestamp)
  }

  @Test("a failed batch is tried again a batch later, not at every fix, and nothing is lost")
  func failedBatchWaits() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("t.db")
    let recorder = try TrackRecorder(
      database: Database(path: path),
      settings: .init(batchPoints: 2, batchSeconds: 1000, retentionDays: 0))
    // Another connection takes the table away: the recorder's writes fail.
    let other = try Database(path: path)
    let table = try #require(
      try other.read {
        try $0.queryFirst("SELECT sql FROM sqlite_schema WHERE name = 'track_point'") {
          $0.text(0)
        }
      })
    try other.write { try $0.executeScript("DROP TABLE track_point") }
    try recorder.record(Self.fix(0))
    #expect(throws: StoreError.self) { try recorder.record(Self.fix(1)) }
    // The next fix makes no attempt (it would throw).
    try recorder.record(Self.fix(2))
    #expect(recorder.pendingCount == 3)
    try other.write { try $0.executeScript(table) }
    try recorder.record(Self.fix(3))
    #expect(recorder.pendingCount == 0)
    #expect(try Self.stored(path).count == 4)
    #expect(recorder.dropped == 0)
  }

  @Test("a new recorder continues the stored track: same segment within the gap, next after")
  func continuesTheStoredTrack() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("t.db")
    let database = try Database(path: path)
    let first = try TrackRecorder(database: database, settings: .init(retentionDays: 0))
    for second in 0..<3 { try first.record(Self.fix(Double(second))) }
    try first.flush()
    let second = try TrackRecorder(database: database, settings: .init(retentionDays: 0))
    try second.record(Self.fix(5))
    try second.record(Self.fix(30))
    try second.flush()
    #expect(try Self.stored(path).map(\.segment) == [1, 1, 1, 1, 2])
  }
}
