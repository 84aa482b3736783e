import NMEA
import WaymarkCore

/// The points of a GPX file: every `<trkpt>` of every `<trk>` and `<trkseg>`, with
/// `lat`/`lon`, `<time>`, `<ele>`, GPX 1.0's `<speed>` and `<course>`, and `<hdop>`, `<fix>`
/// for the accuracy: `hdop` × the UERE of the fix kind, the rule the NMEA decoder applies when
/// a receiver sends no GST (``ErrorModel``). A point with no `<hdop>` has no accuracy, and the
/// stay detector learns the noise from the fixes' spread.
///
/// A tag scanner, not an XML parser: it reads the elements GPX writers (gpsbabel, phone
/// loggers, Garmin) write, with or without a namespace prefix, and ignores the rest. The file
/// is read a chunk at a time: what lies after the last complete point waits for the next chunk.
struct GPXTrack {
  /// The bytes after the last complete point read so far.
  private var pending: [UInt8] = []
  /// The 1-based line of `pending`'s first byte.
  private var line = 1
  /// Points met so far (`trkpt N` in reports).
  private var number = 0

  /// Adds the points that `chunk` completes to `batch`.
  mutating func add(_ chunk: ArraySlice<UInt8>, to batch: ImportBatch) {
    pending.append(contentsOf: chunk)
    guard let cut = Self.endOfLastPoint(in: pending) else { return }
    let complete = Array(pending[0..<cut])
    add(complete, to: batch)
    line += complete.count(where: { $0 == 0x0A })
    pending.removeFirst(cut)
  }

  /// Adds the points of the file's end (a point cut off there is reported truncated).
  mutating func finish(to batch: ImportBatch) {
    add(pending, to: batch)
    pending = []
  }

  /// The offset just after the last closing `</trkpt>` (any prefix) in `bytes`, or `nil`.
  static func endOfLastPoint(in bytes: [UInt8]) -> Int? {
    let close = Array("trkpt>".utf8)
    var index = bytes.count - close.count
    while index > 0 {
      if bytes[index] == UInt8(ascii: "t"),
        bytes[index..<(index + close.count)].elementsEqual(close)
      {
        // `</trkpt>` or `</prefix:trkpt>`: a `<` then `/` shortly before.
        var open = index - 1
        while open > 0, index - open < 64, bytes[open] != UInt8(ascii: "<") { open -= 1 }
        if bytes[open] == UInt8(ascii: "<"), bytes[open + 1] == UInt8(ascii: "/") {
          return index + close.count
        }
      }
      index -= 1
    }
    return nil
  }

  /// Adds the points of `text`, whole points of the file from ``line`` on, to `batch`.
  private mutating func add(_ text: [UInt8], to batch: ImportBatch) {
    var scanner = Scanner(bytes: text, line: line)
    while let (start, name) = scanner.nextPoint() {
      number += 1
      let line = scanner.line
      let tagEnd = scanner.find(">", from: start) ?? text.count
      let selfClosing = tagEnd > 0 && tagEnd < text.count && text[tagEnd - 1] == UInt8(ascii: "/")
      let attributes = text[start..<tagEnd]
      var bodyEnd = tagEnd
      if !selfClosing {
        bodyEnd = scanner.find("</\(name)", from: tagEnd) ?? text.count
      }
      let body = tagEnd < bodyEnd ? text[(tagEnd + 1)..<bodyEnd] : []
      scanner.advance(to: bodyEnd)
      let record = "\(name) \(number)"
      guard bodyEnd < text.count || selfClosing else {
        return batch.bad(line: line, record, "truncated (no closing tag)")
      }
      let fix = Self.element("fix", in: body)
      if fix == "none" {
        batch.bad(line: line, record, "<fix>none</fix>: not a position")
        continue
      }
      var accuracy: Double?
      if let hdop = Self.element("hdop", in: body).flatMap(Double.init) {
        let status: FixStatus = fix == "dgps" ? .dgps : .gps
        accuracy = hdop * ErrorModel.userEquivalentRangeError(for: status)
      }
      batch.add(
        milliseconds: Self.element("time", in: body).flatMap { ImportTime.milliseconds($0) },
        latitude: Self.attribute("lat", in: attributes).flatMap(Double.init),
        longitude: Self.attribute("lon", in: attributes).flatMap(Double.init),
        altitude: Self.element("ele", in: body).flatMap(Double.init), accuracy: accuracy,
        speed: Self.element("speed", in: body).flatMap(Double.init),
        course: Self.element("course", in: body).flatMap(Double.init), line: line,
        location: record)
    }
  }

