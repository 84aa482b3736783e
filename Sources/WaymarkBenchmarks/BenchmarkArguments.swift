import Foundation
import WaymarkProcess

/// A benchmark's command line, parsed by the process layer's parser (``ParsedArguments``)
/// against the options the benchmark declares: `waymark-bench <name> --help` lists them, and an
/// unknown option, a missing value or a value that is no number exits 64 with a message.
struct BenchmarkArguments {
  private let parsed: ParsedArguments
  private let benchmark: String

  /// Parses `arguments` (the words after the benchmark's name) against `table`; prints the
  /// help and exits 0 for `--help`, prints the error and exits 64 for a wrong line.
  init(_ arguments: [String], benchmark: String, declared table: OptionTable) {
    self.benchmark = benchmark
    let usage = "USAGE: waymark-bench \(benchmark) [options]"
    if arguments.contains("--help") || arguments.contains("-h") {
      print("\(usage)\n\nOPTIONS:\n\(table.listing)", terminator: "")
      exit(0)
    }
    do {
      parsed = try ParsedArguments(arguments, declared: table)
      _ = try parsed.requirePositionals([])
    } catch {
      Self.fail((error as? CommandError)?.message ?? "\(error)", benchmark: benchmark)
    }
  }

  static func fail(_ message: String, benchmark: String) -> Never {
    FileHandle.standardError.write(
      Data(
        ("Error: \(message)\nUSAGE: waymark-bench \(benchmark) [options]\n"
          + "  See 'waymark-bench \(benchmark) --help'.\n").utf8))
    exit(64)
  }

  /// The value of `name`: the last given, else its declared default, else `nil`.
  subscript(name: String) -> String? {
    parsed.value(name) ?? parsed.table[name]?.defaultValue
  }

  /// Whether `flag` was given. Only for a declared flag: whether an option that takes a value
  /// was given is whether ``subscript(_:)`` has a value (for one with no default).
  func has(_ flag: String) -> Bool {
    precondition(parsed.table[flag]?.takesValue == false, "\(flag) is not a declared flag")
    return parsed.has(flag)
  }

  /// The value of `name` (given, else `fallback` when there is one, else its declared default)
  /// as a whole number; exits 64 when it is none.
  func int(_ name: String, unlessGiven fallback: Int? = nil) -> Int {
    if let fallback, parsed.value(name) == nil { return fallback }
    guard let text = self[name], let value = Int(text)
    else {
      Self.fail(
        "'\(name)' expects a whole number, got '\(self[name] ?? "")'.", benchmark: benchmark)
    }
    return value
  }

  /// The value of `name` (given, else `fallback` when there is one, else its declared default)
  /// as a number; exits 64 when it is none.
  func double(_ name: String, unlessGiven fallback: Double? = nil) -> Double {
    if let fallback, parsed.value(name) == nil { return fallback }
    guard let text = self[name], let value = Double(text), value.isFinite else {
      Self.fail("'\(name)' expects a number, got '\(self[name] ?? "")'.", benchmark: benchmark)
    }
    return value
  }

  /// The value of `name` (given, else its declared default) as a comma-separated list of whole
  /// numbers; exits 64 when an item is none.
  func ints(_ name: String) -> [Int] {
    let items = (self[name] ?? "").split(separator: ",")
    let values = items.compactMap { Int($0) }
    guard values.count == items.count, !values.isEmpty else {
      Self.fail("'\(name)' expects whole numbers separated by commas.", benchmark: benchmark)
    }
    return values
  }

  /// The waymarkd to run: the path given with `--daemon` (``CommandOption/daemon``), else the
  /// one next to waymark-bench. Exits 66 when it is not an executable file.
  var daemon: String { executable("waymarkd", option: "--daemon") }

  /// The program `name`: the path given with `option`, else the one next to waymark-bench.
  /// Exits 66 (with a line saying so) when it is not an executable file.
  func executable(_ name: String, option: String) -> String {
    let path =
      parsed.value(option)
      ?? URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
      .appendingPathComponent(name).path
    guard FileManager.default.isExecutableFile(atPath: path) else {
      print("\(name) not found next to waymark-bench (\(path)); build it first")
      exit(66)
    }
    return path
  }

  /// A new directory for the benchmark `name`'s files, `waymark-<name>-bench-<pid>` in `--dir`
  /// (``CommandOption/directory``) or the temporary directory; the caller removes it.
  func workDirectory(_ name: String) throws -> String {
    let directory = self["--dir"] ?? FileManager.default.temporaryDirectory.path
    let work = (directory as NSString).appendingPathComponent("waymark-\(name)-bench-\(getpid())")
    try FileManager.default.createDirectory(atPath: work, withIntermediateDirectories: true)
    return work
  }
}
