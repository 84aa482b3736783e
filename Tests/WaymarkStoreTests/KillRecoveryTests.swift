import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// `kill -9` of a real `waymark` process while it records visits, then a rerun of the same input.
///
/// `waymark visits record` plays the part of `replay --store`: the same `VisitRecorder`, one
/// transaction per transition. The rerun starts from the beginning of the input, as a replay
/// does, so the recorded prefix must be recognised and nothing duplicated or lost.
@Suite("kill -9 while recording")
struct KillRecoveryTests {
  static let placeCount = 50
  static let visitCount = 800

  static func place(_ index: Int) -> Place {
    Place(
      id: "p\(index)", name: "Place \(index)",
      coordinate: Coordinate(latitude: 48 + Double(index) * 0.01, longitude: 11), radiusMeters: 50)
  }

  /// The input stream and the closed visits it must produce, as "place arrival departure".
  static func stream() -> (text: String, expected: Set<String>) {
    var lines: [String] = []
    var expected = Set<String>()
    let start = 1_795_953_600_000 as Int64  // 2026-11-29T12:00:00Z, milliseconds
    for visit in 0..<visitCount {
      let place = place(visit % placeCount)
      let arrivalMilliseconds = start + Int64(visit) * 120_000
      let departureMilliseconds = arrivalMilliseconds + 60_000
      let arrival = Timestamp.format(
        Date(timeIntervalSince1970: Double(arrivalMilliseconds) / 1000))
      let middle = Timestamp.format(
        Date(timeIntervalSince1970: Double(arrivalMilliseconds + 30_000) / 1000))
      let departure = Timestamp.format(
        Date(timeIntervalSince1970: Double(departureMilliseconds) / 1000))
      let latitude = String(place.coordinate.latitude)
      lines.append(
        #"{"class":"TPV","time":"\#(arrival)","mode":3,"lat":\#(latitude),"lon":11,"eph":4.0}"#)
      lines.append(
        #"{"class":"ARRIVAL","time":"\#(arrival)","place":"\#(place.id)","name":"\#(place.name)","lat":\#(latitude),"lon":11,"reason":{"rule":"inside"}}"#
      )
      lines.append(
        #"{"class":"TPV","time":"\#(middle)","mode":3,"lat":\#(latitude),"lon":11,"eph":3.0}"#)
      lines.append(
        #"{"class":"DEPARTURE","time":"\#(departure)","place":"\#(place.id)","name":"\#(place.name)","lat":\#(latitude),"lon":11.01,"arrival":"\#(arrival)","duration":60.000,"reason":{"rule":"outside"}}"#
      )
      expected.insert("\(place.id) \(arrivalMilliseconds) \(departureMilliseconds)")
    }
    return (lines.joined(separator: "\n") + "\n", expected)
  }

  /// The closed visits in the store, as "place arrival departure", and how many rows they are.
  func closedVisits(_ path: String) throws -> (set: Set<String>, rows: Int) {
    let database = try Database(path: path, createIfMissing: false)
    return try database.read { connection in
      var set = Set<String>()
      var rows = 0
      try connection.query(
        "SELECT place_id, arrival, departure FROM visit WHERE departure IS NOT NULL"
      ) {
        set.insert("\($0.text(0)) \($0.int64(1)) \($0.int64(2))")
        rows += 1
      }
      return (set, rows)
    }
  }

  func start(_ arguments: [String]) throws -> Process {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: Products.executable("waymark"))
    process.arguments = arguments
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    return process
  }

  @Test("after kill -9 mid-stream and a rerun: integrity ok, no closed visit lost or duplicated")
  func killAndRerun() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = directory.path("kill.db")
    let database = try Database(path: store)
    try database.write { connection in
      _ = try PlaceRepository(connection).upsert((0..<Self.placeCount).map(Self.place))
    }
    let (text, expected) = Self.stream()
    let input = try directory.write("events.ndjson", text)
    let arguments = ["visits", "record", input, "--store", store]

    var killedMidStream = 0
    for round in 1...3 {
      // Kill once the store holds round/5 of the visits: new ones are being written then.
      let threshold = Self.visitCount * round / 5
      let process = try start(arguments)
      let deadline = Date().addingTimeInterval(120)
      while process.isRunning, Date() < deadline {
        let closed = try database.read { try VisitRepository($0).count(closedOnly: true) }
        if closed >= threshold { break }
        usleep(2000)  // waiting on a real process: there is no clock to inject
      }
      if process.isRunning {
        kill(process.processIdentifier, SIGKILL)
        killedMidStream += 1
      }
      process.waitUntilExit()
      if process.terminationReason == .uncaughtSignal {
        #expect(process.terminationStatus == SIGKILL)
      }
      #expect(try database.integrityCheck() == ["ok"])
      let (closed, rows) = try closedVisits(store)
      #expect(rows == closed.count, "duplicate closed visits after round \(round)")
      #expect(closed.isSubset(of: expected), "a closed visit that the input does not contain")
    }
    #expect(killedMidStream > 0, "the child always finished before it could be killed")

    let final = try start(arguments)
    final.waitUntilExit()
    #expect(final.terminationReason == .exit)
    #expect(final.terminationStatus == 0)
    #expect(try database.integrityCheck() == ["ok"])
    let (closed, rows) = try closedVisits(store)
    #expect(rows == Self.visitCount)
    #expect(closed == expected)
    let (open, events, counted) = try database.read { connection in
      (
        try connection.queryFirst("SELECT count(*) FROM visit WHERE departure IS NULL") {
          $0.int(0)
        },
        try EventRepository(connection).count(),
        try connection.queryFirst("SELECT sum(visit_count) FROM place") { $0.int(0) }
      )
    }
    #expect(open == 0)
    #expect(events == 2 * Self.visitCount)
    #expect(counted == Self.visitCount)
  }
}
