extension StringProtocol {
  /// The text without leading and trailing whitespace and line breaks (Unicode `White_Space`,
  /// as `Character.isWhitespace` defines it), without Foundation's `CharacterSet`.
  public var trimmedWhitespace: SubSequence {
    guard let first = firstIndex(where: { !$0.isWhitespace }) else { return self[endIndex...] }
    let last = lastIndex(where: { !$0.isWhitespace })!
    return self[first...last]
  }
}
