/// One option of a command line, declared once: its name, whether it takes a value, its
/// default and its help text. Parsing (``ParsedArguments``), the `--help` listing
/// (``OptionTable/listing``), the manual pages rendered from `--help` and the shell completions
/// all read the declaration, so that an option cannot be parsed without being documented nor
/// completed without being parsed.
package struct CommandOption: Sendable, Hashable {
  /// What follows the option's name.
  package enum Kind: Sendable, Hashable {
    /// Nothing: the option is a flag (`--fixes`); `--flag=value` is a usage error.
    case flag
    /// A value, as the next word or after `=`; `placeholder` names it in help (`<geojson>`).
    case value(placeholder: String)
  }

  /// The name, with its dashes: `--places`.
  package var name: String
  /// Flag or value.
  package var kind: Kind
  /// The value when the option is not given (``ParsedArguments/value(orDefault:)``); the help
  /// text states it (a test checks that it does).
  package var defaultValue: String?
  /// The help text, as laid out for an 80-column terminal: its first line follows the name,
  /// the others are indented to the table's column. `nil` for an option described where it is
  /// used (a subcommand's line, the usage line): parsed and completed, not listed under
  /// `OPTIONS:`.
  package var help: String?

  /// Declares a flag.
  ///
  /// - Parameters:
  ///   - name: the name with its dashes, such as `--fixes`.
  ///   - help: the help text, or `nil` when the text around the option list describes it.
  package static func flag(_ name: String, _ help: String?) -> CommandOption {
    CommandOption(name: name, kind: .flag, defaultValue: nil, help: help)
  }

  /// Declares an option that takes a value.
  ///
  /// - Parameters:
  ///   - name: the name with its dashes, such as `--speed`.
  ///   - placeholder: how help names the value, such as `<factor>|max`.
  ///   - defaultValue: the value when the option is not given, if the parser supplies one.
  ///   - help: the help text, or `nil` when the text around the option list describes it.
  package static func value(
    _ name: String, _ placeholder: String, default defaultValue: String? = nil, _ help: String?
  ) -> CommandOption {
    CommandOption(
      name: name, kind: .value(placeholder: placeholder), defaultValue: defaultValue, help: help)
  }

  /// Whether the option takes a value.
  package var takesValue: Bool {
    if case .value = kind { return true }
    return false
  }

  /// The option as the listing shows it: `--places <geojson>`.
  package var label: String {
    switch kind {
    case .flag: name
    case .value(let placeholder): "\(name) \(placeholder)"
    }
  }
}
