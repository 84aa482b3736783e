import FoundationEssentials

/// Builds one NDJSON object with keys in insertion order and numbers at fixed precision.
///
/// Waymark's machine output must be byte-identical across runs and machines, so it does not go
/// through `JSONEncoder` (whose key order and float printing are not part of its contract).
public struct JSONLine: Sendable {
  /// The UTF-8 bytes written so far.
  public private(set) var bytes: [UInt8]
  private var isEmpty = true

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
    bytes.append(contentsOf: object.closed)
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
  /// (``RawJSONWriter/fixed(_:decimals:)``); Swift's shortest form when that cannot.
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

  /// Appends `string` as a JSON string literal with the required escapes.
  public static func appendString(_ string: String, to bytes: inout [UInt8]) {
    bytes.append(UInt8(ascii: "\""))
    for byte in string.utf8 {
      switch byte {
      case UInt8(ascii: "\""): bytes.append(contentsOf: [92, 34])
      case UInt8(ascii: "\\"): bytes.append(contentsOf: [92, 92])
      case 0x0A: bytes.append(contentsOf: [92, 110])
      case 0x0D: bytes.append(contentsOf: [92, 114])
      case 0x09: bytes.append(contentsOf: [92, 116])
      case 0..<0x20:
        let hex = Array("0123456789abcdef".utf8)
        bytes.append(contentsOf: [92, 117, 48, 48, hex[Int(byte >> 4)], hex[Int(byte & 15)]])
      default: bytes.append(byte)
      }
    }
    bytes.append(UInt8(ascii: "\""))
  }
}
