import Foundation
import Testing
import WaymarkCore

@testable import WaymarkStore

@Suite("Repositories")
struct RepositoryTests {
  @Test("places: upsert updates fields but keeps the visit history")
  func upsertKeepsHistory() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("p.db"))
    var first = cafe
    first.created = time(0)
    #expect(try database.write { try PlaceRepository($0).upsert([first, office]) } == 2)
    try database.write { try PlaceRepository($0).markVisited(id: "cafe", adding: 2) }
    var renamed = cafe
    renamed.name = "Blue Bottle Mitte"
    renamed.radiusMeters = 80
    renamed.detection.confirmations = 4
    #expect(try database.write { try PlaceRepository($0).upsert([renamed]) } == 0)
    let stored = try #require(try database.read { try PlaceRepository($0).place(id: "cafe") })
    #expect(stored.name == "Blue Bottle Mitte")
    #expect(stored.radiusMeters == 80)
    #expect(stored.detection.confirmations == 4)
    #expect(stored.visited)
    #expect(stored.visitCount == 2)
    #expect(stored.created == time(0))
    #expect(try database.read { try PlaceRepository($0).all() }.map(\.id) == ["cafe", "office"])
    // The daemon's creation-time query: the places that have one (office has none).
    #expect(try database.read { try PlaceRepository($0).creationTimes() } == ["cafe": time(0)])
  }

  @Test("places: a group and its overlap rule survive the store (schema 6)")
  func groupsRoundTrip() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("g.db"))
    var shop = cafe
    shop.detection.group = "mall"
    shop.detection.overlap = .nearest
    var hall = office
    hall.detection.group = "mall"
    try database.write { _ = try PlaceRepository($0).upsert([shop, hall]) }
    let stored = try database.read { try PlaceRepository($0).all() }
    #expect(stored.first { $0.id == "cafe" }?.detection.group == "mall")
    #expect(stored.first { $0.id == "cafe" }?.detection.overlap == .nearest)
    #expect(stored.first { $0.id == "office" }?.detection.group == "mall")
    #expect(stored.first { $0.id == "office" }?.detection.overlap == nil)
    // An import that drops the group clears it.
    shop.detection.group = nil
    shop.detection.overlap = nil
    try database.write { _ = try PlaceRepository($0).upsert([shop]) }
    let cleared = try database.read { try PlaceRepository($0).place(id: "cafe") }
    #expect(cleared?.detection.group == nil && cleared?.detection.overlap == nil)
  }

  @Test("places: the nearest place whose circle contains a position")
  func nearestContaining() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("n.db"))
    let big = Place(
      id: "big", name: "Big", coordinate: cafe.coordinate.offset(by: 40, bearingDegrees: 0),
      radiusMeters: 500)
    try database.write { _ = try PlaceRepository($0).upsert([cafe, big, office]) }
    let near = cafe.coordinate.offset(by: 10, bearingDegrees: 180)
    #expect(try database.read { try PlaceRepository($0).nearestContaining(near) }?.id == "cafe")
    let outside = cafe.coordinate.offset(by: 100, bearingDegrees: 180)
    #expect(try database.read { try PlaceRepository($0).nearestContaining(outside) }?.id == "big")
    let far = Coordinate(latitude: 0, longitude: 0)
    #expect(try database.read { try PlaceRepository($0).nearestContaining(far) } == nil)
  }

  @Test("grants: get, save, replace, remove, all, reset through the GrantStore protocol")
  func grants() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store: any GrantStore = DatabaseGrantStore(
      database: try Database(path: directory.path("g.db")))
    #expect(try store.grant(for: "/usr/bin/app") == nil)
    let grant = Grant(
      clientID: "/usr/bin/app", level: .whenInUse, accuracy: .reduced, grantedAt: time(1.5))
    try store.save(grant)
    #expect(try store.grant(for: "/usr/bin/app") == grant)
    var upgraded = grant
    upgraded.level = .always
    upgraded.accuracy = .full
    try store.save(upgraded)
    try store.save(Grant(clientID: "a", level: .never, accuracy: .full, grantedAt: time(2)))
    #expect(try store.allGrants().map(\.clientID) == ["/usr/bin/app", "a"])
    #expect(try store.grant(for: "/usr/bin/app") == upgraded)
    #expect(try store.removeGrant(for: "a"))
    #expect(try !store.removeGrant(for: "a"))
    try store.removeAll()
    #expect(try store.allGrants().isEmpty)
  }

  @Test("a grant saved through one connection gives the same state through another")
  func grantsAcrossConnections() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let store = DatabaseGrantStore(database: try Database(path: directory.path("a.db")))
    try store.save(Grant(clientID: "app", level: .always, accuracy: .reduced, grantedAt: time(3)))
    // A second connection, as another process would have, sees the same record.
    let other = DatabaseGrantStore(database: try Database(path: directory.path("a.db")))
    #expect(
      try other.grant(for: "app")?.state
        == AuthorizationState(status: .authorizedAlways, accuracy: .reduced))
  }

  @Test("monitor state: opaque snapshots per place and the last fix")
  func monitorState() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("m.db"))
    try database.write { connection in
      _ = try PlaceRepository(connection).upsert([cafe, office])
      let states = MonitorStateRepository(connection)
      try states.save(
        placeID: "cafe", .init(snapshot: #"{"state":"inside"}"#, lastFixTime: time(5)))
      try states.save(
        placeID: "cafe", .init(snapshot: #"{"state":"outside"}"#, lastFixTime: time(6)))
      try states.save(placeID: "office", .init(snapshot: "opaque", lastFixTime: nil))
      try states.saveLastFix(
        .init(time: time(10), coordinate: cafe.coordinate, horizontalAccuracyMeters: 3, source: "a")
      )
      // An older fix does not replace a newer one.
      try states.saveLastFix(
        .init(
          time: time(9), coordinate: office.coordinate, horizontalAccuracyMeters: nil, source: nil))
    }
    let (all, last) = try database.read {
      (try MonitorStateRepository($0).all(), try MonitorStateRepository($0).lastFix())
    }
    #expect(all["cafe"] == .init(snapshot: #"{"state":"outside"}"#, lastFixTime: time(6)))
    #expect(all["office"]?.snapshot == "opaque")
    #expect(last?.time == time(10))
    #expect(last?.coordinate == cafe.coordinate)
    try database.write { try MonitorStateRepository($0).removeAll() }
    #expect(try database.read { try MonitorStateRepository($0).all() }.isEmpty)
  }

  @Test("events are unique on class, time and place; the reason must be JSON")
  func eventsUnique() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("e.db"))
    try database.write { _ = try PlaceRepository($0).upsert([cafe]) }
    let event = StoredEvent(arrival(cafe, at: 0))
    #expect(try database.write { try EventRepository($0).record(event) })
    #expect(try !database.write { try EventRepository($0).record(event) })
    var broken = StoredEvent(arrival(cafe, at: 1))
    broken.reasonJSON = "{not json"
    #expect(throws: StoreError.self) {
      try database.write { try EventRepository($0).record(broken) }
    }
    let events = try database.read { try EventRepository($0).all() }
    #expect(events == [event])
    #expect(
      events.first?.reasonJSON
        == #"{"rule":"inside","distance":12.5,"accuracy":4.0,"enterRadius":100.0,"#
        + #""exitRadius":150.0,"confirmations":3,"dwell":20.000}"#)
  }
}
