import Foundation

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

  /// The program `name`: the path given with `option`, else the one next to waymark-bench.
  /// Exits 66 (with a line saying so) when it is not an executable file.
  func executable(_ name: String, option: String) -> String {
    let path =
      values[option]
      ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
      print("\(name) not found next to waymark-bench (\(path)); build it first")
      exit(66)
    }
    return path
  }
}
