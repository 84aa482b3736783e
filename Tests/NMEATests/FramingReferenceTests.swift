import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkTesting

/// The word-at-a-time framer against a plain byte-by-byte statement of the rules, on every line
/// of the gpsd corpus and on seeded random mutations of sentences.
@Suite struct FramingReferenceTests {
  /// The framing rules, written as plainly as possible.
  static func reference(_ line: [UInt8]) -> NMEAFraming.Result {
    var bytes = line
    while let last = bytes.last, [0x0D, 0x0A, 0x20, 0x09, 0].contains(last) { bytes.removeLast() }
    guard let first = bytes.firstIndex(where: { $0 != 0x20 && $0 != 0x09 }) else { return .blank }
    if bytes[first] == UInt8(ascii: "#") { return .comment }
    guard
      let dollar = bytes.lastIndex(where: { $0 == UInt8(ascii: "$") || $0 == UInt8(ascii: "!") })
    else { return .bad(.junk) }
    if bytes.count - dollar > NMEAFraming.maximumSentenceLength { return .bad(.overlong) }
    let start = dollar + 1
    let star = bytes[start...].firstIndex(of: UInt8(ascii: "*")) ?? bytes.count
    let body = bytes[start..<star]
    if body.contains(where: { $0 < 0x20 || $0 > 0x7E }) { return .bad(.nonASCII) }
    let address = body.prefix { $0 != UInt8(ascii: ",") }.count
    guard star < bytes.count else {
      return address >= 5 ? .bad(.missingChecksum) : .bad(.truncated)
    }
    let hex = Array(bytes[(star + 1)...])
    func value(_ byte: UInt8) -> UInt8? { UInt8(String(UnicodeScalar(byte)), radix: 16) }
    guard hex.count >= 2, let high = value(hex[0]), let low = value(hex[1]) else {
      return .bad(.truncated)
    }
    guard hex.count == 2 else { return .bad(.junk) }
    guard high << 4 | low == body.reduce(0, ^) else { return .bad(.checksumMismatch) }
    guard address >= 3 else { return .bad(.truncated) }
    return .sentence(start: start, end: star, isEncapsulated: bytes[dollar] == UInt8(ascii: "!"))
  }

  static func frame(_ line: [UInt8]) -> NMEAFraming.Result {
    line.withUnsafeBufferPointer { buffer in
      // A zero-length buffer may have no base address: frame a valid pointer with count 0.
      var sentinel: UInt8 = 0
      return NMEAFraming.frame(
        buffer.baseAddress ?? withUnsafePointer(to: &sentinel) { $0 }, count: buffer.count)
    }
  }

  @Test(.enabled(if: Products.gpsdCorpus != nil, "Tests/Fixtures/gpsd is absent"))
  func corpusLinesFrameAsTheReferenceSays() throws {
    let corpus = try #require(Products.gpsdCorpus)
    var lines = 0
    var logs = 0
    for name in try FileManager.default.contentsOfDirectory(atPath: corpus.path)
    where name.hasSuffix(".log") {
      logs += 1
      let data = try Data(contentsOf: corpus.appendingPathComponent(name))
      for line in data.split(separator: 0x0A, omittingEmptySubsequences: false) {
        let bytes = Array(line)
        #expect(
          Self.frame(bytes) == Self.reference(bytes),
          "\(name): \(String(decoding: bytes, as: UTF8.self))")
        lines += 1
      }
    }
    // The count reaches Scripts/test.sh's summary.
    print("framing reference: \(lines) lines of \(logs) logs framed as the reference frames them")
    #expect(lines > 20_000)
  }

  @Test func mutatedSentencesFrameAsTheReferenceSays() {
    var generator = SeededGenerator(seed: 2026)
    let seeds = [
      NMEAWriter.checksummed("GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
      NMEAWriter.checksummed("GNRMC,001031.00,A,3348.8320,S,15117.3990,E,0.011,,010226,11.2,W,D,V"),
      "!AIVDM,1,1,,B,15MgK45P3@G?fl0E`JbR0OwT0@MS,0*4E\r\n",
    ]
    let alphabet =
      Array("$!*,.0123456789ABCDEFabcdefGPNSEW \r\n#".utf8) + [0x00, 0x1B, 0x7F, 0xC3, 0xFF]
    var differences = 0
    for round in 0..<20_000 {
      var bytes = Array(seeds[round % seeds.count].utf8)
      for _ in 0..<(1 + Int(generator.next() % 4)) {
        let position = Int(generator.next() % UInt64(bytes.count + 1))
        let byte = alphabet[Int(generator.next() % UInt64(alphabet.count))]
        switch generator.next() % 3 {
        case 0: bytes.insert(byte, at: position)
        case 1: if position < bytes.count { bytes[position] = byte }
        default: if position < bytes.count { bytes.remove(at: position) }
        }
      }
      if generator.next() % 10 == 0 {  // sometimes a long run of body bytes or a second sentence
        bytes.insert(contentsOf: Array(repeating: UInt8(ascii: "7"), count: 250), at: 8)
      }
      if Self.frame(bytes) != Self.reference(bytes) { differences += 1 }
    }
    #expect(differences == 0)
  }
}
