import Foundation
import Testing
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkDaemon
import WaymarkStore

/// The held monitors' store and bound, on a real SQLite file: more events than the bound give
/// the app the newest ones and the count it lost; an app not authorized gets no events.
@Suite struct HeldMonitorRegistryTests {
  static let center = Coordinate(latitude: 52.52, longitude: 13.405)
  static let key = HeldMonitor.Key(uid: 1000, clientID: "alice:/usr/bin/app", name: "trips")

  /// Locations one second apart from `start`, `count` of them, in cycles of 80 s: 20 s
  /// standing at the centre, 20 s driving east at 15 m/s, 20 s standing 300 m away, 20 s
  /// driving back (a plausible path: the place monitor takes no jump for a move).
  static func locations(count: Int, from start: Date) -> [Location] {
    (0..<count).map { index in
      let second = index % 80
      let distance: Double =
        switch second {
        case 0..<20: 0
        case 20..<40: Double(second - 20) * 15
        case 40..<60: 300
        default: 300 - Double(second - 60) * 15
        }
      return Location(
        coordinate: center.offset(by: distance, bearingDegrees: 90), horizontalAccuracy: 5,
        speed: second >= 20 && second < 40 || second >= 60 ? 15 : 0,
        timestamp: start.addingTimeInterval(Double(index)))
    }
  }

  @Test func pastTheBoundTheNewestAreKeptAndTheLostCounted() throws {
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("waymark.db"))
    let registry = try HeldMonitorRegistry(database: database)
    let circle = Monitor.CircularGeographicCondition(center: Self.center, radius: 50)
    #expect(
      try registry.add(
        [HeldMonitor.Condition(identifier: "spot", circle: circle, assumed: .unknown)],
        to: Self.key) == 1)
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    let locations = Self.locations(count: 48_000, from: start)

    // Not authorized: nothing evaluated, nothing queued.
    for location in locations.prefix(100) { #expect(try registry.process(location).isEmpty) }
    #expect(try registry.events(of: Self.key, after: 0).events.isEmpty)

    // Authorized: an event every 10 s, more than the bound.
    registry.authorize([Self.key.clientID])
    var total: Int64 = 0
    for location in locations.dropFirst(100) {
      let events = try registry.process(location)
      for event in events {
        total += 1
        #expect(event.sequence == total)
        #expect(event.key == Self.key)
      }
    }
    #expect(total > Int64(HeldMonitor.maximumEvents) + 100)

    // The app comes back with cursor 0: the newest 1,000, in order, and the count lost.
    var cursor: Int64 = 0
    var read: [HeldMonitor.Event] = []
    var lost: [Int64] = []
    while true {
      let page = try registry.events(of: Self.key, after: cursor)
      #expect(page.events.count <= HeldMonitor.pageSize)
      lost.append(page.lost)
      read += page.events
      cursor = page.events.last?.sequence ?? cursor
      if !page.more { break }
    }
    #expect(read.count == HeldMonitor.maximumEvents)
    #expect(read.first?.sequence == total - Int64(HeldMonitor.maximumEvents) + 1)
    #expect(read.last?.sequence == total)
    #expect(zip(read, read.dropFirst()).allSatisfy { $0.sequence + 1 == $1.sequence })
    #expect(zip(read, read.dropFirst()).allSatisfy { $0.date < $1.date })
    #expect(lost.first == total - Int64(HeldMonitor.maximumEvents))
    #expect(lost.dropFirst().allSatisfy { $0 == 0 })

    // Acknowledged up to the last: nothing left, nothing lost; a restart (a new registry on
    // the same file) numbers on from there.
    #expect(try registry.events(of: Self.key, after: cursor).events.isEmpty)
    let reopened = try HeldMonitorRegistry(database: try Database(path: database.path))
    reopened.authorize([Self.key.clientID])
    let next = locations.last!.timestamp
    var more: [HeldMonitor.Event] = []
    for location in Self.locations(count: 160, from: next.addingTimeInterval(1)) {
      more += try reopened.process(location)
    }
    #expect(more.first?.sequence == total + 1)
    let page = try reopened.events(of: Self.key, after: cursor)
    #expect(page.events.map(\.sequence) == more.map(\.sequence))
    #expect(page.lost == 0)
    #expect(page.next == total + Int64(more.count) + 1)
    var unknown = Self.key
    unknown.name = "none"
    #expect(try reopened.events(of: unknown, after: 7).next == 1)
  }

  /// The bounds on monitors and conditions, and an identical circle added again keeps its
  /// state (no write, no reset).
  @Test func boundsOnMonitorsAndConditions() throws {
    let directory = try TemporaryDirectory()
    let registry = try HeldMonitorRegistry(
      database: try Database(path: directory.file("waymark.db")))
    func circle(_ index: Int) -> HeldMonitor.Condition {
      HeldMonitor.Condition(
        identifier: "c\(index)",
        circle: Monitor.CircularGeographicCondition(center: Self.center, radius: 50),
        assumed: .unknown)
    }
    for index in 0..<HeldMonitor.maximumMonitorsPerApp {
      var key = Self.key
      key.name = "m\(index)"
      #expect(try registry.add([circle(0)], to: key) == 1)
    }
    var extra = Self.key
    extra.name = "one too many"
    #expect(throws: HeldMonitor.Refusal.self) { try registry.add([circle(0)], to: extra) }
    var key = Self.key
    key.name = "m0"
    #expect(try registry.add((1..<HeldMonitor.maximumConditions).map(circle), to: key) == 64)
    #expect(throws: HeldMonitor.Refusal.self) { try registry.add([circle(64)], to: key) }
    #expect(try registry.add([circle(3)], to: key) == 64)
    #expect(try registry.remove(["c3", "nothing"], from: key) == 63)
    try registry.delete(key)
    #expect(registry.count == HeldMonitor.maximumMonitorsPerApp - 1)
    #expect(try registry.add([circle(0)], to: extra) == 1)
  }
}
