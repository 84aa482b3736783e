/// A command line parsed against the options a command declares (``OptionTable``).
///
/// Behaves like swift-argument-parser: `--opt value` and `--opt=value`, `--` ends the options,
/// an unknown option or a missing value is a usage error.
package struct ParsedArguments: Sendable {
  /// Values of options, in the order given; the last one wins for single-valued options.
  package private(set) var options: [String: [String]] = [:]
  /// Flags that were given.
  package private(set) var flags: Set<String> = []
  /// Arguments that are not options.
  package private(set) var positionals: [String] = []
  /// The declarations the words were parsed against.
  package let table: OptionTable

  /// Parses `arguments` (without the command name) against `table`.
  ///
  /// - Parameters:
  ///   - arguments: the words after the command name.
  ///   - table: the declared options; `--help`/`-h` are always known.
  /// - Throws: ``CommandError`` with ``ExitCode/usage`` for an unknown option, a missing value
  ///   or a value given to a flag.
  package init(_ arguments: [String], declared table: OptionTable) throws {
    self.table = table
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
      guard let option = table[name] else {
        throw CommandError.usage("Unknown option '\(name)'.")
      }
      if option.takesValue {
        if let inlineValue {
          self.options[name, default: []].append(inlineValue)
        } else if index < arguments.count {
          self.options[name, default: []].append(arguments[index])
          index += 1
        } else {
          throw CommandError.usage("Missing value for '\(name)'.")
        }
      } else {
        guard inlineValue == nil else {
          throw CommandError.usage("'\(name)' takes no value.")
        }
        self.flags.insert(name)
      }
    }
  }

  /// The last value given for `option`, or `nil` when it was not given.
  package func value(_ option: String) -> String? { options[option]?.last }

  /// The last value given for `option`, else its declared default (empty when it declares
  /// none).
  package func value(orDefault option: String) -> String {
    value(option) ?? table[option]?.defaultValue ?? ""
  }

  /// Whether `flag` was given.
  package func has(_ flag: String) -> Bool { flags.contains(flag) }

  /// The value of `option` as a number (given, else its declared default), or a usage error
  /// naming what was expected; `nil` when it was not given and declares no default.
  package func double(_ option: String) throws -> Double? {
    guard let text = value(option) ?? table[option]?.defaultValue else { return nil }
    guard let number = Double(text), number.isFinite else {
      throw CommandError.usage("'\(option)' expects a number, got '\(text)'.")
    }
    return number
  }

  /// The value of an option that declares a default, as a number: the last given, else the
  /// default.
  ///
  /// - Throws: ``CommandError`` with ``ExitCode/usage`` when the value is not a finite number.
  package func double(orDefault option: String) throws -> Double {
    guard let number = try double(option) else {
      preconditionFailure("'\(option)' declares no default")
    }
    return number
  }

  /// Requires exactly `count` positional arguments, named in `names` for the error message.
  package func requirePositionals(_ names: [String]) throws -> [String] {
    try Self.require(positionals, names)
  }

  /// Requires `words` to be exactly `names.count` words, named in `names` for the error message.
  package static func require(_ words: [String], _ names: [String]) throws -> [String] {
    if words.count < names.count { throw CommandError.usage("Missing \(names[words.count]).") }
    if words.count > names.count {
      throw CommandError.usage("Unexpected argument '\(words[names.count])'.")
    }
    return words
  }
}
