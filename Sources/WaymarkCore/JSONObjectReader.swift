/// Reads JSON objects member by member: the one object reader of every JSON format Waymark reads.
///
/// It reads a monitor's saved state, the grants file, the monitor states in the store (the
/// files ``JSONLine`` writes), the location socket's messages (`Members`), the features of a
/// GeoJSON places file (`PlaceCollection`), the NDJSON of `waymark replay` that
/// `waymark visits record` reads back and OwnTracks' `setWaypoints` commands. (The import's
/// streamed formats read values, not objects: `JSONValue`'s own readings.)
///
/// Each accessor returns a member of the type it names or throws a ``Mismatch`` saying where
/// and what was expected (`entries[2].condition.radius: expected a number`). Members nobody
/// asks for are ignored; an optional member may be absent or `null`; a repeated member counts
/// by its last occurrence (as ``JSONValue``'s subscript). The `lenient` accessors never throw:
/// a member of another type reads as absent, for formats whose readers skip what they cannot
/// use.
package struct JSONObjectReader {
  /// What was expected where, in a file that is JSON but not the expected one (or not JSON).
  package struct Mismatch: Error, Sendable, Hashable, CustomStringConvertible {
    /// Where: members and indexes from the top (`engine.places["home"].inside._0`), or the byte
    /// offset of a syntax error; empty for the top level.
    package var path: String
    /// What was expected there (`a number`, `an object`, `valid JSON (unterminated string)`).
    package var expected: String

    /// A mismatch at `path`.
    package init(path: String, expected: String) {
      self.path = path
      self.expected = expected
    }

    package var description: String {
      path.isEmpty ? "expected \(expected)" : "\(path): expected \(expected)"
    }
  }

  /// Where this object is, from the top of the document.
  package let path: String
  private let value: JSONValue

  /// The object itself, as parsed (to write it back out).
  package var json: JSONValue { value }

  /// Reads `value`, which must be an object.
  package init(_ value: JSONValue, path: String = "") throws(Mismatch) {
    guard case .object = value else { throw Mismatch(path: path, expected: "an object") }
    self.value = value
    self.path = path
  }

  /// Parses `bytes`: one JSON object, with nothing but whitespace around it.
  package init(parsing bytes: [UInt8]) throws(Mismatch) {
    var reader = JSONReader(bytes)
    let value: JSONValue
    do {
      value = try reader.value()
    } catch {
      throw Mismatch(path: "byte \(error.offset)", expected: "valid JSON (\(error.reason))")
    }
    reader.skipWhitespace()
    guard reader.isAtEnd else {
      throw Mismatch(path: "byte \(reader.offset)", expected: "the end of the text")
    }
    try self.init(value)
  }

  /// An object with no members at `path`: what an absent optional object reads as.
  package static func empty(at path: String = "") -> JSONObjectReader {
    JSONObjectReader(members: .object([]), path: path)
  }

  private init(members: JSONValue, path: String) {
    self.value = members
    self.path = path
  }

  /// The names of the members, in order.
  package var keys: [String] {
    guard case .object(let members) = value else { return [] }
    return members.map(\.key)
  }

  /// The members as objects, in order (repeated names once, by their last value): for an
  /// object keyed by data (place ids).
  package func objectMembers() throws(Mismatch) -> [(key: String, value: JSONObjectReader)] {
    guard case .object(let members) = value else { return [] }
    var seen = Set<String>()
    var objects: [(key: String, value: JSONObjectReader)] = []
    for (key, _) in members.reversed() where seen.insert(key).inserted {
      let named = "\(path)[\"\(LogText.escaped(key))\"]"
      objects.append((key, try JSONObjectReader(value[key] ?? .null, path: named)))
    }
    return objects.reversed()
  }

  /// The path of the member `key`.
  package func child(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

  /// The member `key`; `nil` when it is absent or `null`.
  package func optional(_ key: String) -> JSONValue? {
    guard let member = value[key] else { return nil }
    if case .null = member { return nil }
    return member
  }

  /// The member `key` as `extract` reads it; throws when it is absent, `null`, or not what
  /// `extract` takes (`expected` says what it takes).
  private func member<T>(_ key: String, _ expected: String, _ extract: (JSONValue) -> T?)
    throws(Mismatch) -> T
  {
    guard let value = try optionalMember(key, expected, extract) else {
      throw Mismatch(path: child(key), expected: expected)
    }
    return value
  }

  /// The member `key` as `extract` reads it, `nil` when absent or `null`; throws when it is
  /// not what `extract` takes. One lookup of the member.
  private func optionalMember<T>(_ key: String, _ expected: String, _ extract: (JSONValue) -> T?)
    throws(Mismatch) -> T?
  {
    guard let member = optional(key) else { return nil }
    guard let value = extract(member) else {
      throw Mismatch(path: child(key), expected: expected)
    }
    return value
  }

  private static func text(_ value: JSONValue) -> String? {
    if case .string(let text) = value { text } else { nil }
  }

  private static func number(_ value: JSONValue) -> Double? {
    if case .number(let number) = value { number } else { nil }
  }

  private static func flag(_ value: JSONValue) -> Bool? {
    if case .bool(let flag) = value { flag } else { nil }
  }

  /// The string member `key`.
  package func string(_ key: String) throws(Mismatch) -> String {
    try member(key, "a string", Self.text)
  }

  /// The string member `key`, `nil` when absent or `null`.
  package func optionalString(_ key: String) throws(Mismatch) -> String? {
    try optionalMember(key, "a string", Self.text)
  }

  /// The number member `key`.
  package func double(_ key: String) throws(Mismatch) -> Double {
    try member(key, "a number", Self.number)
  }

  /// The number member `key`, `nil` when absent or `null`; throws expecting `expected` when it
  /// is not a number or `accepts` refuses it (`a positive number of metres`, `{ $0 > 0 }`).
  package func optionalDouble(
    _ key: String, expected: String = "a number", where accepts: (Double) -> Bool = { _ in true }
  ) throws(Mismatch) -> Double? {
    try optionalMember(key, expected) {
      if case .number(let number) = $0, accepts(number) { number } else { nil }
    }
  }

  /// The integer member `key` (a number with no fractional part, within `Int`).
  package func integer(_ key: String) throws(Mismatch) -> Int {
    try member(key, "an integer") {
      if case .number(let number) = $0 { Int(exactly: number) } else { nil }
    }
  }

  /// The integer member `key`, `nil` when absent or `null`.
  package func optionalInteger(_ key: String) throws(Mismatch) -> Int? {
    optional(key) == nil ? nil : try integer(key)
  }

  /// The Boolean member `key`.
  package func bool(_ key: String) throws(Mismatch) -> Bool {
    try member(key, "true or false", Self.flag)
  }

  /// The Boolean member `key`, `nil` when absent or `null`.
  package func optionalBool(_ key: String) throws(Mismatch) -> Bool? {
    try optionalMember(key, "true or false", Self.flag)
  }

  /// The object member `key`.
  package func object(_ key: String) throws(Mismatch) -> JSONObjectReader {
    try JSONObjectReader(try member(key, "an object") { $0 }, path: child(key))
  }

  /// The object member `key`, `nil` when absent or `null`. One lookup of the member.
  package func optionalObject(_ key: String) throws(Mismatch) -> JSONObjectReader? {
    guard let member = optional(key) else { return nil }
    return try JSONObjectReader(member, path: child(key))
  }

  /// The array member `key`, whose elements must be objects.
  package func objects(_ key: String) throws(Mismatch) -> [JSONObjectReader] {
    let elements = try member(key, "an array") {
      if case .array(let elements) = $0 { elements } else { nil }
    }
    var objects: [JSONObjectReader] = []
    objects.reserveCapacity(elements.count)
    for (index, element) in elements.enumerated() {
      objects.append(try JSONObjectReader(element, path: "\(child(key))[\(index)]"))
    }
    return objects
  }

  /// The array member `key` of objects, empty when absent or `null`.
  package func optionalObjects(_ key: String) throws(Mismatch) -> [JSONObjectReader] {
    optional(key) == nil ? [] : try objects(key)
  }

  /// The member `key` as an identifier, as GeoJSON allows one: a string as it is, or a whole
  /// number below 2^53 in magnitude (every JSON reader keeps those exactly) in decimal (`7`,
  /// `-12`); `nil` when absent or `null`. Throws expecting `a string or a number` for another
  /// type, `an integer` for a number with a fraction or beyond 2^53.
  package func optionalIdentifier(_ key: String) throws(Mismatch) -> String? {
    switch optional(key) {
    case nil: return nil
    case .string(let text)?: return text
    case .number(let number)?:
      guard number == number.rounded(), abs(number) < 9.0e15, let integer = Int64(exactly: number)
      else { throw Mismatch(path: child(key), expected: "an integer") }
      return String(integer)
    default: throw Mismatch(path: child(key), expected: "a string or a number")
    }
  }

  /// The string member `key`; `nil` when absent, `null` or not a string.
  package func lenientString(_ key: String) -> String? {
    optional(key).flatMap(Self.text)
  }

  /// The number member `key`, finite, with `true` and `false` read as 1 and 0; `nil` when
  /// absent, `null` or anything else.
  package func lenientNumber(_ key: String) -> Double? {
    switch optional(key) {
    case .number(let number)?: number.isFinite ? number : nil
    case .bool(let flag)?: flag ? 1 : 0
    default: nil
    }
  }

  /// The object member `key`; `nil` when absent, `null` or not an object.
  package func lenientObject(_ key: String) -> JSONObjectReader? {
    guard let member = optional(key), case .object = member else { return nil }
    return JSONObjectReader(members: member, path: child(key))
  }

  /// The array member `key` read as a GeoJSON position: its first two elements, numbers, as
  /// longitude and latitude in degrees (a third, altitude, and any beyond are ignored; the
  /// numbers are not range-checked); `nil` when absent, `null`, not an array, shorter than two,
  /// or when either of the two is not a number.
  package func lenientPosition(_ key: String) -> (longitude: Double, latitude: Double)? {
    guard case .array(let elements)? = optional(key), elements.count >= 2,
      let longitude = Self.number(elements[0]), let latitude = Self.number(elements[1])
    else { return nil }
    return (longitude, latitude)
  }
}
