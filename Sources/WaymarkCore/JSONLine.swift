import FoundationEssentials

/// Builds one JSON object with keys in insertion order: Waymark's one JSON writer.
///
/// Everything Waymark writes as JSON goes through it: NDJSON output, the broker's messages,
/// and its own files (a monitor's saved state, the grants file, the states in the store), read
/// back with `JSONReader` (`JSONObjectReader` for the files). Numbers are printed at a fixed
/// precision (``add(_:_:decimals:)``, as gpsd prints them) or exactly (``add(_:exactly:)``, for
/// state that must read back bit for bit). Output is byte-identical across runs and machines,
/// which Foundation's encoder does not promise (its key order and float printing are not part of
/// its contract).
///
/// `RawJSONWriter` is its engine for fixed-point numbers and, besides, only the hot path of the
/// TPV object (`Fix.appendTPV(to:)`): write anything else here.
public struct JSONLine: Sendable {
  /// The UTF-8 bytes written so far.
  public private(set) var bytes: [UInt8]
  private var isEmpty = true
  /// Whether a number given to ``add(_:exactly:)``, here or in a nested object, was infinite
  /// or NaN: JSON has no such number, and it was written as `null`.
  public private(set) var hasNonFiniteNumber = false

  /// Starts an object whose first key is `"class"`.
  public init(class name: String) {
    bytes = [UInt8(ascii: "{")]
    bytes.reserveCapacity(256)
    add("class", name)
  }

  /// Starts an empty object.
  public init() {
    bytes = [UInt8(ascii: "{")]
  }

  /// Wraps a complete object's bytes (from `{` to `}`), so that members can still be added.
  init(finishedObject: some Collection<UInt8>) {
    bytes = Array(finishedObject.dropLast())
    isEmpty = bytes.count <= 1
  }

  /// Keys are the program's own names: plain ASCII without quotes, backslashes or control
  /// characters, written without escaping (checked in debug builds).
  private mutating func key(_ key: String) {
    assert(key.utf8.allSatisfy { $0 >= 0x20 && $0 != 0x22 && $0 != 0x5C && $0 < 0x7F })
    if !isEmpty { bytes.append(UInt8(ascii: ",")) }
    isEmpty = false
    bytes.append(UInt8(ascii: "\""))
    bytes.append(contentsOf: key.utf8)
    bytes.append(UInt8(ascii: "\""))
    bytes.append(UInt8(ascii: ":"))
  }

  /// Adds a string member; `nil` adds nothing.
  public mutating func add(_ name: String, _ value: String?) {
    guard let value else { return }
    key(name)
    JSONLine.appendString(value, to: &bytes)
  }

  /// Adds a string member that is `null` when `value` is `nil`.
  public mutating func addNullable(_ name: String, _ value: String?) {
    key(name)
    if let value {
      JSONLine.appendString(value, to: &bytes)
    } else {
      bytes.append(contentsOf: "null".utf8)
    }
  }

  /// Adds an integer member; `nil` adds nothing.
  public mutating func add(_ name: String, _ value: Int?) {
    guard let value else { return }
    key(name)
    JSONLine.appendInteger(value, to: &bytes)
  }

