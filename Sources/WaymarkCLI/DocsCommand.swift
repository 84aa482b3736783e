import FoundationEssentials
import Glibc

/// `waymark docs`: the manual pages and shell completions, generated from the help texts and
/// the command table.
enum DocsCommand: Command {
  static let name = "docs"
  static let summary = "Print a manual page or a shell completion script."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 24,
    [
      .value(
        "--config", "<file>", default: "/etc/waymark/waymark.conf",
        """
        For waymark.conf.5: the configuration file to render (default
        /etc/waymark/waymark.conf).
        """)
    ])

  static let help = """
    USAGE: waymark docs man <waymark.1|waymarkd.8|waymark.conf.5> [--config <file>]
           waymark docs completions <bash|zsh|fish>

    Prints, on stdout, a manual page (roff) rendered from the same texts that --help prints,
    or a completion script generated from the command table and each command's options.
    Scripts/install.sh installs both; the files in the package's man/ are made with it.

    SUBCOMMANDS:
      man <page>            waymark.1 (every command's help), waymarkd.8 (the daemon's),
                            waymark.conf.5 (the shipped configuration file, whose comments
                            document every key).
      completions <shell>   bash, zsh or fish.

    OPTIONS:
    \(options.listing)
    Examples:
      waymark docs man waymark.1 | man -l -
      waymark docs completions bash > /usr/share/bash-completion/completions/waymark

    Exit codes: 0 ok, 64 usage, 66 unreadable --config file.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    let words = try parsed.requirePositionals(["<man|completions>", "<page|shell>"])
    switch words[0] {
    case "man":
      guard let page = ManPage.pages.first(where: { $0.file == words[1] }) else {
        let names = ManPage.pages.map(\.file).joined(separator: ", ")
        throw CommandError.usage("Unknown page '\(words[1])'; the pages are \(names).")
      }
      var configuration = ""
      if page.file == "waymark.conf.5" {
        let path = parsed.value(orDefault: "--config")
        guard let data = FileManager.default.contents(atPath: path) else {
          throw CommandError("cannot read '\(path)'", code: .noInput)
        }
        configuration = String(decoding: data, as: UTF8.self)
      } else if parsed.value("--config") != nil {
        throw CommandError.usage("'--config' is for waymark.conf.5 only.")
      }
      OutputSink.standardOutput.write(page.render(configuration))
    case "completions":
      guard let script = Completions.script(for: words[1]) else {
        throw CommandError.usage("Unknown shell '\(words[1])'; choose bash, zsh or fish.")
      }
      OutputSink.standardOutput.write(script)
    default:
      throw CommandError.usage("Unknown subcommand '\(words[0])'; choose man or completions.")
    }
    return .ok
  }
}
