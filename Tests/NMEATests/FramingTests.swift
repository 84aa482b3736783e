import NMEA
import Testing

@Suite struct FramingTests {
  static func frame(_ line: String) -> NMEAFraming.Result {
    Array(line.utf8).withUnsafeBufferPointer { NMEAFraming.frame($0.baseAddress!, count: $0.count) }
  }

  static func isSentence(_ result: NMEAFraming.Result) -> Bool {
    if case .sentence = result { return true }
    return false
  }

  @Test func acceptsValidSentenceWithCRLF() {
    #expect(Self.isSentence(Self.frame("$GPGLL,4916.45,N,12311.12,W,225444,A,*1D\r\n")))
  }

  @Test func acceptsLowerCaseHexChecksum() {
    // This body's checksum is 0x2F: a hex letter, so case matters.
    let upper = NMEAWriter.checksummed("GPTXT,01,01,02,b")
    let checksum = upper.utf8.split(separator: UInt8(ascii: "*"))[1].prefix(2)
    #expect(String(decoding: checksum, as: UTF8.self) == "2F")
    #expect(Self.isSentence(Self.frame("$GPTXT,01,01,02,b*2f")))
    #expect(Self.isSentence(Self.frame("$GPTXT,01,01,02,b*2F")))
  }

  @Test func restartsAtTheLastDollar() {
    // A truncated GGA glued in front of a complete GLL: the GLL must be recovered.
    let line = "$GPGGA,030130,49" + NMEAWriter.checksummed("GPGLL,4916.45,N,12311.12,W,225444,A")
    guard case .sentence(let start, _, _) = Self.frame(line) else {
      Issue.record("not framed")
      return
    }
    #expect(start == 17)
    #expect(
      Self.isSentence(Self.frame("$" + NMEAWriter.checksummed("GPZDA,120000.00,01,01,2026,,"))))
  }

  @Test(arguments: [
    ("$GPGLL,4916.45,N,12311.12,W,225444,A,*1E", BadLineKind.checksumMismatch),
    ("$GPGLL,4916.45,N,12311.12,W,225444,A,", .missingChecksum),
    ("$GPGLL,4916.45,N,12311.12,W,225444,A,*1", .truncated),
    ("$GP", .truncated),
    ("hello world", .junk),
    ("$GPGLL,4916.45,N,12311.12,W,225444,A,*1D trailing", .junk),
    ("$GPTXT," + String(repeating: "X", count: 300) + "*00", .overlong),
    ("$GPTXT,01,01,02,caf\u{E9}*00", .nonASCII),
    ("$GPTXT,01,01,02,\u{1B}[0m*00", .nonASCII),
  ])
  func classifiesBadLines(line: String, kind: BadLineKind) {
    #expect(Self.frame(line) == .bad(kind))
  }

  @Test func commentsAndBlanks() {
    #expect(Self.frame("# Date: 2026-01-01") == .comment)
    #expect(Self.frame("  # indented") == .comment)
    #expect(Self.frame("   \r\n") == .blank)
    #expect(Self.frame("") == .blank)
  }

  @Test func encapsulatedSentencesAreFramed() {
    let line =
      "!" + NMEAWriter.checksummed("AIVDM,1,1,,B,15MgK45P3@G?fl0E`JbR0OwT0@MS,0").dropFirst()
    guard case .sentence(_, _, let isEncapsulated) = Self.frame(line) else {
      Issue.record("AIS line not framed")
      return
    }
    #expect(isEncapsulated)
  }
}
