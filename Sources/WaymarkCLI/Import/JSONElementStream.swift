import Glibc
import WaymarkCore

/// Reads a JSON file in chunks and hands over the elements of its top arrays one at a time:
/// those of the array that is the document (key `nil`), and those of each array that is a member
/// of the document's object (`{"locations": [ … ]}`: key `locations`). Each element is parsed
/// by ``JSONReader`` (the one JSON reader) on its own, so a file of any size is read in the
/// memory of its largest element, never as a whole document.
///
/// This is framing, not parsing: the stream follows strings (and their escapes) and the
/// nesting of brackets to find where each element starts and ends, and counts lines for the
/// reports. Whatever lies outside those arrays (`"userLocationProfile": {…}`) is skipped
/// unread.
struct JSONElementStream {
  /// One element of a top array.
  struct Element {
    /// The member whose array holds it, `nil` for the document's own array.
    var key: String?
    /// Its 0-based index in that array.
    var index: Int
    /// The 1-based line it starts on.
    var line: Int
    /// The element parsed, or why it is not JSON.
    var value: Result<JSONValue, JSONReader.SyntaxError>

    /// Its JSON path, as reports name it: `locations[3]`, or `[3]`.
    var path: String { "\(key ?? "")[\(index)]" }
  }

  /// How the file ended, when it did not end as a JSON document does.
  enum Ending: Equatable {
    /// A complete document (or at least nothing left open).
    case complete
    /// The file has no JSON value at all.
    case empty
    /// The file ends inside a value: it was cut off (the elements before are kept).
    case truncated(line: Int)
  }

  /// The largest element read; a larger one is skipped and reported.
  static let maximumElementBytes = 64 << 20

  private let descriptor: Int32
  private var line = 1
  private var depth = 0
  private var inString = false
  private var escaped = false
  private var sawValue = false
  /// Whether the document is an array (its elements are the ones handed over).
  private var topIsArray = false
  /// At depth 1 in the document's object: whether the next string is a member's name.
  private var expectsKey = false
  private var readingKey = false
  private var keyBytes: [UInt8] = []
  private var key: String?
  /// The depth at which the elements of the current top array lie, or `nil` outside one.
  private var elementDepth: Int?
  private var index = 0
  /// The bytes of the element being read (`nil` when none is), and the line it starts on.
  private var element: [UInt8]?
  private var elementLine = 0
  private var elementTooLarge = false
  private var primitiveReported = -1

  /// A stream over the open file `descriptor` (not closed here), or `-1` for bytes given to
  /// ``feed(_:_:_:)``.
  init(descriptor: Int32 = -1) {
    self.descriptor = descriptor
  }

  /// Reads the whole file, calling `body` with each element in order, and `unreadable` (with
  /// the element's path, its line and the reason) for an element over
  /// ``maximumElementBytes`` or one that is neither an object nor an array.
  ///
  /// - Returns: how the file ended.
  /// - Throws: the `errno` of a failed `read(2)`.
  mutating func read(
    _ body: (Element) -> Void, unreadable: (_ path: String, _ line: Int, _ reason: String) -> Void
  ) throws(ImportReadError) -> Ending {
    try ImportReadError.readChunks(descriptor) { feed($0, body, unreadable) }
    return ending
  }

  /// How the bytes fed so far end, if they are the whole file.
  var ending: Ending {
    if !sawValue { return .empty }
    return depth > 0 || inString ? .truncated(line: line) : .complete
  }

  /// Reads the next bytes of the file (``read(_:unreadable:)`` feeds it chunk by chunk; the
  /// elements found do not depend on where the chunks are cut).
  mutating func feed(
    _ chunk: ArraySlice<UInt8>, _ body: (Element) -> Void,
    _ unreadable: (_ path: String, _ line: Int, _ reason: String) -> Void
  ) {
    var start = element == nil ? nil : chunk.startIndex as Int?
    for position in chunk.indices {
      let byte = chunk[position]
      if byte == 0x0A { line += 1 }
      if inString {
        if readingKey && keyBytes.count < 256 && !(byte == 0x22 && !escaped) {
          keyBytes.append(byte)
        }
        if escaped {
          escaped = false
        } else if byte == 0x5C {
          escaped = true
        } else if byte == 0x22 {
          inString = false
          if readingKey {
            readingKey = false
            key = String(decoding: keyBytes, as: UTF8.self)
          }
        }
        continue
      }
      switch byte {
      case 0x20, 0x09, 0x0A, 0x0D:
        continue
      case 0x22:
        inString = true
        sawValue = true
        if depth == 1 && !topIsArray && expectsKey {
          expectsKey = false
          readingKey = true
          keyBytes.removeAll(keepingCapacity: true)
        } else {
          notePrimitive(unreadable)
        }
      case 0x7B, 0x5B:  // { [
        if depth == 0 {
          topIsArray = byte == 0x5B
          expectsKey = !topIsArray
          if topIsArray {
            key = nil
            elementDepth = 1
            index = 0
          }
        } else if depth == 1 && !topIsArray && byte == 0x5B && elementDepth == nil {
          elementDepth = 2
          index = 0
        } else if depth == elementDepth && element == nil {
          element = []
          elementLine = line
          elementTooLarge = false
          start = position
        }
        sawValue = true
        depth += 1
      case 0x7D, 0x5D:  // } ]
        depth -= 1
        if depth == elementDepth, element != nil {
          let bytes = finish(chunk, from: start ?? chunk.startIndex, through: position)
          start = nil
          if elementTooLarge {
            unreadable(path, elementLine, "larger than 64 MB; skipped")
          } else {
            var reader = JSONReader(bytes)
            let value = Result { () throws(JSONReader.SyntaxError) in try reader.value() }
            body(Element(key: key, index: index, line: elementLine, value: value))
          }
        } else if let elementDepth, depth == elementDepth - 1 {
          self.elementDepth = nil
        }
        if depth <= 0 {
          depth = max(depth, 0)
          elementDepth = nil
        }
      case 0x2C:  // ,
        if depth == 1 && !topIsArray { expectsKey = true }
        if depth == elementDepth { index += 1 }
      case 0x3A:  // :
        continue
      default:
        sawValue = true
        notePrimitive(unreadable)
      }
    }
    if element != nil, let start {
      append(chunk[start...])
    }
  }

  private var path: String { "\(key ?? "")[\(index)]" }

  /// A value that is neither an object nor an array where an element lies: reported once.
  private mutating func notePrimitive(
    _ unreadable: (_ path: String, _ line: Int, _ reason: String) -> Void
  ) {
    guard depth == elementDepth, element == nil, primitiveReported != index else { return }
    primitiveReported = index
    unreadable(path, line, "not an object")
  }

  private mutating func append(_ bytes: ArraySlice<UInt8>) {
    guard !elementTooLarge else { return }
    if (element?.count ?? 0) + bytes.count > Self.maximumElementBytes {
      elementTooLarge = true
      element = []
      return
    }
    element?.append(contentsOf: bytes)
  }

  /// The element's bytes, the last of them from `chunk[start...end]`; the stream reads no
  /// element after this until the next one starts.
  private mutating func finish(
    _ chunk: ArraySlice<UInt8>, from start: Int, through end: Int
  ) -> [UInt8] {
    append(chunk[start...end])
    defer { element = nil }
    return element ?? []
  }
}
