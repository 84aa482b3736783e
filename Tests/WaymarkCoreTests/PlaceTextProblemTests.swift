import Testing
import WaymarkCore

/// `Place.textProblem`: printable ASCII passes without the category lookup, every other scalar
/// by its general category; the refused ones are caught wherever they stand.
@Suite struct PlaceTextProblemTests {
  @Test("printable ASCII and other assigned visible scalars pass")
  func accepted() {
    let ascii = String(decoding: (0x20...0x7E).map { UInt8($0) }, as: UTF8.self)
    #expect(Place.textProblem(ascii) == nil)
    #expect(Place.textProblem("Boulangerie du Marché") == nil)
    #expect(Place.textProblem("Café \u{00A0}☕ 東京 🏠") == nil)
  }

  @Test(
    "a control, format, separator or unassigned scalar is refused, wherever it stands",
    arguments: [
      "\u{0}", "\u{7}", "\n", "\u{1F}", "\u{7F}", "\u{85}", "\u{202E}", "\u{200B}",
      "\u{2028}", "\u{2029}", "\u{0378}", "\u{E0001}",
    ])
  func refused(scalar: String) {
    for text in [scalar, "a" + scalar, scalar + "b", "é" + scalar + "é"] {
      #expect(Place.textProblem(text) == "contains a control character", "\(text.debugDescription)")
    }
  }

  @Test("empty and too long are named before the characters")
  func lengths() {
    #expect(Place.textProblem("") == "is empty")
    #expect(Place.textProblem(String(repeating: "a", count: 200)) == nil)
    #expect(Place.textProblem(String(repeating: "a", count: 201)) == "is longer than 200 bytes")
  }
}
