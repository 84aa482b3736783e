import Foundation
import Testing
import WaymarkCore

@testable import WaymarkStore

@Suite("Visit recorder")
struct VisitRecorderTests {
  func makeDatabase(_ directory: TemporaryDirectory) throws -> Database {
    let database = try Database(path: directory.path("v.db"))
    try database.write { _ = try PlaceRepository($0).upsert([cafe, office]) }
    return database
  }

  /// Rows of every table that matters, as text, for comparing two stores.
  func dump(_ database: Database) throws -> [String] {
    try database.read { connection in
      var lines: [String] = []
      try connection.query(
        "SELECT place_id, arrival, departure, fix_count, best_accuracy, last_fix FROM visit ORDER BY place_id, arrival"
      ) {
        lines.append(
          "visit \($0.text(0)) \($0.int(1)) \($0.optionalInt64(2) ?? -1) \($0.int(3)) \($0.optionalDouble(4) ?? -1) \($0.optionalInt64(5) ?? -1)"
        )
      }
      try connection.query(
        "SELECT class, time, place_id, reason FROM event ORDER BY time, class, place_id"
      ) {
        lines.append("event \($0.text(0)) \($0.int(1)) \($0.text(2)) \($0.text(3))")
      }
      try connection.query("SELECT id, visited, visit_count FROM place ORDER BY id") {
        lines.append("place \($0.text(0)) \($0.int(1)) \($0.int(2))")
      }
      return lines
    }
  }

  /// A day at two places: fixes and events, in stream order.
  enum Step {
    case fix(Fix)
    case event(PlaceEvent)
  }

  static let day: [Step] = {
    var steps: [Step] = []
    // At the cafe from t=0 s: fixes every 10 s; the arrival is confirmed at t=20 (3 fixes).
    for second in stride(from: 0.0, through: 20, by: 10) {
      steps.append(.fix(fix(at: second, cafe.coordinate, accuracy: 8 - second / 10)))
    }
    steps.append(.event(arrival(cafe, at: 0)))
    for second in stride(from: 30.0, through: 600, by: 10) {
      steps.append(.fix(fix(at: second, cafe.coordinate.offset(by: 5, bearingDegrees: second))))
    }
    // Walk away: outside from 610 s; the departure (time = last fix inside, 600 s) is confirmed
    // at 630 s.
    for second in stride(from: 610.0, through: 630, by: 10) {
      steps.append(.fix(fix(at: second, cafe.coordinate.offset(by: 400, bearingDegrees: 90))))
    }
    steps.append(.event(departure(cafe, at: 600, arrived: 0)))
    steps.append(.fix(fix(at: 3600, office.coordinate)))
    steps.append(.event(arrival(office, at: 3600)))
    steps.append(.fix(fix(at: 3610, office.coordinate, accuracy: 2)))
    return steps
  }()

  func play(_ steps: some Sequence<Step>, into recorder: VisitRecorder) throws {
    for step in steps {
      switch step {
      case .fix(let fix): recorder.observe(fix)
      case .event(let event): try recorder.record(event)
      }
    }
    try recorder.flush()
  }

