import Testing
import WaymarkCore

@Suite struct LogTextTests {
  @Test func plainTextIsKept() {
    #expect(LogText.escaped("root:/usr/bin/waymark") == "root:/usr/bin/waymark")
    #expect(LogText.escaped("Café Zürich · 東京") == "Café Zürich · 東京")
  }

  /// "\r\n" is one Swift Character: a check on Characters for "\n" misses it.
  @Test func crLFAsOneCharacterIsEscaped() {
    let forged = "a:/tmp/x\r\n<2>root: granted"
    #expect(forged.count == forged.unicodeScalars.count - 1)
    #expect(!forged.contains(where: { $0 == "\n" || $0 == "\r" }))  // what a Character check sees
    #expect(LogText.escaped(forged) == #"a:/tmp/x\x0D\x0A<2>root: granted"#)
  }

  @Test(arguments: [
    ("\u{0}", #"\x00"#), ("\u{1B}[2J", #"\x1B[2J"#), ("\u{7F}", #"\x7F"#),
    ("\u{9B}31m", #"\x9B31m"#), ("\u{85}", #"\x85"#), ("\t", #"\x09"#),
    ("\u{2028}", #"\u{2028}"#), ("\u{2029}", #"\u{2029}"#), ("\u{202E}", #"\u{202E}"#),
    ("\u{2066}", #"\u{2066}"#), ("\u{FEFF}", #"\u{FEFF}"#), (#"\x0A"#, #"\\x0A"#),
  ])
  func controlsBecomeVisibleEscapes(raw: String, expected: String) {
    #expect(LogText.escaped(raw) == expected)
  }

  /// The log's last line of defence: controls escaped, backslashes kept, so text escaped
  /// before is left as it is (no `\\x0A` from an escaped `\x0A`).
  @Test func controlsEscapedLeavesEscapedTextAlone() {
    let outside = "a:/tmp/\u{1B}[2K\r\n<2>x"
    let once = LogText.escaped(outside)
    #expect(LogText.controlsEscaped("client " + once) == "client " + once)
    #expect(LogText.controlsEscaped(outside) == once)
    #expect(LogText.controlsEscaped(#"C:\path"#) == #"C:\path"#)
  }

  /// Every scalar of the output is printable: no control, separator or override survives.
  @Test func nothingDangerousSurvivesAnyScalar() {
    var all = String.UnicodeScalarView()
    for value in UInt32(0)...0x3000 {
      if let scalar = Unicode.Scalar(value) { all.append(scalar) }
    }
    let escaped = LogText.escaped(String(all))
    #expect(escaped.unicodeScalars.allSatisfy { !LogText.needsEscape($0) || $0 == "\\" })
    #expect(
      !escaped.unicodeScalars.contains { $0.value < 0x20 || (0x7F...0x9F).contains($0.value) })
  }
}