  /// Appends a decimal integer.
  public static func appendInteger(_ value: Int, to bytes: inout [UInt8]) {
    if value < 0 { bytes.append(UInt8(ascii: "-")) }
    var magnitude = value.magnitude
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var position = 24
      repeat {
        position -= 1
        buffer[position] = UInt8(48 + magnitude % 10)
        magnitude /= 10
      } while magnitude > 0
      bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[position..<24]))
    }
  }

  /// Adds a Boolean member; `nil` adds nothing.
  public mutating func add(_ name: String, _ value: Bool?) {
    guard let value else { return }
    key(name)
    bytes.append(contentsOf: (value ? "true" : "false").utf8)
  }

  /// Adds a number with `decimals` digits after the point (trailing zeros kept, like gpsd);
  /// `nil` or a non-finite value adds nothing.
  public mutating func add(_ name: String, _ value: Double?, decimals: Int) {
    guard let value, value.isFinite else { return }
    key(name)
    JSONLine.appendFixed(value, decimals: decimals, to: &bytes)
  }

  /// Adds a timestamp member in ISO 8601 UTC with milliseconds; `nil` adds nothing.
  public mutating func add(_ name: String, _ value: Date?) {
    guard let value else { return }
    key(name)
    bytes.append(UInt8(ascii: "\""))
    Timestamp.append(value, to: &bytes)
    bytes.append(UInt8(ascii: "\""))
  }

  /// Adds a nested object.
  public mutating func add(_ name: String, object: JSONLine) {
    key(name)
    append(object)
  }

  /// Adds a nested object under a name that is data (a place id, a condition's identifier),
  /// escaped as a string value is.
  public mutating func add(escapedName name: String, object: JSONLine) {
    if !isEmpty { bytes.append(UInt8(ascii: ",")) }
    isEmpty = false
    JSONLine.appendString(name, to: &bytes)
    bytes.append(UInt8(ascii: ":"))
    append(object)
  }

  /// Adds an array of objects, in order.
  public mutating func add(_ name: String, objects: [JSONLine]) {
    key(name)
    bytes.append(UInt8(ascii: "["))
    for (index, object) in objects.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      append(object)
    }
    bytes.append(UInt8(ascii: "]"))
  }

  private mutating func append(_ object: JSONLine) {
    bytes.append(contentsOf: object.bytes)
    bytes.append(UInt8(ascii: "}"))
    if object.hasNonFiniteNumber { hasNonFiniteNumber = true }
  }

  /// Adds a number that reads back as the same `Double`, bit for bit: Swift's shortest
  /// round-trip form, without a trailing `.0` (`5`, `0.30000000000000004`, `1e-07`, `-0`), as
  /// Foundation's encoder prints it; `nil` adds nothing. An infinite or NaN value is written `null` and
  /// sets ``hasNonFiniteNumber``.
  public mutating func add(_ name: String, exactly value: Double?) {
    guard let value else { return }
    key(name)
    guard value.isFinite else {
      bytes.append(contentsOf: "null".utf8)
      hasNonFiniteNumber = true
      return
    }
    var text = value.description
    if text.hasSuffix(".0") { text.removeLast(2) }
    bytes.append(contentsOf: text.utf8)
  }

  /// Adds pre-encoded JSON as a member's value. The caller guarantees it is valid JSON.
  public mutating func add(_ name: String, rawJSON: String) {
    key(name)
    bytes.append(contentsOf: rawJSON.utf8)
  }

  /// The bytes of the finished object, without a newline.
  public var closed: [UInt8] { bytes + [UInt8(ascii: "}")] }

  /// The finished object as a string, without a newline.
  public var string: String { String(decoding: closed, as: UTF8.self) }

  /// Appends the finished object and a newline to `output`.
  public func write(to output: inout [UInt8]) {
    output.append(contentsOf: bytes)
    output.append(UInt8(ascii: "}"))
    output.append(UInt8(ascii: "\n"))
  }

  /// Appends `value` with exactly `decimals` digits after the point, rounded half away from zero
  /// (`RawJSONWriter.fixed(_:decimals:)`); Swift's shortest form when that cannot.
  public static func appendFixed(_ value: Double, decimals: Int, to bytes: inout [UInt8]) {
    // A fixed-point number is at most a sign, 19 digits and a point.
    withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
      var writer = RawJSONWriter(buffer.baseAddress!)
      if writer.fixed(value, decimals: decimals) {
        bytes.append(contentsOf: UnsafeBufferPointer(rebasing: buffer[..<writer.count]))
      } else {
        bytes.append(contentsOf: String(value).utf8)
      }
    }
  }

  /// Appends `string` as a JSON string literal with the required escapes, and `\uNNNN` for
  /// every other scalar ``LogText/needsEscape(_:)`` names (DEL, the C1 controls, the line and
  /// paragraph separators, the bidirectional controls, the byte-order mark): still the same
  /// JSON string to any reader, but one that cannot drive a terminal it is printed on.
  public static func appendString(_ string: String, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    var string = string
    string.withUTF8 { utf8 in
      var index = 0
      while index < utf8.count {
        let byte = utf8[index]
        switch byte {
        case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
        case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
        case 0x0A: bytes.append(contentsOf: [92, 110])
        case 0x0D: bytes.append(contentsOf: [92, 114])
        case 0x09: bytes.append(contentsOf: [92, 116])
        case 0..<0x20, 0x7F: appendEscape(UInt32(byte), to: &bytes)
        case 0xC2, 0xE2, 0xEF:
          // The lead bytes of every non-ASCII scalar to escape (U+0080–U+009F, U+2028–U+206F,
          // U+FEFF); others are copied as they are.
          // (A String is valid UTF-8: the continuation bytes are there.)
          let length = min(byte == 0xC2 ? 2 : 3, utf8.count - index)
          var scalar = UInt32(byte) & (length == 2 ? 0x1F : 0x0F)
          for offset in 1..<length { scalar = scalar << 6 | UInt32(utf8[index + offset] & 0x3F) }
          if let value = Unicode.Scalar(scalar), LogText.needsEscape(value) {
            appendEscape(scalar, to: &bytes)
          } else {
            bytes.append(contentsOf: utf8[index..<index + length])
          }
          index += length
          continue
        default: bytes.append(byte)
        }
        index += 1
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }

  /// A line of JSON received from elsewhere, with every raw scalar ``LogText/needsEscape(_:)``
  /// names (the backslash aside) written as `\uNNNN`: the same JSON for a reader (such scalars
  /// can only stand inside strings, where the escape means the same), safe on a terminal.
  public static func escapingControls(_ line: String) -> String {
    guard line.unicodeScalars.contains(where: { $0 != "\\" && LogText.needsEscape($0) }) else {
      return line
    }
    var bytes: [UInt8] = []
    bytes.reserveCapacity(line.utf8.count + 16)
    for scalar in line.unicodeScalars {
      if scalar != "\\" && LogText.needsEscape(scalar) {
        appendEscape(scalar.value, to: &bytes)
      } else {
        bytes.append(contentsOf: String(scalar).utf8)
      }
    }
    return String(decoding: bytes, as: UTF8.self)
  }

  /// `\uNNNN` (lower-case hex) for a scalar of the Basic Multilingual Plane.
  private static func appendEscape(_ scalar: UInt32, to bytes: inout [UInt8]) {
    let hex = Array("0123456789abcdef".utf8)
    bytes.append(contentsOf: [92, 117])
    for shift in [12, 8, 4, 0] { bytes.append(hex[Int(scalar >> UInt32(shift) & 15)]) }
  }
}
