// A JSON tree through any encoder or decoder: what makes ``JSONCoded`` types `Codable` with
// their one JSON form.

extension JSONValue: Codable {
  /// A member name known only at run time.
  private struct Key: CodingKey {
    let stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
  }

  /// The largest integer below which every integer is a `Double` exactly (2^53).
  private static let exactIntegers = 9_007_199_254_740_992.0

  /// How deep a tree the decoder may hold: far more than any ``JSONCoded`` form nests (a
  /// monitor's file, the deepest, nests 8 deep), and few enough that reading a hostile one never
  /// runs a thread out of stack (each level is a few calls).
  package static let maximumDepth = 64

  /// Reads whatever the decoder holds: an object, an array, `null`, a Boolean, a number or a
  /// string (tried in that order); a tree nested deeper than ``maximumDepth`` is a
  /// `DecodingError.dataCorrupted`.
  package init(from decoder: any Decoder) throws {
    guard decoder.codingPath.count < Self.maximumDepth else {
      throw DecodingError.dataCorrupted(
        DecodingError.Context(
          codingPath: decoder.codingPath,
          debugDescription: "nested deeper than \(Self.maximumDepth) levels"))
    }
    if let object = try? decoder.container(keyedBy: Key.self) {
      var members: [(key: String, value: JSONValue)] = []
      for key in object.allKeys {
        members.append((key.stringValue, try object.decode(JSONValue.self, forKey: key)))
      }
      self = .object(members)
    } else if var array = try? decoder.unkeyedContainer() {
      var elements: [JSONValue] = []
      while !array.isAtEnd { elements.append(try array.decode(JSONValue.self)) }
      self = .array(elements)
    } else {
      let single = try decoder.singleValueContainer()
      if single.decodeNil() {
        self = .null
      } else if let flag = try? single.decode(Bool.self) {
        self = .bool(flag)
      } else if let number = try? single.decode(Double.self) {
        self = .number(number)
      } else {
        self = .string(try single.decode(String.self))
      }
    }
  }

  /// Writes the tree: objects keyed by their member names in order, integers that a `Double`
  /// holds exactly as integers (so that `3` stays `3` in any format), other numbers as `Double`.
  package func encode(to encoder: any Encoder) throws {
    switch self {
    case .object(let members):
      var object = encoder.container(keyedBy: Key.self)
      for (key, value) in members { try object.encode(value, forKey: Key(stringValue: key)) }
    case .array(let elements):
      var array = encoder.unkeyedContainer()
      for element in elements { try array.encode(element) }
    case .null:
      var single = encoder.singleValueContainer()
      try single.encodeNil()
    case .bool(let flag):
      var single = encoder.singleValueContainer()
      try single.encode(flag)
    case .number(let number):
      var single = encoder.singleValueContainer()
      if number.rounded(.towardZero) == number, abs(number) < Self.exactIntegers,
        number != 0 || number.sign == .plus
      {
        try single.encode(Int64(number))
      } else {
        try single.encode(number)
      }
    case .string(let text):
      var single = encoder.singleValueContainer()
      try single.encode(text)
    }
  }
}
