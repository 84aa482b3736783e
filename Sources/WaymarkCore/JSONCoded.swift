/// A value with one JSON form, written by ``json`` and read by ``init(json:)``, whose `Codable`
/// conformance is that same form.
///
/// Waymark keeps its own files and the store's states with `JSONLine` and `JSONObjectReader`
/// (keys sorted, numbers that read back bit for bit, errors that name the member). A public type
/// that is also `Codable` gets its `encode(to:)` and `init(from:)` from here: the JSON form goes
/// through the encoder or decoder as a tree of objects, arrays, numbers, strings, Booleans and
/// nulls, so that any encoder (`JSONEncoder`, a property list) writes the same members, and there
/// is one codec per type, not two that could drift apart.
package protocol JSONCoded: Codable {
  /// The value as one JSON object.
  var json: JSONLine { get }
  /// Reads ``json``.
  init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch)
}

extension JSONCoded {
  /// Decodes the value from its JSON form; a member that does not match is a
  /// `DecodingError.dataCorrupted` whose description names it and what was expected.
  public init(from decoder: any Decoder) throws {
    let value = try JSONValue(from: decoder)
    do {
      try self.init(json: JSONObjectReader(value))
    } catch {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(codingPath: decoder.codingPath, debugDescription: "\(error)"))
    }
  }

  /// Encodes the value's JSON form; one holding an infinite or NaN number (JSON has none) is
  /// an `EncodingError.invalidValue`.
  public func encode(to encoder: any Encoder) throws {
    let line = json
    guard !line.hasNonFiniteNumber else {
      throw EncodingError.invalidValue(
        self,
        EncodingError.Context(
          codingPath: encoder.codingPath, debugDescription: "an infinite or NaN number"))
    }
    var reader = JSONReader(line.closed)
    try reader.value().encode(to: encoder)
  }
}
