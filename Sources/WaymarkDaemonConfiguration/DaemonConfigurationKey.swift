import FoundationEssentials
import WaymarkMQTT
import WaymarkTraccar

/// One key of `waymark.conf`: its name, the value the shipped file shows, the comment there, and
/// how a value is read.
///
/// ``DaemonConfiguration/keys`` lists every key in the order of the shipped file: the parser
/// dispatches on it, and ``DaemonConfiguration/shippedFile`` (the shipped `config/waymark.conf`,
/// from which `waymark docs man waymark.conf.5` renders the manual page) is written from it, so
/// that a key, its default and its documentation live in one row.
struct DaemonConfigurationKey: Sendable {
  /// What the shipped file shows on the key's commented-out `#key = value` line.
  enum Shown: Sendable, Equatable {
    /// The default: a file with this line reads as one without it.
    case `default`(String)
    /// An example: the key has no fixed default (none, or one that depends on the machine).
    case example(String)
    /// No line: a key that is no longer used.
    case none
  }

  /// How a value is read.
  enum Parser: Sendable {
    /// Sets part of the configuration.
    case setting(@Sendable (String, inout DaemonConfiguration) throws(Problem) -> Void)
    /// Sets part of the MQTT link: read after every other line, once `mqtt` is known.
    case mqtt(@Sendable (String, inout MQTTSettings) throws(Problem) -> Void)
    /// Sets part of the Traccar link: read after every other line, once `traccar` is known.
    case traccar(@Sendable (String, inout TraccarSettings) throws(Problem) -> Void)
    /// A key that is no longer used: always refused, with this explanation.
    case retired(String)
  }

  /// Why a value is refused: the parser prefixes it with the key, and names the file and line.
  struct Problem: Error {
    var message: String

    init(_ message: String) { self.message = message }
  }

  /// The key, in lower case.
  var name: String
  /// The value on the key's line in the shipped file.
  var shown: Shown
  /// Whether a blank line opens a new group before the key in the shipped file.
  var opensGroup: Bool
  /// The comment before the key's line in the shipped file, without the `# ` of each line (empty
  /// when the comment of the group above covers the key).
  var help: String
  /// How its value is read.
  var parser: Parser

  init(
    _ name: String, _ shown: Shown, opensGroup: Bool = false, help: String = "", _ parser: Parser
  ) {
    self.name = name
    self.shown = shown
    self.opensGroup = opensGroup
    self.help = help
    self.parser = parser
  }

  /// The rows by key name.
  static let byName: [String: DaemonConfigurationKey] = Dictionary(
    uniqueKeysWithValues: all.map { ($0.name, $0) })

  /// The key's lines in the shipped file: a blank line when it opens a group, its comment, and
  /// `#key = value`.
  var shippedLines: [String] {
    var lines = opensGroup ? [""] : []
    if !help.isEmpty {
      lines += help.split(separator: "\n", omittingEmptySubsequences: false).map { "# \($0)" }
    }
    switch shown {
    case .default(let value), .example(let value): lines.append("#\(name) = \(value)")
    case .none: break
    }
    return lines
  }
}

// MARK: - Parsers and value readers

extension DaemonConfigurationKey.Parser {
  typealias Problem = DaemonConfigurationKey.Problem

  /// A number, `> above` or `>= atLeast`, given to `set`.
  static func number(
    above lower: Double? = nil, atLeast minimum: Double? = nil,
    _ set: @escaping @Sendable (inout DaemonConfiguration, Double) -> Void
  ) -> Self {
    .setting { value, configuration throws(Problem) in
      let number = try DaemonConfigurationKey.number(value, above: lower, atLeast: minimum)
      set(&configuration, number)
    }
  }

  /// A whole number in `range` (of `unit`, named in the error), given to `set`.
  static func whole(
    in range: ClosedRange<Int>, of unit: String? = nil,
    _ set: @escaping @Sendable (inout DaemonConfiguration, Int) -> Void
  ) -> Self {
    .setting { value, configuration throws(Problem) in
      guard let count = Int(value), range.contains(count) else {
        throw Problem("expected a whole number\(unit.map { " of \($0)" } ?? "") in \(range)")
      }
      set(&configuration, count)
    }
  }

  /// `on`, `yes` or `true`; `off`, `no` or `false`, given to `set`; anything else is refused as
  /// "expected `expected`".
  static func onOff(
    expected: String, _ set: @escaping @Sendable (inout DaemonConfiguration, Bool) -> Void
  ) -> Self {
    .setting { value, configuration throws(Problem) in
      switch value.lowercased() {
      case "yes", "on", "true": set(&configuration, true)
      case "no", "off", "false": set(&configuration, false)
      default: throw Problem("expected \(expected)")
      }
    }
  }
}

extension DaemonConfigurationKey {
  /// A finite number, `> lower` or `>= minimum`.
  static func number(_ value: String, above lower: Double? = nil, atLeast minimum: Double? = nil)
    throws(Problem) -> Double
  {
    guard let number = Double(value), number.isFinite else {
      throw Problem("expected a number, found '\(value)'")
    }
    if let lower, number <= lower { throw Problem("expected a number > \(Int(lower))") }
    if let minimum, number < minimum { throw Problem("expected a number >= \(Int(minimum))") }
    return number
  }

  /// `value` when it names a file this process can read (a CA certificate).
  static func readableFile(_ value: String) throws(Problem) -> String {
    guard FileManager.default.isReadableFile(atPath: value) else {
      throw Problem("cannot read '\(value)'")
    }
    return value
  }

  /// An outbox's bound: a whole number of 100 or more.
  static func outboxLimit(_ value: String) throws(Problem) -> Int {
    guard let count = Int(value), count >= 100 else {
      throw Problem("expected a whole number >= 100")
    }
    return count
  }

  /// `yes`, `on` or `true`; `no`, `off` or `false` (as `track`), naming what was found.
  static func yesOrNo(_ value: String) throws(Problem) -> Bool {
    switch value.lowercased() {
    case "yes", "on", "true": return true
    case "no", "off", "false": return false
    default: throw Problem("expected yes or no, found '\(value)'")
    }
  }

  /// A socket path (absolute, under the 108 bytes of `sun_path`), or `nil` for `none` or empty.
  static func socketPath(_ value: String) throws(Problem) -> String? {
    if value.isEmpty || value == "none" { return nil }
    guard value.hasPrefix("/"), value.utf8.count < 108 else {
      throw Problem("expected an absolute path under 108 bytes, or none")
    }
    return value
  }
}
