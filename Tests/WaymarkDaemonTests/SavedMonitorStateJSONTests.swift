import Foundation
import Testing
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkDaemon
import WaymarkPipeline
import WaymarkStore

/// The place monitor's states in the store (`SavedMonitorState`) and a held monitor's state
/// (`HeldMonitorRegistry`) are written with `JSONLine` and read with `JSONObjectReader`; what the
/// code before them wrote (`JSONEncoder`, in `Tests/Fixtures/saved-state`) loads into the same
/// states.
@Suite struct SavedMonitorStateJSONTests {
  static let fixture = DaemonSavedStateFixture.self

  /// The fixture's rows: place id and stored text.
  static func storedEntries() throws -> [String: MonitorStateRepository.Entry] {
    let text = try String(
      contentsOf: fixture.directory.appendingPathComponent("saved-monitor-state.tsv"),
      encoding: .utf8)
    var entries: [String: MonitorStateRepository.Entry] = [:]
    for line in text.split(separator: "\n") {
      let fields = line.split(separator: "\t", maxSplits: 1)
      entries[String(fields[0])] = .init(snapshot: String(fields[1]), lastFixTime: nil)
    }
    return entries
  }

  static var expectedPlaces: [String: PlaceMonitor.State] {
    var places = fixture.places
    places["p-gone"] = .outside
    return places
  }

