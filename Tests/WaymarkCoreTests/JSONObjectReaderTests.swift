import Testing
import WaymarkCore

/// `JSONObjectReader`'s accessors that the places file and `visits record` read through: the
/// lenient ones (never throwing; another type reads as absent), identifiers, positions, numbers
/// checked by a rule, and the empty object. Each accepts what it should beside refusing what
/// it should not.
@Suite struct JSONObjectReaderTests {
  static func reader(_ text: String) throws -> JSONObjectReader {
    try JSONObjectReader(parsing: Array(text.utf8))
  }

  @Test("a lenient string is the string, absent for null or another type")
  func lenientString() throws {
    let object = try Self.reader(#"{"a":"x","b":1,"c":null,"d":{},"e":"y","e":"z"}"#)
    #expect(object.lenientString("a") == "x")
    #expect(object.lenientString("e") == "z")
    #expect(object.lenientString("b") == nil)
    #expect(object.lenientString("c") == nil)
    #expect(object.lenientString("d") == nil)
    #expect(object.lenientString("missing") == nil)
  }

  @Test("a lenient number is a number, true and false as 1 and 0, absent for anything else")
  func lenientNumber() throws {
    let object = try Self.reader(#"{"n":-2.5,"t":true,"f":false,"s":"3","z":null,"o":[1]}"#)
    #expect(object.lenientNumber("n") == -2.5)
    #expect(object.lenientNumber("t") == 1)
    #expect(object.lenientNumber("f") == 0)
    #expect(object.lenientNumber("s") == nil)
    #expect(object.lenientNumber("z") == nil)
    #expect(object.lenientNumber("o") == nil)
    #expect(object.lenientNumber("missing") == nil)
  }

  @Test("a lenient object is an object at its path, absent for null or another type")
  func lenientObject() throws {
    let object = try Self.reader(#"{"r":{"rule":"dwell"},"s":"x","n":null}"#)
    let inner = try #require(object.lenientObject("r"))
    #expect(inner.path == "r")
    #expect(inner.lenientString("rule") == "dwell")
    #expect(object.lenientObject("s") == nil)
    #expect(object.lenientObject("n") == nil)
    #expect(object.lenientObject("missing") == nil)
  }

  @Test("a position is the first two numbers of an array, the rest ignored")
  func position() throws {
    let object = try Self.reader(
      #"{"p":[13.4,52.5],"alt":[1,2,"x"],"short":[1],"text":["1",2],"flag":[true,2],"n":3}"#)
    let point = try #require(object.lenientPosition("p"))
    #expect(point.longitude == 13.4 && point.latitude == 52.5)
    let withAltitude = try #require(object.lenientPosition("alt"))
    #expect(withAltitude.longitude == 1 && withAltitude.latitude == 2)
    #expect(object.lenientPosition("short") == nil)
    #expect(object.lenientPosition("text") == nil)
    #expect(object.lenientPosition("flag") == nil)
    #expect(object.lenientPosition("n") == nil)
    #expect(object.lenientPosition("missing") == nil)
  }

  @Test("an identifier is a string or an integer in decimal")
  func identifier() throws {
    let object = try Self.reader(
      #"{"s":"home","i":-12,"big":8999999999999999,"e":"","n":null,"f":1.5,"huge":1e16,"b":true}"#
    )
    #expect(try object.optionalIdentifier("s") == "home")
    #expect(try object.optionalIdentifier("i") == "-12")
    #expect(try object.optionalIdentifier("big") == "8999999999999999")
    #expect(try object.optionalIdentifier("e") == "")
    #expect(try object.optionalIdentifier("n") == nil)
    #expect(try object.optionalIdentifier("missing") == nil)
    #expect(throws: JSONObjectReader.Mismatch(path: "f", expected: "an integer")) {
      try object.optionalIdentifier("f")
    }
    #expect(throws: JSONObjectReader.Mismatch(path: "huge", expected: "an integer")) {
      try object.optionalIdentifier("huge")
    }
    #expect(throws: JSONObjectReader.Mismatch(path: "b", expected: "a string or a number")) {
      try object.optionalIdentifier("b")
    }
  }

  @Test("a number checked by a rule names what was expected, for a refused value or a type")
  func checkedNumber() throws {
    let object = try Self.reader(#"{"properties":{"good":3,"zero":0,"text":"3"}}"#)
    let properties = try object.object("properties")
    let expected = "a positive number of metres"
    #expect(try properties.optionalDouble("good", expected: expected, where: { $0 > 0 }) == 3)
    #expect(try properties.optionalDouble("missing", expected: expected, where: { $0 > 0 }) == nil)
    #expect(throws: JSONObjectReader.Mismatch(path: "properties.zero", expected: expected)) {
      try properties.optionalDouble("zero", expected: expected, where: { $0 > 0 })
    }
    #expect(throws: JSONObjectReader.Mismatch(path: "properties.text", expected: expected)) {
      try properties.optionalDouble("text", expected: expected, where: { $0 > 0 })
    }
    #expect(try properties.optionalDouble("zero") == 0)
    #expect(throws: JSONObjectReader.Mismatch(path: "properties.text", expected: "a number")) {
      try properties.optionalDouble("text")
    }
  }

  @Test("an optional object is read with one path; another type is a mismatch")
  func optionalObject() throws {
    let object = try Self.reader(#"{"p":{"a":"x"},"q":[1],"n":null}"#)
    #expect(try object.optionalObject("p")?.lenientString("a") == "x")
    #expect(try object.optionalObject("n") == nil)
    #expect(throws: JSONObjectReader.Mismatch(path: "q", expected: "an object")) {
      try object.optionalObject("q")
    }
  }

  @Test("the empty object has no members, its path, and writes back as {}")
  func empty() throws {
    let empty = JSONObjectReader.empty(at: "reason")
    #expect(empty.path == "reason")
    #expect(empty.keys.isEmpty)
    #expect(empty.lenientString("rule") == nil)
    #expect(empty.child("rule") == "reason.rule")
    if case .object(let members) = empty.json {
      #expect(members.isEmpty)
    } else {
      Issue.record("the empty object's JSON is \(empty.json)")
    }
    let full = try Self.reader(#"{"a":1}"#)
    if case .object(let members) = full.json {
      #expect(members.map(\.key) == ["a"])
    } else {
      Issue.record("the object's JSON is \(full.json)")
    }
  }
}
