/// The options of one command line, in the order its `--help` lists them, and the column at
/// which their help texts start.
///
/// `--help`/`-h` are known to every table and listed last, as `-h, --help`.
package struct OptionTable: Sendable {
  /// The declared options (without `--help`).
  package var options: [CommandOption]
  /// The column (counting from 0) where the help texts start in ``listing``; a label that does
  /// not leave a space before it puts its help on the next line.
  package var column: Int

  /// Creates a table.
  ///
  /// - Parameters:
  ///   - column: where help texts start, in characters from the line start.
  ///   - options: the options, in the order `--help` lists them.
  package init(column: Int, _ options: [CommandOption]) {
    precondition(
      Set(options.map(\.name)).count == options.count, "an option is declared twice")
    self.column = column
    self.options = options
  }

  /// The declaration of `name`, if any.
  package subscript(name: String) -> CommandOption? {
    options.first { $0.name == name }
  }

  /// Every option name, in declaration order, then `--help`: what completes after the command.
  package var names: [String] { options.map(\.name) + ["--help"] }

  /// The lines under `OPTIONS:` in `--help`, each ending in a newline: every listed option with
  /// its help, then `-h, --help`.
  package var listing: String {
    var text = ""
    for option in options {
      guard let help = option.help else { continue }
      text += entry(option.label, help)
    }
    return text + entry("-h, --help", "Show this help.")
  }

  private func entry(_ label: String, _ help: String) -> String {
    let indent = String(repeating: " ", count: column)
    var lines = help.split(separator: "\n", omittingEmptySubsequences: false)[...]
    var text = "  \(label)"
    if 2 + label.count < column, let first = lines.popFirst() {
      text += String(repeating: " ", count: column - 2 - label.count) + first
    }
    text += "\n"
    for line in lines { text += indent + line + "\n" }
    return text
  }
}
