extension String {
  /// The text cut or right-padded with spaces to `length` characters: a fixed-width column of a
  /// table (what Foundation's `padding(toLength:withPad:startingAt:)` does for ASCII text).
  func padded(toLength length: Int) -> String {
    count >= length ? String(prefix(length)) : self + String(repeating: " ", count: length - count)
  }
}
