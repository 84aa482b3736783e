import Foundation
import Testing
import WaymarkCore

@testable import Waymark

/// A monitor's file is written with `JSONLine` and read with `JSONObjectReader`; the file the
/// code before them wrote (`JSONEncoder`, `Tests/Fixtures/saved-state/monitor.json`) loads into
/// the same state, field by field and bit for bit.
@Suite struct MonitorStateJSONTests {
  static let fixture = MonitorSavedFixture.directory.appendingPathComponent("monitor.json")

  /// `actual` equals `expected` in every field, times and numbers bit for bit.
  static func expectSame(_ actual: MonitorState.Saved, _ expected: MonitorState.Saved) {
    #expect(actual.version == expected.version)
    #expect(actual.cursor == expected.cursor)
    #expect(actual.entries.count == expected.entries.count)
    for (got, want) in zip(actual.entries, expected.entries) {
      #expect(got.identifier == want.identifier)
      #expect(got.condition == want.condition)
      #expect(got.condition.radius.bitPattern == want.condition.radius.bitPattern)
      #expect(got.lastEvent == want.lastEvent)
      #expect(
        got.lastEvent.date.timeIntervalSinceReferenceDate.bitPattern
          == want.lastEvent.date.timeIntervalSinceReferenceDate.bitPattern)
      #expect(got.awaitsAnchor == want.awaitsAnchor)
    }
    #expect(actual.engine.previous == expected.engine.previous)
    #expect(
      actual.engine.previous?.time.timeIntervalSinceReferenceDate.bitPattern
        == expected.engine.previous?.time.timeIntervalSinceReferenceDate.bitPattern)
    #expect(Set(actual.engine.places.keys) == Set(expected.engine.places.keys))
    for (id, state) in expected.engine.places {
      #expect(actual.engine.places[id] == state, "\(id.debugDescription)")
    }
    #expect(actual.engine.suspects == expected.engine.suspects)
    #expect(actual.engine == expected.engine)
  }

  /// A copy of `monitor.json` in a new directory, under `name`.
  static func copyOfFixture(as name: String = "monitor") throws -> URL {
    let directory = temporaryDirectory()
    try FileManager.default.copyItem(
      at: fixture, to: directory.appendingPathComponent("\(name).json"))
    return directory
  }

  @Test func theFileOfTheCodeBeforeLoadsIntoTheSameState() throws {
    let directory = try Self.copyOfFixture()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try MonitorStore(name: "monitor", directory: directory)
    let loaded = try #require(try store.load())
    Self.expectSame(loaded, MonitorSavedFixture.saved)
    // Read through `JSONDecoder` (the types' `Codable` conformance, the same form): equal too.
    let decoded = try JSONDecoder().decode(
      MonitorState.Saved.self, from: Data(contentsOf: Self.fixture))
    Self.expectSame(decoded, MonitorSavedFixture.saved)
  }

  /// The new writer's file equals the old one byte for byte but for one escape: `JSONEncoder`
  /// wrote `/` as `\/`, `JSONLine` writes it as it is (the same JSON string).
  @Test func theNewFileEqualsTheOldButForEscapedSlashes() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try MonitorStore(name: "monitor", directory: directory)
    try store.save(MonitorSavedFixture.saved)
    let written = try String(contentsOf: store.fileURL, encoding: .utf8)
    let old = try String(contentsOf: Self.fixture, encoding: .utf8)
    #expect(old.contains(#"\/"#))
    #expect(written == old.replacingOccurrences(of: #"\/"#, with: "/"))
    Self.expectSame(try #require(try store.load()), MonitorSavedFixture.saved)
  }

  /// States met on a real drive, after every fix: written and read back equal; the types'
  /// `Codable` conformance is the same form (`JSONEncoder` with sorted keys and unescaped slashes
  /// writes the same bytes, and what it writes in its default order reads equal too).
  @Test func statesOfADriveRoundTrip() throws {
    var state = MonitorState(configuration: PlaceMonitor.Configuration())
    state.add(MonitorDrive.homeCircle, identifier: "home", assuming: .satisfied)
    state.add(MonitorDrive.officeCircle, identifier: "office", assuming: .unknown)
    var checked = 0
    var kinds = Set<String>()
    for (index, fix) in MonitorDrive.fixes.enumerated() {
      guard let location = Location(fix) else { continue }
      _ = state.process(location)
      var saved = state.saved
      saved.cursor = Int64(index)
      let line = saved.json
      #expect(!line.hasNonFiniteNumber)
      Self.expectSame(try MonitorState.Saved(jsonText: line.closed), saved)
      let encoder = JSONEncoder()
      encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
      #expect(Array(try encoder.encode(saved)) == line.closed)
      Self.expectSame(
        try JSONDecoder().decode(MonitorState.Saved.self, from: Data(line.closed)), saved)
      Self.expectSame(try MonitorState.Saved(jsonText: Array(JSONEncoder().encode(saved))), saved)
      for place in saved.engine.places.values {
        switch place {
        case .outside: kinds.insert("outside")
        case .arriving: kinds.insert("arriving")
        case .inside: kinds.insert("inside")
        case .departing: kinds.insert("departing")
        }
      }
      checked += 1
    }
    #expect(checked > 1000)
    #expect(kinds.isSuperset(of: ["arriving", "inside", "departing"]), "\(kinds)")
  }

  /// A file cut anywhere, or with a member of the wrong type, is `corrupt` with a reason that
  /// says what was expected where; the file is left as it was.
  @Test func aTruncatedOrMistypedFileIsCorrupt() throws {
    let whole = try Data(contentsOf: Self.fixture)
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try MonitorStore(name: "monitor", directory: directory)
    func reason(_ bytes: Data) -> String? {
      try? bytes.write(to: store.fileURL)
      do {
        _ = try store.load()
        return nil
      } catch {
        guard case .corrupt(let path, let reason) = error, path == store.fileURL.path else {
          return "wrong error \(error)"
        }
        return reason
      }
    }
    // Positive control: the whole file loads.
    #expect(reason(whole) == nil)
    for length in stride(from: 0, to: whole.count - 1, by: 7) {
      let text = reason(whole.prefix(length))
      #expect(text?.contains("expected") == true, "cut at \(length): \(text ?? "loaded")")
    }
    let old = String(decoding: whole, as: UTF8.self)
    let mistyped: [(String, String, String)] = [
      (#""radius":100}"#, #""radius":"100"}"#, "entries[0].condition.radius: expected a number"),
      (#""version":1"#, #""version":"1""#, "version: expected an integer"),
      (#""fixCount":3599"#, #""fixCount":3599.5"#, "expected an integer"),
      (
        #""awaitsAnchor":true"#, #""awaitsAnchor":1"#,
        "entries[3].awaitsAnchor: expected true or false"
      ),
      (#""state":"unknown""#, #""state":"maybe""#, "entries[4].lastEvent.state: expected unknown"),
      (#""overlap":"nearest""#, #""overlap":"near""#, "overlap: expected all or nearest"),
      (#""inside":{"#, #""inside":[],"x":{"#, #"engine.places["home"]: expected one member"#),
    ]
    for (original, replacement, expected) in mistyped {
      #expect(old.contains(original), "\(original)")
      let text = reason(Data(old.replacingOccurrences(of: original, with: replacement).utf8))
      #expect(text?.contains(expected) == true, "\(replacement): \(text ?? "loaded")")
    }
    #expect(reason(Data(#"{"version":2,"entries":[]}"#.utf8)) == "unknown version 2")
    #expect(reason(Data((old + "x").utf8)) == "byte \(whole.count): expected the end of the text")
  }

  /// A condition whose radius is not a number JSON can hold is not saved: the save fails, as
  /// it did with `JSONEncoder`.
  @Test func aNonFiniteNumberIsNotSaved() throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let store = try MonitorStore(name: "monitor", directory: directory)
    var saved = MonitorSavedFixture.saved
    try store.save(saved)  // Positive control.
    saved.entries[0].condition.radius = .nan
    #expect(throws: MonitorError.self) { try store.save(saved) }
    Self.expectSame(try #require(try store.load()), MonitorSavedFixture.saved)
  }
}