  @Test("an arrival opens a visit and the departure closes it, counting the fixes inside")
  func opensAndCloses() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let recorder = try VisitRecorder(database: database, source: "test.nmea")
    try play(Self.day, into: recorder)
    let visits = try database.read { try VisitRepository($0).all() }
    #expect(visits.count == 2)
    let first = visits[0].visit
    #expect(first.placeID == "cafe")
    #expect(first.arrivalDate == time(0))
    #expect(first.departureDate == time(600))
    #expect(first.fixCount == 61)  // 0, 10, …, 600 s
    #expect(first.bestAccuracyMeters == 5)
    #expect(first.source == "test.nmea")
    let second = visits[1].visit
    #expect(second.placeID == "office")
    #expect(second.isOpen)
    #expect(second.fixCount == 2)
    #expect(second.bestAccuracyMeters == 2)
    #expect(recorder.openVisits == ["office": time(3600)])
    let places = try database.read { try PlaceRepository($0).all() }
    #expect(places.map(\.visitCount) == [1, 1])
    #expect(places.allSatisfy { $0.visited })
    #expect(try database.read { try EventRepository($0).count() } == 3)
    let last = try database.read { try MonitorStateRepository($0).lastFix() }
    #expect(last?.time == time(3610))
  }

  @Test("the same stream recorded twice, or into a fresh store, gives identical rows")
  func idempotent() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    try play(Self.day, into: try VisitRecorder(database: database, source: "log"))
    let once = try dump(database)
    try play(Self.day, into: try VisitRecorder(database: database, source: "log"))
    #expect(try dump(database) == once)
    let other = try TemporaryDirectory()
    defer { other.remove() }
    let fresh = try makeDatabase(other)
    try play(Self.day, into: try VisitRecorder(database: fresh, source: "log"))
    #expect(try dump(fresh) == once)
  }

  @Test("a restart in the middle of a visit: the open visit is found and closed once")
  func restartMidVisit() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let reference = try TemporaryDirectory()
    defer { reference.remove() }
    let whole = try makeDatabase(reference)
    try play(Self.day, into: try VisitRecorder(database: whole, source: "log"))

    // First run stops (without a final flush) after 40 steps, inside the cafe visit.
    let cut = 40
    do {
      let recorder = try VisitRecorder(database: database, source: "log")
      for step in Self.day.prefix(cut) {
        switch step {
        case .fix(let fix): recorder.observe(fix)
        case .event(let event): try recorder.record(event)
        }
      }
    }
    let restarted = try VisitRecorder(database: database, source: "log")
    #expect(restarted.openVisits == ["cafe": time(0)])
    // Resume from the start of the log (a replay), as `replay --store` does after a crash.
    try play(Self.day, into: restarted)
    #expect(try dump(database) == dump(whole))
  }

  @Test("a daemon resumes with only new fixes: the visit is closed by the later departure")
  func resumeWithNewFixesOnly() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let cut = 40
    try play(Self.day.prefix(cut), into: try VisitRecorder(database: database, source: "log"))
    try play(Self.day.dropFirst(cut), into: try VisitRecorder(database: database, source: "log"))
    let visits = try database.read { try VisitRepository($0).all() }
    #expect(visits.count == 2)
    #expect(visits[0].visit.departureDate == time(600))
    #expect(visits[0].visit.fixCount == 61)
  }

  @Test("a departure whose arrival was never stored records a closed visit")
  func departureWithoutArrival() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let recorder = try VisitRecorder(database: database)
    #expect(try recorder.record(departure(cafe, at: 100, arrived: 40)))
    #expect(try !recorder.record(departure(cafe, at: 100, arrived: 40)))
    let visits = try database.read { try VisitRepository($0).all() }
    #expect(visits.map(\.visit.arrivalDate) == [time(40)])
    #expect(visits.map(\.visit.departureDate) == [time(100)])
    #expect(try database.read { try PlaceRepository($0).place(id: "cafe") }?.visitCount == 1)
  }

  @Test("an arrival while an older visit is still open closes the older one first")
  func staleOpenVisit() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let recorder = try VisitRecorder(database: database)
    recorder.observe(fix(at: 0, cafe.coordinate))
    try recorder.record(arrival(cafe, at: 0))
    recorder.observe(fix(at: 50, cafe.coordinate))
    try recorder.flush()
    // The departure was lost; much later a new arrival comes.
    try recorder.record(arrival(cafe, at: 5000))
    let visits = try database.read { try VisitRepository($0).all() }
    #expect(visits.count == 2)
    #expect(visits[0].visit.departureDate == time(50))  // last fix counted inside
    #expect(visits[1].visit.isOpen)
  }

  @Test("an event for a place that is not in the store writes nothing")
  func unknownPlace() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let recorder = try VisitRecorder(database: database)
    let nowhere = Place(id: "nowhere", name: "?", coordinate: Coordinate(latitude: 0, longitude: 0))
    do {
      try recorder.record(arrival(nowhere, at: 0))
      Issue.record("recorded an unknown place")
    } catch let error as StoreError {
      #expect(error.kind == .notFound)
    }
    #expect(try database.read { try EventRepository($0).count() } == 0)
    #expect(recorder.openVisits.isEmpty)
  }

  @Test("a monitor snapshot is saved in the transition's transaction")
  func snapshotWithTransition() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try makeDatabase(directory)
    let recorder = try VisitRecorder(database: database)
    recorder.observe(fix(at: 0, cafe.coordinate))
    try recorder.record(arrival(cafe, at: 0), snapshot: #"{"inside":true}"#)
    try recorder.saveSnapshots(["office": #"{"inside":false}"#])
    let states = try database.read { try MonitorStateRepository($0).all() }
    #expect(states["cafe"] == .init(snapshot: #"{"inside":true}"#, lastFixTime: time(0)))
    #expect(states["office"]?.snapshot == #"{"inside":false}"#)
  }
}