  @Test func theStatesOfTheCodeBeforeLoadTheSame() throws {
    let entries = try Self.storedEntries()
    #expect(entries.count == 4)
    var unreadable: [String] = []
    let snapshot = SavedMonitorState.snapshot(
      entries: entries, lastFix: nil, assumedAccuracyMeters: 25
    ) { unreadable.append($0) }
    #expect(unreadable.isEmpty)
    #expect(Set(snapshot.places.keys) == Set(Self.expectedPlaces.keys))
    for (id, state) in Self.expectedPlaces {
      #expect(snapshot.places[id] == state, "\(id)")
      #expect(
        snapshot.places[id]?.stay?.arrival.timeIntervalSinceReferenceDate.bitPattern
          == state.stay?.arrival.timeIntervalSinceReferenceDate.bitPattern)
    }
    // Positive control: Foundation's decoder reads the fixture the same.
    for (id, entry) in entries {
      let decoded = try JSONDecoder().decode(
        PlaceMonitor.State.self, from: Data(entry.snapshot.utf8))
      #expect(decoded == Self.expectedPlaces[id], "\(id)")
    }
  }

  /// Written now, each text equals the old one (sorted keys, the same numbers), and reads back.
  @Test func theNewTextsEqualTheOldAndRoundTrip() throws {
    let old = try Self.storedEntries()
    let new = SavedMonitorState.entries(
      current: Self.fixture.places, previouslySaved: Self.fixture.previouslySaved)
    #expect(new == old.mapValues(\.snapshot))
    var unreadable: [String] = []
    let snapshot = SavedMonitorState.snapshot(
      entries: new.mapValues { .init(snapshot: $0, lastFixTime: nil) }, lastFix: nil,
      assumedAccuracyMeters: 25
    ) { unreadable.append($0) }
    #expect(unreadable.isEmpty)
    #expect(snapshot.places == Self.expectedPlaces)
  }

  /// A text cut short or with a wrong type is reported by its place id, which starts outside;
  /// the others load.
  @Test func aBadTextIsReportedAndTheOthersLoad() throws {
    var entries = try Self.storedEntries()
    let inside = try #require(entries["p-inside"]?.snapshot)
    for length in stride(from: 0, to: inside.utf8.count - 1, by: 5) {
      entries["p-inside"] = .init(
        snapshot: String(decoding: inside.utf8.prefix(length), as: UTF8.self), lastFixTime: nil)
      var unreadable: [String] = []
      let snapshot = SavedMonitorState.snapshot(
        entries: entries, lastFix: nil, assumedAccuracyMeters: 25
      ) { unreadable.append($0) }
      #expect(unreadable == ["p-inside"], "cut at \(length)")
      #expect(snapshot.places["p-inside"] == nil)
      #expect(snapshot.places["p-departing"] == Self.expectedPlaces["p-departing"])
    }
    entries["p-inside"] = .init(
      snapshot: inside.replacingOccurrences(of: #""fixCount":600"#, with: #""fixCount":"600""#),
      lastFixTime: nil)
    var unreadable: [String] = []
    _ = SavedMonitorState.snapshot(entries: entries, lastFix: nil, assumedAccuracyMeters: 25) {
      unreadable.append($0)
    }
    #expect(unreadable == ["p-inside"])
    #expect(throws: JSONObjectReader.Mismatch(path: "inside._0.fixCount", expected: "an integer")) {
      try PlaceMonitor.State(jsonText: entries["p-inside"]!.snapshot)
    }
  }

  /// The held monitor's state as the registry computed it: the fixture's conditions and
  /// locations through a `MonitorState`.
  static var heldState: MonitorState {
    var state = MonitorState(configuration: PlaceMonitor.Configuration())
    for condition in fixture.conditions {
      state.add(condition.circle, identifier: condition.identifier, assuming: condition.assumed)
    }
    for location in fixture.locations { _ = state.process(location) }
    state.add(
      fixture.late.circle, identifier: fixture.late.identifier, assuming: fixture.late.assumed)
    return state
  }

  @Test func theHeldStateOfTheCodeBeforeLoadsTheSame() throws {
    let text = try String(
      contentsOf: Self.fixture.directory.appendingPathComponent("held-monitor.json"),
      encoding: .utf8)
    let expected = Self.heldState.saved
    let loaded = try MonitorState.Saved(jsonText: Array(text.utf8))
    #expect(loaded.version == expected.version)
    #expect(loaded.cursor == nil)
    #expect(loaded.entries == expected.entries)
    #expect(loaded.engine == expected.engine)
    #expect(Set(loaded.entries.map(\.lastEvent.state)) == [.satisfied, .unsatisfied])
    // Positive control: Foundation's decoder reads the same.
    let decoded = try JSONDecoder().decode(MonitorState.Saved.self, from: Data(text.utf8))
    #expect(decoded.entries == expected.entries && decoded.engine == expected.engine)

    // The registry loads it from the store and goes on as the state does.
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("waymark.db"))
    _ = try database.write {
      try HeldMonitorRepository($0).create(
        uid: Self.fixture.key.uid, clientID: Self.fixture.key.clientID,
        name: Self.fixture.key.name, state: text)
    }
    var unreadable: [HeldMonitor.Key] = []
    let registry = try HeldMonitorRegistry(database: database) { unreadable.append($0) }
    #expect(unreadable.isEmpty)
    #expect(registry.count == 1)
    registry.authorize([Self.fixture.key.clientID])
    var state = Self.heldState
    var expectedEvents: [String] = []
    var events: [String] = []
    let next = HeldMonitorRegistryTests.locations(
      count: 200, from: Self.fixture.locations.last!.timestamp.addingTimeInterval(1))
    for location in next {
      expectedEvents += state.process(location).map { "\($0.identifier) \($0.state) \($0.date)" }
      events += try registry.process(location).map { "\($0.identifier) \($0.state) \($0.date)" }
    }
    #expect(!events.isEmpty)
    #expect(events == expectedEvents)

    // Its state, saved again by the new writer (an added condition saves it), reads back the
    // same.
    let extra = HeldMonitor.Condition(
      identifier: "extra",
      circle: Monitor.CircularGeographicCondition(center: Self.fixture.center, radius: 70),
      assumed: .unknown)
    _ = try registry.add([extra], to: Self.fixture.key)
    state.add(extra.circle, identifier: extra.identifier, assuming: extra.assumed)
    let rows = try database.read { try HeldMonitorRepository($0).all() }
    let resaved = try MonitorState.Saved(jsonText: Array(rows[0].state.utf8))
    #expect(resaved.entries == state.saved.entries)
    #expect(resaved.engine == state.saved.engine)
  }

  /// A held monitor whose state is mistyped (the store takes only valid JSON) is left out and
  /// reported; the others load.
  @Test func aBadHeldStateIsReported() throws {
    let text = try String(
      contentsOf: Self.fixture.directory.appendingPathComponent("held-monitor.json"),
      encoding: .utf8)
    let directory = try TemporaryDirectory()
    let database = try Database(path: directory.file("waymark.db"))
    var bad = Self.fixture.key
    bad.name = "bad"
    _ = try database.write {
      let repository = HeldMonitorRepository($0)
      _ = try repository.create(
        uid: bad.uid, clientID: bad.clientID, name: bad.name,
        state: text.replacingOccurrences(of: #""radius":50"#, with: #""radius":"50""#))
      return try repository.create(
        uid: Self.fixture.key.uid, clientID: Self.fixture.key.clientID,
        name: Self.fixture.key.name, state: text)
    }
    var unreadable: [HeldMonitor.Key] = []
    let registry = try HeldMonitorRegistry(database: database) { unreadable.append($0) }
    #expect(unreadable == [bad])
    #expect(registry.count == 1)
    #expect(throws: JSONObjectReader.Mismatch.self) {
      try MonitorState.Saved(
        jsonText: Array(
          text.replacingOccurrences(of: #""radius":50"#, with: #""radius":null"#).utf8))
    }
  }
}
