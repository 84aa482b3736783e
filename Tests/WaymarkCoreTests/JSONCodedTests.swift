import Foundation
import Testing
import WaymarkCore

/// A type with a JSON form of its own (`JSONCoded`) is `Codable` through that form: any encoder
/// writes the members the file and the store keep, any decoder reads them with the same checks,
/// and a member that does not match is an error that names it.
@Suite struct JSONCodedTests {
  static let grant = Grant(
    clientID: "/usr/bin/alice-tool", level: .always, accuracy: .reduced,
    grantedAt: Date(timeIntervalSince1970: 1_796_000_000.123))

  /// `JSONEncoder` with sorted keys and unescaped slashes: the bytes `JSONLine` writes.
  static func encoded(_ value: some Encodable) throws -> [UInt8] {
    let encoder = JSONEncoder()
    encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
    return Array(try encoder.encode(value))
  }

  /// The description of the decoding error `decode` throws, or `nil` when it reads.
  static func decodingError<T: Decodable>(_ type: T.Type, _ text: String) -> String? {
    do {
      _ = try JSONDecoder().decode(type, from: Data(text.utf8))
      return nil
    } catch DecodingError.dataCorrupted(let context) {
      return context.debugDescription
    } catch {
      return "another error: \(error)"
    }
  }

  @Test func aGrantEncodesAsItsFileRecord() throws {
    let bytes = try Self.encoded(Self.grant)
    #expect(bytes == Self.grant.json.closed)
    let text = String(decoding: bytes, as: UTF8.self)
    #expect(text.contains(#""client":"/usr/bin/alice-tool""#))
    #expect(text.contains(#""grantedAt":"2026-11-30T"#))
    #expect(!text.contains("clientID"))  // Not the member-by-member form.
    let read = try JSONDecoder().decode(Grant.self, from: Data(bytes))
    #expect(read == Self.grant)  // The time to the millisecond, as in the file.
  }

  @Test func aMemberThatDoesNotMatchIsNamed() throws {
    let good = Self.grant.json.string
    #expect(Self.decodingError(Grant.self, good) == nil)  // Positive control.
    let mistyped = good.replacingOccurrences(of: #""level":"always""#, with: #""level":3"#)
    #expect(mistyped != good)
    #expect(Self.decodingError(Grant.self, mistyped) == "level: expected a string")
    let unknown = good.replacingOccurrences(of: #""level":"always""#, with: #""level":"often""#)
    let reason = try #require(Self.decodingError(Grant.self, unknown))
    #expect(reason.hasPrefix("expected a grant: a client that is not empty, a level (never"))
    #expect(
      Self.decodingError(Coordinate.self, #"{"latitude":1}"#) == "longitude: expected a number")
    #expect(Self.decodingError(Coordinate.self, "[1,2]") == "expected an object")
  }

  /// Numbers read back bit for bit through `JSONEncoder` and through a property list, the
  /// signed zero and integers among them.
  @Test func numbersRoundTripBitForBitThroughAnyEncoder() throws {
    let values: [Double] = [
      0, -0.0, 3, -180, 48.137_154_123_456_789, 1e-300, 1.7976931348623157e308,
      9_007_199_254_740_994, 18_014_398_509_481_988, 0.1 + 0.2, -Double.leastNonzeroMagnitude,
    ]
    let plist = PropertyListEncoder()
    plist.outputFormat = .binary
    for value in values {
      let coordinate = Coordinate(latitude: value, longitude: -value)
      for copy in [
        try JSONDecoder().decode(Coordinate.self, from: JSONEncoder().encode(coordinate)),
        try Coordinate(json: JSONObjectReader(parsing: Self.encoded(coordinate))),
        try PropertyListDecoder().decode(Coordinate.self, from: plist.encode(coordinate)),
      ] {
        #expect(copy.latitude.bitPattern == value.bitPattern, "\(value)")
        #expect(copy.longitude.bitPattern == (-value).bitPattern, "\(value)")
      }
    }
    // An integer stays an integer: `3`, not `3.0`, wherever it goes.
    let three = String(
      decoding: try Self.encoded(Coordinate(latitude: 3, longitude: 0.5)), as: UTF8.self)
    #expect(three == #"{"latitude":3,"longitude":0.5}"#)
  }

  /// A tree nested deeper than any JSON form is refused, not walked: on a thread with a small
  /// stack, 400 nested arrays in an unknown member are a decoding error; 10 are ignored.
  @Test func aDeeplyNestedTreeIsRefused() throws {
    func decode(depth: Int) -> String? {
      let text =
        #"{"latitude":1,"longitude":2,"extra":"# + String(repeating: "[", count: depth)
        + String(repeating: "]", count: depth) + "}"
      let result = Locked<String??>(nil)
      let done = DispatchSemaphore(value: 0)
      let thread = Thread {
        result.withLock { $0 = Self.decodingError(Coordinate.self, text) }
        done.signal()
      }
      thread.stackSize = 256 * 1024
      thread.start()
      // A bounded wait: a decoding that has not ended is a reason both expectations reject.
      let ended = done.wait(timeout: .now() + 60) == .success
      return ended ? result.withLock { $0 ?? "not run" } : "still decoding after 60 s"
    }
    #expect(decode(depth: 10) == nil)  // Positive control: an unknown member is ignored.
    let reason = decode(depth: 400)
    #expect(
      reason?.contains("nested deeper than \(JSONValue.maximumDepth) levels") == true,
      "\(reason ?? "read")")
  }

  /// JSON has no infinity or NaN: such a value is refused, as Foundation's encoder refused it.
  @Test func aNonFiniteNumberIsNotEncoded() throws {
    #expect(throws: Never.self) { try JSONEncoder().encode(Coordinate(latitude: 1, longitude: 2)) }
    for value in [Double.nan, .infinity, -.infinity] {
      #expect(throws: EncodingError.self) {
        try JSONEncoder().encode(Coordinate(latitude: value, longitude: 2))
      }
      #expect(throws: EncodingError.self) {
        try PropertyListEncoder().encode(Coordinate(latitude: 1, longitude: value))
      }
    }
  }
}