  /// The text of the first `<name>…</name>` in `body` (any namespace prefix), trimmed.
  private static func element(_ name: String, in body: ArraySlice<UInt8>) -> String? {
    let open = Array("<\(name)>".utf8)
    let prefixed = Array(":\(name)>".utf8)
    var index = body.startIndex
    while index < body.endIndex {
      guard body[index] == UInt8(ascii: "<") else {
        index += 1
        continue
      }
      var nameEnd = index + 1
      while nameEnd < body.endIndex, body[nameEnd] != UInt8(ascii: ">"),
        body[nameEnd] != UInt8(ascii: "<")
      {
        nameEnd += 1
      }
      guard nameEnd < body.endIndex, body[nameEnd] == UInt8(ascii: ">") else { return nil }
      let tag = body[index...nameEnd]
      if tag.elementsEqual(open)
        || (tag.first != UInt8(ascii: "/") && tag.count > prefixed.count
          && tag.suffix(prefixed.count).elementsEqual(prefixed) && !tag.contains(UInt8(ascii: " ")))
      {
        var end = nameEnd + 1
        while end < body.endIndex, body[end] != UInt8(ascii: "<") { end += 1 }
        return String(decoding: body[(nameEnd + 1)..<end], as: UTF8.self).trimmedWhitespace
          .description
      }
      index = nameEnd + 1
    }
    return nil
  }

  /// The value of the attribute `name` in a start tag.
  private static func attribute(_ name: String, in tag: ArraySlice<UInt8>) -> String? {
    let pattern = Array(name.utf8)
    var index = tag.startIndex
    while let found = tag[index...].firstRange(of: pattern) {
      index = found.upperBound
      let before = found.lowerBound > tag.startIndex ? tag[found.lowerBound - 1] : 0x20
      guard before == 0x20 || before == 0x09 || before == 0x0A || before == 0x0D else { continue }
      var cursor = found.upperBound
      while cursor < tag.endIndex, tag[cursor] == 0x20 { cursor += 1 }
      guard cursor < tag.endIndex, tag[cursor] == UInt8(ascii: "=") else { continue }
      cursor += 1
      while cursor < tag.endIndex, tag[cursor] == 0x20 { cursor += 1 }
      guard cursor < tag.endIndex, tag[cursor] == 0x22 || tag[cursor] == 0x27 else { return nil }
      let quote = tag[cursor]
      let valueStart = cursor + 1
      guard let valueEnd = tag[valueStart...].firstIndex(of: quote) else { return nil }
      return String(decoding: tag[valueStart..<valueEnd], as: UTF8.self).trimmedWhitespace
        .description
    }
    return nil
  }

  /// Finds the track points of a GPX text in order, counting lines.
  struct Scanner {
    let bytes: [UInt8]
    private var position = 0
    private var counted = 0
    /// The 1-based line of the last point found.
    private(set) var line: Int

    init(bytes: [UInt8], line: Int) {
      self.bytes = bytes
      self.line = line
    }

    /// The start of the next `<trkpt` (after `position`) and its tag name.
    mutating func nextPoint() -> (Int, String)? {
      while let open = find("<", from: position) {
        position = open + 1
        var end = position
        while end < bytes.count, bytes[end] != 0x20, bytes[end] != UInt8(ascii: ">"),
          bytes[end] != 0x0A, bytes[end] != 0x09, bytes[end] != 0x0D,
          bytes[end] != UInt8(ascii: "/")
        {
          end += 1
        }
        let name = String(decoding: bytes[position..<end], as: UTF8.self)
        let local = name.split(separator: ":").last.map(String.init) ?? name
        guard local == "trkpt" else { continue }
        countLines(to: open)
        return (open, name)
      }
      return nil
    }

    /// Moves past `offset`.
    mutating func advance(to offset: Int) { position = max(position, offset) }

    /// The offset of `text`'s first occurrence at or after `offset`.
    func find(_ text: String, from offset: Int) -> Int? {
      guard offset < bytes.count else { return nil }
      return bytes[offset...].firstRange(of: Array(text.utf8))?.lowerBound
    }

    private mutating func countLines(to offset: Int) {
      for index in counted..<offset where bytes[index] == 0x0A { line += 1 }
      counted = offset
    }
  }
}
