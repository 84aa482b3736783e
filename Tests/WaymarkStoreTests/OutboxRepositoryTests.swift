import Foundation
import Testing
import WaymarkCore

@testable import WaymarkStore

@Suite("Outbox")
struct OutboxRepositoryTests {
  private func message(_ kind: OutboxMessage.Kind, _ text: String) -> OutboxMessage {
    OutboxMessage(kind: kind, topic: "t", payload: text, qos: 1)
  }

  @Test("past the maximum the oldest locations go before any transition; ids only grow")
  func boundedAndMonotonic() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("o.db"))
    try database.write { connection in
      let outbox = OutboxRepository(connection)
      try outbox.enqueue(
        [message(.transition, "enter"), message(.location, "l1"), message(.location, "l2")],
        now: time(0), maximum: 3)
      // Three more make 6: the three oldest locations go to get back to 3 (transitions stay).
      let dropped = try outbox.enqueue(
        [message(.location, "l3"), message(.transition, "leave"), message(.location, "l4")],
        now: time(1), maximum: 3)
      #expect(dropped == 3)
    }
    let left = try database.read { try OutboxRepository($0).next(after: 0, limit: 10) }
    #expect(left.map(\.payload) == ["enter", "leave", "l4"])
    // Acknowledged ids leave by ranges; a new row never reuses an id.
    try database.write { try OutboxRepository($0).remove(left.map(\.id)) }
    #expect(try database.read { try OutboxRepository($0).isEmpty() })
    try database.write {
      try OutboxRepository($0).enqueue([message(.location, "l5")], now: time(2))
    }
    let next = try database.read { try OutboxRepository($0).next(after: 0, limit: 10) }
    #expect(next.map(\.payload) == ["l5"])
    #expect(next[0].id > left.map(\.id).max()!)
  }

  @Test("past the maximum with no location left, the oldest transitions go")
  func transitionsGoWhenNoLocationIsLeft() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("o.db"))
    let dropped = try database.write {
      try OutboxRepository($0).enqueue(
        [message(.location, "l0")] + (0..<5).map { message(.transition, "t\($0)") }, now: time(0),
        maximum: 2)
    }
    #expect(dropped == 4)
    let left = try database.read { try OutboxRepository($0).next(after: 0, limit: 10) }
    #expect(left.map(\.payload) == ["t3", "t4"])
  }

  @Test("a waypoints message replaces the one waiting for its topic, and is never dropped")
  func waypointsKeepOnlyTheNewestPerTopic() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let database = try Database(path: directory.path("o.db"))
    func waypoints(_ topic: String, _ text: String) -> OutboxMessage {
      OutboxMessage(kind: .waypoints, topic: topic, payload: text, qos: 1, retain: true)
    }
    // A broker that never acknowledges sends 1,000 setWaypoints: one message waits per topic.
    for index in 0..<1000 {
      try database.write {
        try OutboxRepository($0).enqueue(
          [waypoints("a/waypoints", "w\(index)"), message(.transition, "t\(index)")],
          now: time(Double(index)), maximum: 100)
      }
    }
    try database.write {
      try OutboxRepository($0).enqueue([waypoints("b/waypoints", "other")], now: time(1000))
    }
    let left = try database.read { try OutboxRepository($0).next(after: 0, limit: 2000) }
    // 100 (the maximum: w999 and the 99 newest transitions), then "other" with no maximum.
    #expect(left.count == 101)
    #expect(left.filter { $0.kind == .waypoints }.map(\.payload) == ["w999", "other"])
    #expect(left.filter { $0.kind == .transition }.first?.payload == "t901")
  }
}

@Suite("Outbox, version 11")
struct OutboxVersionElevenTests {
  @Test("version 11 keeps the waiting messages and their ids, and takes Home Assistant's kind")
  func upgradeKeepsTheRowsAndTakesTheNewKind() throws {
    let directory = try TemporaryDirectory()
    defer { directory.remove() }
    let path = directory.path("o.db")
    let before = Array(Schema.migrations.prefix { $0.version < 11 })
    do {
      let old = try Database(path: path, migrations: before)
      try old.write {
        try OutboxRepository($0).enqueue(
          [OutboxMessage(kind: .transition, topic: "t/event", payload: "enter", qos: 2)],
          now: time(0))
      }
      // Before version 11 the table refuses the new kind (its CHECK).
      #expect(throws: StoreError.self) {
        try old.write {
          try OutboxRepository($0).enqueue(
            [OutboxMessage(kind: .homeAssistant, topic: "h", payload: "", qos: 1, retain: true)],
            now: time(1))
        }
      }
    }
    let database = try Database(path: path)
    let kept = try database.read { try OutboxRepository($0).next(after: 0, limit: 10) }
    #expect(kept.map(\.payload) == ["enter"])
    func state(_ text: String) -> OutboxMessage {
      OutboxMessage(kind: .homeAssistant, topic: "t/state", payload: text, qos: 1, retain: true)
    }
    try database.write {
      try OutboxRepository($0).enqueue([state("s1"), state("s2")], now: time(2))
      try RetainedTopicRepository($0).record(["t/state", "h/c"], integration: "homeassistant")
      try RetainedTopicRepository($0).record(["t/state"], integration: "homeassistant")
    }
    let rows = try database.read { try OutboxRepository($0).next(after: 0, limit: 10) }
    // The newest state replaced the waiting one; the transition kept its id; ids only grow.
    #expect(rows.map(\.payload) == ["enter", "s2"])
    #expect(rows[0].id == kept[0].id && rows[1].id > rows[0].id)
    #expect(rows[1].retain && rows[1].kind == .homeAssistant)
    let topics = try database.read {
      try RetainedTopicRepository($0).topics(integration: "homeassistant")
    }
    #expect(topics == ["h/c", "t/state"])
    try database.write { try RetainedTopicRepository($0).forget(integration: "homeassistant") }
    #expect(
      try database.read { try RetainedTopicRepository($0).topics(integration: "homeassistant") }
        .isEmpty)
  }
}
