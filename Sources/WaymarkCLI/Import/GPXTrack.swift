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
/// is read a chunk at a time: a point whose tag or closing tag is not complete yet waits, with
/// what follows it, for the next chunk, so the points and reports are those of reading the
/// file whole, wherever the chunks are cut. A point with no closing tag at the end of the
/// file is reported truncated, and nothing after it is read.
struct GPXTrack {
  /// The bytes from the first point (or tag) not read yet.
  private var pending: [UInt8] = []
  /// The 1-based line of `pending`'s first byte.
  private var line = 1
  /// Points met so far (`trkpt N` in reports).
  private var number = 0
  /// Whether a truncated point ended the reading.
  private var stopped = false

  /// Adds the points that `chunk` completes to `batch`.
  mutating func add(_ chunk: ArraySlice<UInt8>, to batch: ImportBatch) {
    guard !stopped else { return }
    pending.append(contentsOf: chunk)
    read(final: false, to: batch)
  }

  /// Adds the points of the file's end (a point cut off there is reported truncated).
  mutating func finish(to batch: ImportBatch) {
    guard !stopped else { return }
    read(final: true, to: batch)
    pending = []
  }

  /// Reads the complete points of ``pending`` (all of it when `final`), and keeps the rest.
  private mutating func read(final: Bool, to batch: ImportBatch) {
    let text = pending
    var scanner = Scanner(bytes: text, line: line, final: final)
    var keep = text.count
    scanning: while true {
      let start: Int
      let name: String
      switch scanner.nextPoint() {
      case .none: break scanning
      case .incomplete(let open):
        keep = open
        break scanning
      case .point(let open, let tagName): (start, name) = (open, tagName)
      }
      let line = scanner.line
      let foundTagEnd = scanner.find(">", from: start)
      let tagEnd = foundTagEnd ?? text.count
      let selfClosing = tagEnd > 0 && tagEnd < text.count && text[tagEnd - 1] == UInt8(ascii: "/")
      let foundBodyEnd = selfClosing ? tagEnd : scanner.find("</\(name)", from: tagEnd)
      if !final && (foundTagEnd == nil || foundBodyEnd == nil) {
        keep = start
        break scanning
      }
      number += 1
      let bodyEnd = foundBodyEnd ?? text.count
      let attributes = text[start..<tagEnd]
      let body = tagEnd < bodyEnd ? text[(tagEnd + 1)..<bodyEnd] : []
      scanner.advance(to: bodyEnd)
      let record = "\(name) \(number)"
      guard bodyEnd < text.count || selfClosing else {
        batch.bad(line: line, record, "truncated (no closing tag)")
        stopped = true
        break scanning
      }
      Self.add(body: body, attributes: attributes, line: line, record: record, to: batch)
    }
    line += text[0..<keep].count(where: { $0 == 0x0A })
    pending.removeFirst(keep)
  }

  /// Adds the point of one `<trkpt>`: its start tag's `attributes` and its `body`.
  private static func add(
    body: ArraySlice<UInt8>, attributes: ArraySlice<UInt8>, line: Int, record: String,
    to batch: ImportBatch
  ) {
    let fix = element("fix", in: body)
    if fix == "none" {
      return batch.bad(line: line, record, "<fix>none</fix>: not a position")
    }
    var accuracy: Double?
    if let hdop = element("hdop", in: body).flatMap(Double.init) {
      let status: FixStatus = fix == "dgps" ? .dgps : .gps
      accuracy = hdop * ErrorModel.userEquivalentRangeError(for: status)
    }
    batch.add(
      milliseconds: element("time", in: body).flatMap { ImportTime.milliseconds($0) },
      latitude: attribute("lat", in: attributes).flatMap(Double.init),
      longitude: attribute("lon", in: attributes).flatMap(Double.init),
      altitude: element("ele", in: body).flatMap(Double.init), accuracy: accuracy,
      speed: element("speed", in: body).flatMap(Double.init),
      course: element("course", in: body).flatMap(Double.init), line: line, location: record)
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
    /// What ``nextPoint()`` found.
    enum Found {
      /// A `<trkpt` (any prefix) at this offset, and its tag name.
      case point(Int, String)
      /// A tag whose name the text ends in (not final): it waits for more.
      case incomplete(Int)
      /// No more tag.
      case none
    }

    let bytes: [UInt8]
    /// Whether the text is the rest of the file (nothing more will come).
    let final: Bool
    private var position = 0
    private var counted = 0
    /// The 1-based line of the last point found.
    private(set) var line: Int

    init(bytes: [UInt8], line: Int, final: Bool) {
      self.bytes = bytes
      self.line = line
      self.final = final
    }

    /// The next `<trkpt` after the last one, or a tag cut off by the end of the text.
    mutating func nextPoint() -> Found {
      while let open = find("<", from: position) {
        position = open + 1
        var end = position
        while end < bytes.count, bytes[end] != 0x20, bytes[end] != UInt8(ascii: ">"),
          bytes[end] != 0x0A, bytes[end] != 0x09, bytes[end] != 0x0D,
          bytes[end] != UInt8(ascii: "/")
        {
          end += 1
        }
        if end == bytes.count && !final { return .incomplete(open) }
        let name = String(decoding: bytes[position..<end], as: UTF8.self)
        let local = name.split(separator: ":").last.map(String.init) ?? name
        guard local == "trkpt" else { continue }
        countLines(to: open)
        return .point(open, name)
      }
      return .none
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
