import FoundationEssentials
import Glibc
import WaymarkCore

/// Decodes an NMEA 0183 byte stream line by line into fixes, one per epoch.
///
/// The decoder is a value that keeps its state between calls, so a log can be fed in any
/// number of pieces. It never throws and never stops on bad input: bad lines are counted by kind
/// in ``statistics`` and reported by ``decode(line:count:emit:)``'s result.
public struct NMEADecoder {
  /// What one line turned out to be.
  public enum LineOutcome: Equatable, Sendable {
    /// An accepted sentence, used (or skipped when of an unused type).
    case sentence
    /// An accepted sentence with an unreadable field (read as unknown).
    case malformedField
    /// A `#` line.
    case comment
    /// An empty line.
    case blank
    /// A rejected line.
    case bad(BadLineKind)
  }

  /// The counts so far.
  public var statistics: NMEAStatistics {
    var result = counters
    result.sentencesByType = sentenceTypeCounts
    result.epochs = assembler.epochs
    result.fixesWithPosition = assembler.fixesWithPosition
    return result
  }
  private var counters = NMEAStatistics()
  private var assembler: FixAssembler
  private var parser = SentenceParser(detailed: false)
  private let storage = NMEAFieldStorage()
  private var counts = [Int](repeating: 0, count: 10)
  private var otherCounts: [String: Int] = [:]
  private var sawSentence = false
  private var pending: [UInt8] = []

  private static let typeNames = [
    "GGA", "RMC", "GNS", "GLL", "VTG", "GSA", "GSV", "GST", "ZDA", "TXT",
  ]

  /// Creates a decoder for a log at `path` (used for provenance only).
  ///
  /// - Parameters:
  ///   - path: the log's path, recorded in each fix's provenance.
  ///   - defaultDate: the date to assume until an RMC or ZDA gives one. A `# Date: yyyy-mm-dd`
  ///     header line seeds it too, unless a default is given here.
  public init(path: String, defaultDate: UTCDate? = nil) {
    assembler = FixAssembler(path: path, defaultDate: defaultDate)
    hasDefaultDate = defaultDate != nil
  }

  private let hasDefaultDate: Bool

  /// Decodes one line (with or without its terminator) and calls `emit` for each finished fix
  /// (moved to it, not copied).
  public mutating func decode(
    line bytes: UnsafePointer<UInt8>, count: Int, emit: (consuming Fix) -> Void
  ) -> LineOutcome {
    counters.lines += 1
    let lineNumber = counters.lines
    let (framed, commas) = NMEAFraming.frame(bytes, count: count, fields: storage)
    switch framed {
    case .blank:
      counters.blankLines += 1
      return .blank
    case .comment:
      counters.commentLines += 1
      if !sawSentence && !hasDefaultDate { readHeader(bytes, count: count) }
      return .comment
    case .bad(let kind):
      counters.badLines[kind, default: 0] += 1
      return .bad(kind)
    case .sentence(let start, let end, let isEncapsulated):
      sawSentence = true
      let fields = NMEAFields(
        base: bytes, start: start, end: end, commas: commas, storage: storage)
      parser.century = assembler.knownCentury
      assembler.talkerKey = Int(bytes[start]) << 8 | Int(bytes[start + 1])
      if !isEncapsulated, let type = SentenceParser.commonType(fields) {
        // The usual types go straight to the assembler, as `parse` and `add` would take them.
        parser.begin()
        switch type {
        case .gga:
          counts[0] += 1
          assembler.add(gga: parser.gga(fields), line: lineNumber, emit: emit)
        case .rmc:
          counts[1] += 1
          assembler.add(rmc: parser.rmc(fields), line: lineNumber, emit: emit)
        case .gsa:
          counts[5] += 1
          assembler.add(gsa: parser.gsa(fields))
        case .gsv:
          counts[6] += 1
          assembler.add(gsv: parser.gsv(fields))
        case .gst:
          counts[7] += 1
          assembler.add(gst: parser.gst(fields), line: lineNumber, emit: emit)
        }
      } else {
        let sentence = parser.parse(fields, isEncapsulated: isEncapsulated)
        tally(sentence)
        assembler.add(sentence, line: lineNumber, emit: emit)
      }
      if parser.malformed {
        counters.badLines[.malformedField, default: 0] += 1
        return .malformedField
      }
      return .sentence
    }
  }

  /// A rejected line, reported when decoding stops at it.
  public struct BadLine: Sendable, Hashable, Error {
    /// 1-based line number.
    public var line: Int
    /// Why the line was rejected; ``BadLineKind/malformedField`` for an accepted sentence with
    /// an unreadable field.
    public var kind: BadLineKind

    /// Creates a report.
    public init(line: Int, kind: BadLineKind) {
      self.line = line
      self.kind = kind
    }
  }

