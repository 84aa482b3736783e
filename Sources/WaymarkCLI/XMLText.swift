/// Text for XML, SVG and HTML: escaped for character data and attribute values.
enum XMLText {
  /// `text` with `&`, `<`, `>`, `"` and `'` as entities, and line breaks as `&#10;` (so that a
  /// multi-line attribute value keeps its lines).
  static func escaped(_ text: String) -> String {
    var out = ""
    out.reserveCapacity(text.utf8.count)
    for character in text {
      switch character {
      case "&": out += "&amp;"
      case "<": out += "&lt;"
      case ">": out += "&gt;"
      case "\"": out += "&quot;"
      case "'": out += "&apos;"
      case "\n": out += "&#10;"
      default: out.append(character)
      }
    }
    return out
  }
}
