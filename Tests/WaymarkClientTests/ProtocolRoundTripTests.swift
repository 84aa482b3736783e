import Foundation
import Testing
import WaymarkClient
import WaymarkCore

/// Decodes a line as a client reads it (without its newline).
private func decode(_ bytes: [UInt8]) -> Result<DaemonMessage, DaemonMessageError> {
  var line = bytes
  if line.last == 0x0A { line.removeLast() }
  return DaemonMessage.parse(String(decoding: line, as: UTF8.self))
}

/// Values → bytes → values, and bytes → a value or a typed error, for every class the daemon
/// writes: the round-trip fuzzer of the protocol, with a fixed seed (the libFuzzer harness
/// `Fuzz/DaemonMessageFuzz.swift` checks the same on its own inputs).
@Suite("Protocol round trip")
struct ProtocolRoundTripTests {
  /// Every class, 2,000 values each: the line decodes to the value it was written from, and is
  /// one object with one LF at its end.
  @Test func valuesSurviveTheWire() throws {
    var samples = ProtocolSamples(seed: 0x3737)
    var classes: Set<String> = []
    for index in 0..<32_000 {
      let message = samples.message(kind: index % 16)
      let bytes = message.line
      #expect(bytes.last == 0x0A && bytes.dropLast().allSatisfy { $0 != 0x0A })
      let decoded = try decode(bytes).get()
      classes.insert(decoded.className.hasPrefix("LATER_") ? "unknown" : decoded.className)
      switch (message, decoded) {
      case (.location(let fix), .location(let read)):
        // The TPV keeps what it writes: the fix's time, mode, status, position and numbers.
        #expect(read.time == fix.time && read.mode == fix.mode && read.status == fix.status)
        #expect(read.coordinate == fix.coordinate && read.speed == fix.speed)
        #expect(read.track == fix.track && read.horizontalError == fix.horizontalError)
        #expect(DaemonMessage.location(read).line == bytes)
      case (.visit(let stay), .visit(let read)):
        #expect(read.arrivalDate == stay.arrivalDate && read.departureDate == stay.departureDate)
        #expect(read.coordinate == stay.coordinate && read.fixCount == stay.fixCount)
        #expect(read.placeID == stay.placeID && read.source == stay.source)
        #expect(DaemonMessage.visit(read).line == bytes)
      default:
        #expect(decoded == message, "\(String(decoding: bytes, as: UTF8.self))")
      }
    }
    #expect(classes.count == 16, "\(classes.sorted())")
  }

  /// The positive control of the mutations: an untouched line decodes.
  @Test func anUntouchedLineDecodes() {
    var samples = ProtocolSamples(seed: 7)
    for kind in 0..<16 {
      let message = samples.message(kind: kind)
      #expect((try? decode(message.line).get()) != nil, "\(message.className)")
    }
  }

  /// Lines with bytes flipped, inserted, removed or cut, and random bytes: each gives a message
  /// or a `DaemonMessageError` naming what is wrong, never a trap; what decodes writes a line
  /// that decodes to the same message again (the codec is stable on any input it accepts).
  @Test func mutatedBytesGiveAMessageOrATypedError() {
    var samples = ProtocolSamples(seed: 0xB17E)
    var failures = 0
    var successes = 0
    for index in 0..<40_000 {
      var bytes = Array(samples.message(kind: index % 16).line.dropLast())
      if index % 10 == 9 {
        bytes = (0..<samples.int(0...64)).map { _ in UInt8(samples.int(0...255)) }
      }
      for _ in 0..<samples.int(1...4) where !bytes.isEmpty {
        let at = samples.int(0...(bytes.count - 1))
        switch samples.int(0...3) {
        case 0: bytes[at] ^= UInt8(1 << samples.int(0...7))
        case 1: bytes.insert(Array(#"{}[]",:0-.e\"#.utf8)[samples.int(0...11)], at: at)
        case 2: bytes.remove(at: at)
        default: bytes.removeLast(bytes.count - at)
        }
      }
      switch decode(bytes) {
      case .failure(let error):
        failures += 1
        #expect(!error.message.isEmpty)
      case .success(let message):
        successes += 1
        if case .unknown = message { continue }
        let again = message.line
        guard let reread = try? decode(again).get() else {
          Issue.record("\(String(decoding: again, as: UTF8.self)) does not decode")
          continue
        }
        #expect(reread.line == again, "\(String(decoding: again, as: UTF8.self))")
      }
    }
    // Both outcomes are exercised: the mutations are neither all harmless nor all fatal.
    #expect(failures > 1000 && successes > 1000, "\(failures) errors, \(successes) messages")
  }
}