  /// Decodes a chunk of a byte stream, splitting it at line feeds. An incomplete last line is
  /// kept until the next call or ``finish(stopOnBadLine:emit:)``.
  ///
  /// - Parameters:
  ///   - chunk: the next bytes of the stream.
  ///   - stopOnBadLine: stop at the first bad line (or unreadable field) and return it; the
  ///     rest of the chunk is not decoded. For `--strict`.
  ///   - emit: called with each finished fix, which it takes over (`consuming`: the fix is
  ///     moved to it, not copied).
  /// - Returns: the bad line decoding stopped at, or `nil`.
  @discardableResult
  public mutating func decode(
    chunk: UnsafeRawBufferPointer, stopOnBadLine: Bool = false, emit: (consuming Fix) -> Void
  ) -> BadLine? {
    guard let base = chunk.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
    var lineStart = 0
    let count = chunk.count
    while lineStart < count,
      let newline = memchr(base + lineStart, 0x0A, count - lineStart)
    {
      let index = UnsafeRawPointer(newline) - UnsafeRawPointer(base)
      let outcome: LineOutcome
      if pending.isEmpty {
        outcome = decode(line: base + lineStart, count: index - lineStart, emit: emit)
      } else {
        pending.append(
          contentsOf: UnsafeBufferPointer(start: base + lineStart, count: index - lineStart))
        outcome = decodePending(emit: emit)
      }
      lineStart = index + 1
      if stopOnBadLine, let bad = Self.badLine(outcome, line: counters.lines) { return bad }
    }
    if lineStart < count {
      pending.append(
        contentsOf: UnsafeBufferPointer(start: base + lineStart, count: count - lineStart))
    }
    return nil
  }

  private mutating func decodePending(emit: (consuming Fix) -> Void) -> LineOutcome {
    let line = pending
    pending.removeAll(keepingCapacity: true)
    return line.withUnsafeBufferPointer {
      decode(line: $0.baseAddress!, count: $0.count, emit: emit)
    }
  }

  private static func badLine(_ outcome: LineOutcome, line: Int) -> BadLine? {
    switch outcome {
    case .bad(let kind): BadLine(line: line, kind: kind)
    case .malformedField: BadLine(line: line, kind: .malformedField)
    default: nil
    }
  }

  /// Ends the input: decodes a pending last line and emits the last epoch's fix.
  ///
  /// - Returns: the pending last line when it was bad and `stopOnBadLine` is set.
  @discardableResult
  public mutating func finish(stopOnBadLine: Bool = false, emit: (consuming Fix) -> Void)
    -> BadLine?
  {
    if !pending.isEmpty {
      let outcome = decodePending(emit: emit)
      if stopOnBadLine, let bad = Self.badLine(outcome, line: counters.lines) { return bad }
    }
    assembler.finish(emit: emit)
    return nil
  }

  private mutating func tally(_ sentence: NMEASentence) {
    switch sentence {
    case .gga: counts[0] += 1
    case .rmc: counts[1] += 1
    case .gns: counts[2] += 1
    case .gll: counts[3] += 1
    case .vtg: counts[4] += 1
    case .gsa: counts[5] += 1
    case .gsv: counts[6] += 1
    case .gst: counts[7] += 1
    case .zda: counts[8] += 1
    case .txt: counts[9] += 1
    case .proprietary(let address): otherCounts[address, default: 0] += 1
    case .encapsulated(let address): otherCounts["!" + address, default: 0] += 1
    case .unsupported(let address):
      let type = address.count == 5 ? String(address.suffix(3)) : address
      otherCounts[type, default: 0] += 1
    }
  }

  private var sentenceTypeCounts: [String: Int] {
    var result = otherCounts
    for (index, name) in NMEADecoder.typeNames.enumerated() where counts[index] > 0 {
      result[name, default: 0] += counts[index]
    }
    return result
  }

  /// Reads a `# Date: yyyy-mm-dd` header line.
  private mutating func readHeader(_ bytes: UnsafePointer<UInt8>, count: Int) {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    let trimmed = text.drop { $0 == "#" || $0 == " " }
    guard trimmed.hasPrefix("Date:") else { return }
    let value = trimmed.dropFirst(5).trimmedWhitespace
    if let date = UTCDate(iso: value.prefix(10)) { assembler.seed(date: date) }
  }
}

extension NMEADecoder {
  /// One line parsed on its own, for tests and tools; the hot path never builds this.
  public struct ParsedLine: Sendable, Hashable {
    /// The typed sentence, or `nil` when the line was not accepted.
    public var sentence: NMEASentence?
    /// Why the line was rejected, when it was.
    public var badLine: BadLineKind?
    /// Whether a field of the accepted sentence could not be read.
    public var hasMalformedField: Bool
  }

  /// Frames and parses a single line.
  public static func parseLine(_ line: String) -> ParsedLine {
    let storage = NMEAFieldStorage()
    return Array(line.utf8).withUnsafeBufferPointer { buffer in
      withExtendedLifetime(storage) {
        // The same framing and field splitting as `decode(line:count:emit:)`.
        let (framed, commas) = NMEAFraming.frame(
          buffer.baseAddress!, count: buffer.count, fields: storage)
        switch framed {
        case .blank, .comment:
          return ParsedLine(sentence: nil, badLine: nil, hasMalformedField: false)
        case .bad(let kind):
          return ParsedLine(sentence: nil, badLine: kind, hasMalformedField: false)
        case .sentence(let start, let end, let isEncapsulated):
          var parser = SentenceParser()
          let fields = NMEAFields(
            base: buffer.baseAddress!, start: start, end: end, commas: commas, storage: storage)
          let sentence = parser.parse(fields, isEncapsulated: isEncapsulated)
          return ParsedLine(sentence: sentence, badLine: nil, hasMalformedField: parser.malformed)
        }
      }
    }
  }
}
