import Foundation
import Testing
import WaymarkCore

/// The grants file is written with `JSONLine` and read with `JSONObjectReader`; the file the code
/// before them wrote (`JSONEncoder`, `Tests/Fixtures/saved-state/grants.json`) reads into the
/// same grants.
@Suite struct GrantsFileJSONTests {
  static let fixture = URL(fileURLWithPath: #filePath)
    .deletingLastPathComponent().deletingLastPathComponent()
    .appendingPathComponent("Fixtures/saved-state/grants.json")

  static let at = Date(timeIntervalSince1970: 1_796_000_000)
  /// What the fixture holds.
  static let grants = [
    Grant(clientID: "org.example.app", level: .whenInUse, accuracy: .full, grantedAt: at),
    Grant(
      clientID: "/usr/bin/alice-tool", level: .always, accuracy: .reduced,
      grantedAt: at.addingTimeInterval(0.123)),
    Grant(
      clientID: "com.example.\u{E9}t\u{E9}", level: .whenInUse, accuracy: .reduced,
      grantedAt: at.addingTimeInterval(86_400.999)),
    Grant(
      clientID: "Zed \"quoted\"", level: .never, accuracy: .full,
      grantedAt: Date(timeIntervalSince1970: 0)),
    Grant(
      clientID: "alice:/usr/bin/app", level: .always, accuracy: .full,
      grantedAt: at.addingTimeInterval(-0.5)),
  ]

  static func milliseconds(_ date: Date) -> Int64 {
    Int64((date.timeIntervalSince1970 * 1000).rounded())
  }

  /// The grants with their times to the millisecond, by client.
  static func summary(_ grants: some Sequence<Grant>) -> [String: String] {
    Dictionary(
      uniqueKeysWithValues: grants.map {
        ($0.clientID, "\($0.level) \($0.accuracy) \(milliseconds($0.grantedAt))")
      })
  }

  @Test func theFileOfTheCodeBeforeReadsIntoTheSameGrants() throws {
    let data = try Data(contentsOf: Self.fixture)
    let read = try FileGrantStore.decode(data, path: Self.fixture.path)
    #expect(read.count == Self.grants.count)
    for grant in Self.grants {
      let copy = try #require(read[grant.clientID], "\(grant.clientID)")
      #expect(copy.clientID == grant.clientID)
      #expect(copy.level == grant.level)
      #expect(copy.accuracy == grant.accuracy)
      // The file holds milliseconds.
      #expect(Self.milliseconds(copy.grantedAt) == Self.milliseconds(grant.grantedAt))
    }
    // Positive control, read independently: five records, sorted by client.
    let object = try #require(try JSONSerialization.jsonObject(with: data) as? [String: Any])
    let records = try #require(object["grants"] as? [[String: Any]])
    #expect(records.compactMap { $0["client"] as? String } == Self.grants.map(\.clientID).sorted())
  }

  /// Written again, the file equals the old one but for `JSONEncoder`'s `\/` (the same JSON
  /// string); read back, the same grants.
  @Test func writingAgainGivesTheSameFileButForEscapedSlashes() throws {
    let old = try String(contentsOf: Self.fixture, encoding: .utf8)
    let written = FileGrantStore.encode(Self.grants)
    #expect(
      String(decoding: written, as: UTF8.self) == old.replacingOccurrences(of: #"\/"#, with: "/"))
    #expect(old.contains(#"\/"#))
    let read = try FileGrantStore.decode(written, path: "grants.json")
    #expect(Self.summary(read.values) == Self.summary(Self.grants))
    #expect(FileGrantStore.encode(read.values) == written)
  }

  /// A file cut anywhere, or with a member of the wrong type, is `corrupt`, naming the file
  /// and what was expected where.
  @Test func aTruncatedOrMistypedFileIsCorrupt() throws {
    let whole = try Data(contentsOf: Self.fixture)
    let path = "/state/grants.json"
    func reason(_ data: Data) -> String? {
      do {
        _ = try FileGrantStore.decode(data, path: path)
        return nil
      } catch {
        guard case .corrupt(path, let reason) = error else { return "wrong error \(error)" }
        return reason
      }
    }
    #expect(reason(whole) == nil)  // Positive control.
    for length in 0..<whole.count - 1 {
      let text = reason(whole.prefix(length))
      #expect(text?.contains("expected") == true, "cut at \(length): \(text ?? "read")")
    }
    let old = String(decoding: whole, as: UTF8.self)
    let mistyped: [(String, String, String)] = [
      (#""level":"always""#, #""level":3"#, "grants[0].level: expected a string"),
      (#""version":1"#, #""version":true"#, "version: expected an integer"),
      (#""grants":["#, #""grants":"x","y":["#, "grants: expected an array"),
      (#""client":"Zed"#, #""clientID":"Zed"#, "grants[1].client: expected a string"),
    ]
    for (original, replacement, expected) in mistyped {
      #expect(old.contains(original), "\(original)")
      let text = reason(Data(old.replacingOccurrences(of: original, with: replacement).utf8))
      #expect(text == expected, "\(replacement): \(text ?? "read")")
    }
    #expect(reason(Data(#"{"version":2,"grants":[]}"#.utf8)) == "unknown version 2")
    #expect(
      reason(Data(old.replacingOccurrences(of: #""level":"never""#, with: #""level":"nope""#).utf8))
        == "grant 1 is invalid")
  }
}
