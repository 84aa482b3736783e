/// One `waymark` subcommand.
package protocol Command: Sendable {
  /// The word that selects the command, such as `replay`.
  static var name: String { get }
  /// One line for the command list.
  static var summary: String { get }
  /// The options, declared once: the command parses its words against them, its ``help``
  /// lists them (``OptionTable/listing``) and the completions offer their names.
  static var options: OptionTable { get }
  /// The full help text: usage line, description, options. Printed by `--help`.
  static var help: String { get }
  /// Runs the command with the words after its name.
  ///
  /// - Returns: the exit code.
  /// - Throws: ``CommandError`` for errors that end the command with a message.
  static func run(_ arguments: [String]) async throws -> ExitCode
}

extension Command {
  /// The first line of ``help``: the usage line.
  package static var usageLine: String {
    String(help.split(separator: "\n", omittingEmptySubsequences: false).first ?? "")
  }
}
