import FoundationEssentials

// A grant as the grants file keeps it, and its `Codable` form: the client, the level and the
// accuracy by name, the time in UTC to the millisecond.

extension Grant: JSONCoded {
  /// `{"accuracy":"full","client":"org.example.app","grantedAt":"2026-11-29T12:00:07.000Z",
  /// "level":"whenInUse"}`: keys sorted, the time to the millisecond.
  package var json: JSONLine {
    var record = JSONLine()
    record.add("accuracy", accuracy.rawValue)
    record.add("client", clientID)
    record.add("grantedAt", Timestamp.format(grantedAt))
    record.add("level", level.rawValue)
    return record
  }

  /// Reads ``json``; throws when a member is missing or not a string, and when a value is one no
  /// grant has (see ``record(json:)``).
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    guard let grant = try Self.record(json: object) else {
      throw JSONObjectReader.Mismatch(
        path: object.path,
        expected:
          "a grant: a client that is not empty, a level ("
          + GrantLevel.allCases.map(\.rawValue).joined(separator: ", ") + "), an accuracy ("
          + AccuracyAuthorization.allCases.map(\.rawValue).joined(separator: ", ")
          + ") and a time such as 2026-11-29T12:00:07.000Z")
    }
    self = grant
  }

  /// Reads ``json``: throws when a member is missing or not a string; `nil` when the strings are
  /// no grant (an unknown level or accuracy, a time that does not parse, an empty client).
  package static func record(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch)
    -> Grant?
  {
    let client = try object.string("client")
    let level = try object.string("level")
    let accuracy = try object.string("accuracy")
    let time = try object.string("grantedAt")
    guard let level = GrantLevel(rawValue: level),
      let accuracy = AccuracyAuthorization(rawValue: accuracy),
      let date = Timestamp.parse(time), !client.isEmpty
    else { return nil }
    return Grant(clientID: client, level: level, accuracy: accuracy, grantedAt: date)
  }
}
