import WaymarkService

/// A command line parsed against a command's declared options and flags.
///
/// Behaves like swift-argument-parser: `--opt value` and `--opt=value`, `--` ends the options,
/// an unknown option or a missing value is a usage error.
public struct ParsedArguments: Sendable {
  /// Values of options, in the order given; the last one wins for single-valued options.
  public private(set) var options: [String: [String]] = [:]
  /// Flags that were given.
  public private(set) var flags: Set<String> = []
  /// Arguments that are not options.
  public private(set) var positionals: [String] = []

  /// Parses `arguments` (without the command name).
  ///
  /// - Parameters:
  ///   - arguments: the words after the command name.
  ///   - options: option names that take a value, such as `--speed`.
  ///   - flags: option names without a value, such as `--fixes`. `--help`/`-h` are always known.
  /// - Throws: ``CommandError`` with ``ExitCode/usage`` for an unknown option or a missing value.
  public init(_ arguments: [String], options: Set<String> = [], flags: Set<String> = []) throws {
    var index = 0
    var onlyPositionals = false
    while index < arguments.count {
      let word = arguments[index]
      index += 1
      if onlyPositionals || !word.hasPrefix("-") || word == "-" {
        positionals.append(word)
        continue
      }
      if word == "--" {
        onlyPositionals = true
        continue
      }
      if word == "--help" || word == "-h" {
        self.flags.insert("--help")
        continue
      }
      var name = word
      var inlineValue: String?
      if let equals = word.firstIndex(of: "=") {
        name = String(word[..<equals])
        inlineValue = String(word[word.index(after: equals)...])
      }
      if options.contains(name) {
        if let inlineValue {
          self.options[name, default: []].append(inlineValue)
        } else if index < arguments.count {
          self.options[name, default: []].append(arguments[index])
          index += 1
        } else {
          throw CommandError.usage("Missing value for '\(name)'.")
        }
      } else if flags.contains(name) {
        guard inlineValue == nil else {
          throw CommandError.usage("'\(name)' takes no value.")
        }
        self.flags.insert(name)
      } else {
        throw CommandError.usage("Unknown option '\(name)'.")
      }
    }
  }

  /// The last value given for `option`.
  public func value(_ option: String) -> String? { options[option]?.last }

  /// Whether `flag` was given.
  public func has(_ flag: String) -> Bool { flags.contains(flag) }

  /// The value of `option` as a number, or a usage error naming what was expected.
  public func double(_ option: String) throws -> Double? {
    guard let text = value(option) else { return nil }
    guard let number = Double(text), number.isFinite else {
      throw CommandError.usage("'\(option)' expects a number, got '\(text)'.")
    }
    return number
  }

  /// Requires exactly `count` positional arguments, named in `names` for the error message.
  public func requirePositionals(_ names: [String]) throws -> [String] {
    try Self.require(positionals, names)
  }

  /// Requires `words` to be exactly `names.count` words, named in `names` for the error message.
  public static func require(_ words: [String], _ names: [String]) throws -> [String] {
    if words.count < names.count { throw CommandError.usage("Missing \(names[words.count]).") }
    if words.count > names.count {
      throw CommandError.usage("Unexpected argument '\(words[names.count])'.")
    }
    return words
  }
}
