/// The `--name value` options and `--flag`s of a benchmark's command line.
struct BenchmarkArguments {
  private var values: [String: String] = [:]
  private var flags: Set<String> = []

  /// Reads `arguments`; a word in `flags` takes no value, any other `--name` takes the next word.
  init(_ arguments: [String], flags known: Set<String> = []) {
    var words = arguments[...]
    while let word = words.popFirst() {
      if known.contains(word) {
        flags.insert(word)
      } else if let value = words.popFirst() {
        values[word] = value
      }
    }
  }

  /// The value of `name`, or `nil`.
  subscript(name: String) -> String? { values[name] }

  /// Whether `flag` was given.
  func has(_ flag: String) -> Bool { flags.contains(flag) }
}
