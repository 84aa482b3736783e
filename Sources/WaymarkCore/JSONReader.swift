import FoundationEssentials
import Glibc

/// The JSON reader of Waymark: small and strict (RFC 8259), over UTF-8 bytes, into
/// ``JSONValue``s. It reads place files (without building Foundation objects for every
/// feature), the broker's requests and messages, OwnTracks payloads and stored event reasons.
package struct JSONReader {
  /// Why the text is not JSON, and the byte offset where that was found.
  package struct SyntaxError: Error {
    package var offset: Int
    package var reason: String
  }

  package private(set) var offset = 0
  private var depth = 0
  private static let maximumDepth = 256

  /// The input, followed by a NUL that is not part of it.
  private let bytes: [UInt8]
  private let count: Int

  package init(_ input: [UInt8]) {
    var bytes = input
    bytes.append(0)
    self.bytes = bytes
    self.count = input.count
  }

  package var isAtEnd: Bool { offset >= count }

  package mutating func skipWhitespace() {
    while offset < count {
      switch bytes[offset] {
      case 0x20, 0x09, 0x0A, 0x0D: offset += 1
      default: return
      }
    }
  }

  func error(_ reason: String) -> SyntaxError { SyntaxError(offset: offset, reason: reason) }

  /// Consumes `byte` (after whitespace) or throws.
  mutating func expect(_ byte: UInt8) throws(SyntaxError) {
    skipWhitespace()
    guard offset < count, bytes[offset] == byte else {
      throw error("expected '\(Character(Unicode.Scalar(byte)))'")
    }
    offset += 1
  }

  /// Consumes `byte` (after whitespace) when it is next.
  mutating func consume(_ byte: UInt8) -> Bool {
    skipWhitespace()
    guard offset < count, bytes[offset] == byte else { return false }
    offset += 1
    return true
  }

  /// Reads one value.
  package mutating func value() throws(SyntaxError) -> JSONValue {
    skipWhitespace()
    guard offset < count else { throw error("unexpected end of input") }
    switch bytes[offset] {
    case UInt8(ascii: "{"):
      depth += 1
      defer { depth -= 1 }
      guard depth <= Self.maximumDepth else { throw error("nested too deeply") }
      offset += 1
      var members: [(key: String, value: JSONValue)] = []
      if consume(UInt8(ascii: "}")) { return .object(members) }
      repeat {
        skipWhitespace()
        let key = try string()
        try expect(UInt8(ascii: ":"))
        members.append((key, try value()))
      } while consume(UInt8(ascii: ","))
      try expect(UInt8(ascii: "}"))
      return .object(members)
    case UInt8(ascii: "["):
      depth += 1
      defer { depth -= 1 }
      guard depth <= Self.maximumDepth else { throw error("nested too deeply") }
      offset += 1
      var elements: [JSONValue] = []
      if consume(UInt8(ascii: "]")) { return .array(elements) }
      repeat {
        elements.append(try value())
      } while consume(UInt8(ascii: ","))
      try expect(UInt8(ascii: "]"))
      return .array(elements)
    case UInt8(ascii: "\""): return .string(try string())
    case UInt8(ascii: "t"): return try literal("true", .bool(true))
    case UInt8(ascii: "f"): return try literal("false", .bool(false))
    case UInt8(ascii: "n"): return try literal("null", .null)
    default: return .number(try number())
    }
  }

  private mutating func literal(_ word: StaticString, _ value: JSONValue) throws(SyntaxError)
    -> JSONValue
  {
    let length = word.utf8CodeUnitCount
    guard offset + length <= count else { throw error("invalid literal") }
    let matches = word.withUTF8Buffer { buffer in
      (0..<length).allSatisfy { bytes[offset + $0] == buffer[$0] }
    }
    guard matches else { throw error("invalid literal") }
    offset += length
    return value
  }

  private mutating func number() throws(SyntaxError) -> Double {
    let start = offset
    func digits() -> Int {
      let begin = offset
      while offset < count, bytes[offset] >= 0x30, bytes[offset] <= 0x39 { offset += 1 }
      return offset - begin
    }
    if offset < count, bytes[offset] == UInt8(ascii: "-") { offset += 1 }
    let integerStart = offset
    let integerDigits = digits()
    guard integerDigits > 0 else {
      offset = start
      throw error("invalid value")
    }
    if integerDigits > 1, bytes[integerStart] == 0x30 { throw error("leading zero in number") }
    if offset < count, bytes[offset] == UInt8(ascii: ".") {
      offset += 1
      guard digits() > 0 else { throw error("digits expected after '.'") }
    }
    if offset < count, bytes[offset] | 0x20 == UInt8(ascii: "e") {
      offset += 1
      if offset < count,
        bytes[offset] == UInt8(ascii: "+") || bytes[offset] == UInt8(ascii: "-")
      {
        offset += 1
      }
      guard digits() > 0 else { throw error("digits expected in exponent") }
    }
    // The syntax is checked above; strtod converts exactly the checked bytes (the array ends
    // with a NUL, so strtod stops at the end of the input too).
    let value = bytes.withUnsafeBufferPointer { buffer in
      buffer.baseAddress!.advanced(by: start).withMemoryRebound(to: CChar.self, capacity: 1) {
        strtod($0, nil)
      }
    }
    guard value.isFinite else { throw error("number out of range") }
    return value
  }

  mutating func string() throws(SyntaxError) -> String {
    guard offset < count, bytes[offset] == UInt8(ascii: "\"") else {
      throw error("expected a string")
    }
    offset += 1
    let start = offset
    // Fast path: no escapes.
    var high: UInt8 = 0
    while offset < count {
      let byte = bytes[offset]
      if byte == UInt8(ascii: "\"") {
        let end = offset
        let text = bytes.withUnsafeBufferPointer { buffer -> String? in
          let slice = UnsafeBufferPointer(rebasing: buffer[start..<end])
          return high < 0x80
            ? String(decoding: slice, as: UTF8.self) : String(validating: slice, as: UTF8.self)
        }
        guard let text else { throw error("invalid UTF-8 in string") }
        offset += 1
        return text
      }
      high |= byte
      if byte == UInt8(ascii: "\\") { break }
      guard byte >= 0x20 else { throw error("control character in string") }
      offset += 1
    }
    var scalars: [UInt8] = Array(bytes[start..<offset])
    while offset < count {
      let byte = bytes[offset]
      offset += 1
      switch byte {
      case UInt8(ascii: "\""):
        guard let text = String(validating: scalars, as: UTF8.self) else {
          throw error("invalid UTF-8 in string")
        }
        return text
      case UInt8(ascii: "\\"):
        guard offset < count else { break }
        let escape = bytes[offset]
        offset += 1
        switch escape {
        case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): scalars.append(escape)
        case UInt8(ascii: "b"): scalars.append(0x08)
        case UInt8(ascii: "f"): scalars.append(0x0C)
        case UInt8(ascii: "n"): scalars.append(0x0A)
        case UInt8(ascii: "r"): scalars.append(0x0D)
        case UInt8(ascii: "t"): scalars.append(0x09)
        case UInt8(ascii: "u"):
          var code = try hex4()
          if (0xD800..<0xDC00).contains(code) {
            guard offset + 1 < count, bytes[offset] == UInt8(ascii: "\\"),
              bytes[offset + 1] == UInt8(ascii: "u")
            else { throw error("unpaired surrogate") }
            offset += 2
            let low = try hex4()
            guard (0xDC00..<0xE000).contains(low) else { throw error("unpaired surrogate") }
            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
          } else if (0xDC00..<0xE000).contains(code) {
            throw error("unpaired surrogate")
          }
          guard let scalar = Unicode.Scalar(code) else { throw error("invalid \\u escape") }
          scalars.append(contentsOf: Array(String(Character(scalar)).utf8))
        default: throw error("invalid escape")
        }
      default:
        guard byte >= 0x20 else { throw error("control character in string") }
        scalars.append(byte)
      }
    }
    throw error("unterminated string")
  }

  private mutating func hex4() throws(SyntaxError) -> UInt32 {
    guard offset + 4 <= count else { throw error("invalid \\u escape") }
    var code: UInt32 = 0
    for _ in 0..<4 {
      let byte = bytes[offset]
      offset += 1
      let digit: UInt8
      switch byte {
      case 0x30...0x39: digit = byte - 0x30
      case 0x41...0x46: digit = byte - 0x41 + 10
      case 0x61...0x66: digit = byte - 0x61 + 10
      default: throw error("invalid \\u escape")
      }
      code = code << 4 | UInt32(digit)
    }
    return code
  }
}
