import Foundation
import Testing
import WaymarkCore

@Suite struct JSONLineTests {
  @Test func keepsKeyOrderAndFixedDecimals() {
    var line = JSONLine(class: "TPV")
    line.add("mode", 3)
    line.add("lat", -45.5, decimals: 9)
    line.add("speed", 0.0004, decimals: 3)
    line.add("missing", nil as Double?, decimals: 3)
    line.add("name", "a \"quoted\"\nname")
    #expect(
      line.string
        == #"{"class":"TPV","mode":3,"lat":-45.500000000,"speed":0.000,"name":"a \"quoted\"\nname"}"#
    )
  }

  @Test func fixedDecimalsMatchFoundationFormatting() {
    for value in [0.0, 1.5, -1.5, 123.456789, -0.0000001, 99.9995, 1e-9, 179.123456789] {
      var bytes: [UInt8] = []
      JSONLine.appendFixed(value, decimals: 6, to: &bytes)
      let ours = String(decoding: bytes, as: UTF8.self)
      let reference = String(format: "%.6f", value)
      // Foundation rounds half to even on the binary value; compare numerically.
      #expect(abs(Double(ours)! - Double(reference)!) <= 1.0e-6, "\(value): \(ours)")
    }
  }

  @Test func outputIsValidJSON() throws {
    var line = JSONLine(class: "X")
    line.add("control", "\u{01}tab\t")
    line.add("when", Date(timeIntervalSince1970: 0))
    let object = try JSONSerialization.jsonObject(with: Data(line.closed)) as? [String: Any]
    #expect(object?["control"] as? String == "\u{01}tab\t")
    #expect(object?["when"] as? String == "1970-01-01T00:00:00.000Z")
  }
}

@Suite struct TPVTests {
  @Test func tpvHasGpsdFieldsOnlyWhenKnown() throws {
    let time = Timestamp.parse("2026-11-29T12:00:07.250Z")!
    var fix = Fix(
      time: time, mode: .threeDimensional, status: .dgps,
      coordinate: Coordinate(latitude: -33.123456789, longitude: 151.5), altitudeMSL: 10,
      geoidSeparation: 20, speed: 1.23456, horizontalError: 4.5)
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(fix.tpv().closed)) as? [String: Any])
    #expect(object["class"] as? String == "TPV")
    #expect(object["mode"] as? Int == 3)
    #expect(object["status"] as? Int == 2)
    #expect(object["time"] as? String == "2026-11-29T12:00:07.250Z")
    #expect(object["lat"] as? Double == -33.123456789)
    #expect(object["altHAE"] as? Double == 30)
    #expect(object["speed"] as? Double == 1.235)
    #expect(object["track"] == nil)
    #expect(object["climb"] == nil)
    fix.mode = .noFix
    fix.status = .gps
    let noFix = fix.tpv().string
    #expect(!noFix.contains("lat") && !noFix.contains("altMSL") && !noFix.contains("status"))
  }

  @Test func appendedTPVEndsWithNewlineAndMatchesTheObject() {
    let fix = Fix(
      time: Date(timeIntervalSince1970: 0), mode: .twoDimensional,
      coordinate: Coordinate(latitude: 0.5, longitude: -0.000000001))
    var bytes: [UInt8] = []
    fix.appendTPV(to: &bytes)
    #expect(bytes.last == UInt8(ascii: "\n"))
    #expect(String(decoding: bytes.dropLast(), as: UTF8.self) == fix.tpv().string)
    #expect(
      fix.tpv().string
        == #"{"class":"TPV","mode":2,"time":"1970-01-01T00:00:00.000Z","lat":0.500000000,"lon":-0.000000001}"#
    )
  }
}

@Suite struct JSONLineTerminalTests {
  /// A string with every kind of scalar a terminal acts on: ESC, CR LF (one `Character`), NUL,
  /// DEL, CSI (U+009B), the line separator, a bidirectional override and the byte-order mark.
  static let hostile = "geo\u{1B}[2K\r\nclue\u{0}\u{7F}\u{9B}31m\u{2028}x\u{202E}y\u{FEFF}é✓"

  /// Every such scalar is written as `\uNNNN`; a JSON reader gets the same string back.
  @Test func controlsAreEscapedAndTheStringRoundTrips() throws {
    var line = JSONLine(class: "GRANT")
    line.add("client", Self.hostile)
    let text = line.string
    #expect(!text.unicodeScalars.contains { $0 != "\\" && LogText.needsEscape($0) }, "\(text)")
    for escape in [
      #"\u001b"#, #"\r\n"#, #"\u0000"#, #"\u007f"#, #"\u009b"#, #"\u2028"#,
      #"\u202e"#, #"\ufeff"#,
    ] {
      #expect(text.contains(escape), "\(escape) in \(text)")
    }
    #expect(text.contains("é✓"))
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
    #expect(object["client"] as? String == Self.hostile)
  }

  /// A JSON line read from elsewhere with raw controls inside its strings: escaped, still the
  /// same JSON; a clean line is returned as it is.
  @Test func escapingControlsOfAReceivedLine() throws {
    let raw = #"{"class":"ASK","client":"\#(Self.hostile)","note":"a\\b"}"#
    let safe = JSONLine.escapingControls(raw)
    #expect(!safe.unicodeScalars.contains { $0 != "\\" && LogText.needsEscape($0) })
    #expect(safe.contains(#""note":"a\\b""#))
    let object = try #require(
      try JSONSerialization.jsonObject(
        with: Data(safe.utf8), options: [.fragmentsAllowed]) as? [String: Any])
    #expect(object["client"] as? String == Self.hostile)
    let clean = #"{"class":"ASK","client":"alice:/usr/bin/gnome-maps"}"#
    #expect(JSONLine.escapingControls(clean) == clean)
  }
}
