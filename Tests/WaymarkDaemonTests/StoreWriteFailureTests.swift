import Foundation
import Testing
import Waymark
import WaymarkCore

@testable import WaymarkDaemon
@testable import WaymarkPipeline
@testable import WaymarkStore

/// Writes that fail for a while (a full disk): held, recorded again in order, logged once.
/// The failure is real SQLite refusing to write (`PRAGMA query_only`, `SQLITE_READONLY`, as on
/// a file system remounted read-only); `Scripts/faults.sh --only disk` fills a real one.
@Suite struct StoreWriteFailureTests {
  static let start = Timestamp.date(milliseconds: 1_795_939_200_000)
  static let home = Coordinate(latitude: 45.7604, longitude: 4.8359)

  /// A fix `seconds` after the start, `meters` east of home.
  static func fix(_ seconds: Double, east meters: Double) -> Fix {
    Fix(
      time: start.addingTimeInterval(seconds), mode: .threeDimensional,
      coordinate: home.offset(by: meters, bearingDegrees: 90), horizontalError: 5)
  }

  static func setQueryOnly(_ database: Database, _ on: Bool) throws {
    try database.withWriteConnection { try $0.executeScript("PRAGMA query_only = \(on ? 1 : 0)") }
  }

  @Test("a departure whose write fails is held and recorded, with its own time, once writes work")
  func heldDepartureIsRecordedLater() throws {
    let directory = try TemporaryDirectory()
    let path = directory.file("waymark.db")
    let database = try Database(path: path)
    let place = Place(id: "home", name: "Home", coordinate: Self.home, radiusMeters: 50)
    try database.write { _ = try PlaceRepository($0).upsert([place]) }
    let tracker = try VisitTracker(places: [place], database: database, source: "test")
    tracker.holdsFailedEvents = true
    var outcomes: [VisitTracker.Outcome] = []
    for second in 0..<20 { outcomes += tracker.process(Self.fix(Double(second), east: 0)) }
    #expect(outcomes.map(\.event.className) == ["ARRIVAL"] && outcomes[0].failure == nil)
    // The disk refuses writes: the departure (and a second arrival after it) are held.
    try Self.setQueryOnly(database, true)
    var failing: [VisitTracker.Outcome] = []
    for second in 20..<40 { failing += tracker.process(Self.fix(Double(second), east: 500)) }
    for second in 40..<60 { failing += tracker.process(Self.fix(Double(second), east: 0)) }
    #expect(failing.map(\.event.className) == ["DEPARTURE", "ARRIVAL"])
    #expect(failing.allSatisfy { $0.isHeld && $0.failure != nil && !$0.isLate })
    #expect(tracker.heldCount == 2)
    #expect(throws: StoreError.self) { try tracker.save() }
    #expect(try storedVisits(path).map(\.visit.departureDate) == [nil])
    // Writes work again: the next fix records both, in order, before its own events.
    try Self.setQueryOnly(database, false)
    let late = tracker.process(Self.fix(60, east: 0))
    #expect(late.map(\.event.className) == ["DEPARTURE", "ARRIVAL"])
    #expect(late.allSatisfy { $0.isLate && $0.failure == nil && $0.isNew })
    #expect(tracker.heldCount == 0)
    let visits = try storedVisits(path)
    let departure = try #require(failing.first?.event)
    #expect(visits.count == 2)
    #expect(visits.first?.visit.departureDate == departure.time)
    #expect(visits.last?.visit.departureDate == nil)
    try tracker.save()
  }

  @Test("without holding (waymark replay) a failed write is only reported")
  func notHeldByDefault() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("waymark.db"))
    let place = Place(id: "home", name: "Home", coordinate: Self.home, radiusMeters: 50)
    try database.write { _ = try PlaceRepository($0).upsert([place]) }
    let tracker = try VisitTracker(places: [place], database: database, source: "test")
    try Self.setQueryOnly(database, true)
    var outcomes: [VisitTracker.Outcome] = []
    for second in 0..<20 { outcomes += tracker.process(Self.fix(Double(second), east: 0)) }
    #expect(outcomes.count == 1 && outcomes[0].failure != nil && !outcomes[0].isHeld)
    #expect(tracker.heldCount == 0)
  }

  @Test("a failing disk is logged once per episode, and its end once")
  func oncePerEpisode() {
    struct Full: Error, CustomStringConvertible { var description: String { "disk is full" } }
    var health = StoreWriteHealth()
    #expect(health.succeeded(held: "nothing") == nil)
    let first = health.failed("the DEPARTURE of 'home'", Full())
    #expect(first?.contains("the DEPARTURE of 'home': disk is full") == true)
    for _ in 0..<100 { #expect(health.failed("the track", Full()) == nil) }
    #expect(health.isFailing && health.episodes == 1)
    let end = health.succeeded(held: "1 held event(s) recorded")
    #expect(
      end == "store: writes succeed again after 101 failed attempt(s); 1 held event(s) recorded")
    #expect(health.succeeded(held: "") == nil && !health.isFailing)
    #expect(health.failed("the track", Full()) != nil && health.episodes == 2)
  }
}
