/// Text from outside (a program path, a place name, a hook's output, a client id) made safe for
/// a log line or a terminal.
///
/// Escaping works scalar by scalar, never by `Character`: a Swift `Character` can hold `"\r\n"`
/// or a control followed by combining marks, so a check on characters lets them through.
public enum LogText {
  /// `text` with every scalar that could end a line, move the cursor, start an escape sequence
  /// or hide text written as a visible escape:
  ///
  /// - C0 controls (U+0000–U+001F, NUL, CR, LF, TAB and ESC among them), DEL (U+007F) and the
  ///   C1 controls (U+0080–U+009F, CSI U+009B among them) become `\xNN`;
  /// - the line and paragraph separators (U+2028, U+2029), the bidirectional embeddings,
  ///   overrides and isolates (U+202A–U+202E, U+2066–U+2069) and the byte-order mark (U+FEFF)
  ///   become `\u{NNNN}`;
  /// - a backslash becomes `\\`, so that an escape in the output always comes from here.
  ///
  /// Everything else, including any other non-ASCII letter, is kept as it is.
  public static func escaped(_ text: some StringProtocol) -> String {
    escape(text, keepingBackslashes: false)
  }

  /// `text` with the same scalars escaped as ``escaped(_:)``, except the backslash, which is
  /// kept: the last line of defence of a log, applied to whole records that may already hold
  /// outside text escaped by ``escaped(_:)`` (which it leaves unchanged).
  public static func controlsEscaped(_ text: some StringProtocol) -> String {
    escape(text, keepingBackslashes: true)
  }

  /// `text` cut to at most `limit` Unicode scalars (the last one `…` when it was cut): how a
  /// string from outside that is shown to a person (a purpose in an agent's question) is
  /// bounded. Cut by scalar, like ``escaped(_:)``; escape the result where it is shown.
  ///
  /// - Parameters:
  ///   - text: the text.
  ///   - limit: the most scalars kept, at least 1.
  /// - Returns: `text`, or its first `limit - 1` scalars and `…`.
  public static func bounded(_ text: String, to limit: Int) -> String {
    let scalars = text.unicodeScalars
    guard scalars.count > max(1, limit) else { return text }
    var cut = String.UnicodeScalarView(scalars.prefix(max(1, limit) - 1))
    cut.append("…")
    return String(cut)
  }

  /// Whether ``escaped(_:)`` changes `scalar`.
  public static func needsEscape(_ scalar: Unicode.Scalar) -> Bool {
    switch scalar.value {
    case 0x00...0x1F, 0x7F...0x9F, 0x5C: true
    case 0x2028, 0x2029, 0x202A...0x202E, 0x2066...0x2069, 0xFEFF: true
    default: false
    }
  }

  private static func escape(_ text: some StringProtocol, keepingBackslashes: Bool) -> String {
    func changes(_ scalar: Unicode.Scalar) -> Bool {
      needsEscape(scalar) && !(keepingBackslashes && scalar == "\\")
    }
    guard text.unicodeScalars.contains(where: changes) else { return String(text) }
    var result = String.UnicodeScalarView()
    for scalar in text.unicodeScalars {
      guard changes(scalar) else {
        result.append(scalar)
        continue
      }
      let escape: String
      if scalar == "\\" {
        escape = "\\\\"
      } else if scalar.value < 0x100 {
        escape = "\\x" + hex(scalar.value, digits: 2)
      } else {
        escape = "\\u{" + hex(scalar.value, digits: 4) + "}"
      }
      result.append(contentsOf: escape.unicodeScalars)
    }
    return String(result)
  }

  private static func hex(_ value: UInt32, digits: Int) -> String {
    let text = String(value, radix: 16, uppercase: true)
    return String(repeating: "0", count: max(0, digits - text.count)) + text
  }
}
