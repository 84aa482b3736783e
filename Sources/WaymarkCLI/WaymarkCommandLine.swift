import FoundationEssentials
import Glibc
import WaymarkCore

/// Entry point of the `waymark` tool: selects a subcommand and maps errors to exit codes.
package enum WaymarkCommandLine {
  /// Every subcommand, in the order `waymark --help` lists them.
  package static let commands: [any Command.Type] = [
    ReplayCommand.self,
    ImportCommand.self,
    SynthesizeCommand.self,
    PlacesCommand.self,
    VisitsCommand.self,
    TrackCommand.self,
    MapCommand.self,
    StampCommand.self,
    WatchCommand.self,
    StatusCommand.self,
    SimulateCommand.self,
    AuthCommand.self,
    AgentCommand.self,
    DocsCommand.self,
  ]

  /// The top-level help text.
  package static var help: String {
    var text = """
      USAGE: waymark <command> [options]

      Waymark: CoreLocation-style location services for Linux, on gpsd.

      COMMANDS:

      """
    let width = commands.map { $0.name.count }.max() ?? 0
    for command in commands {
      let padding = String(repeating: " ", count: width - command.name.count + 2)
      text += "  \(command.name)\(padding)\(command.summary)\n"
    }
    text += "\nSee 'waymark <command> --help' for a command's options;"
    text += " 'waymark --version' prints the release.\n"
    return text
  }

  /// Runs the tool with `arguments` (including the program name) and returns the exit code.
  package static func main(_ arguments: [String]) async -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    let words = Array(arguments.dropFirst())
    defer { OutputSink.standardOutput.flush() }
    guard let first = words.first else {
      OutputSink.standardError.write(help)
      return ExitCode.usage.rawValue
    }
    if first == "--version" {
      OutputSink.standardOutput.write("waymark \(WaymarkRelease.version)\n")
      return ExitCode.ok.rawValue
    }
    if first == "--help" || first == "-h" || first == "help" {
      if words.count > 1, let command = commands.first(where: { $0.name == words[1] }) {
        OutputSink.standardOutput.write(command.help)
      } else {
        OutputSink.standardOutput.write(help)
      }
      return ExitCode.ok.rawValue
    }
    guard let command = commands.first(where: { $0.name == first }) else {
      OutputSink.standardError.write(
        "Error: unknown command '\(first)'.\n\n\(help)")
      return ExitCode.usage.rawValue
    }
    let rest = Array(words.dropFirst())
    return await run(command, rest)
  }

  /// Runs one command, printing its help for `--help` and its errors on stderr.
  package static func run(_ command: any Command.Type, _ arguments: [String]) async -> Int32 {
    if arguments.contains("--help") || arguments.contains("-h") {
      OutputSink.standardOutput.write(command.help)
      return ExitCode.ok.rawValue
    }
    do {
      let code = try await command.run(arguments)
      OutputSink.standardOutput.flush()
      return code.rawValue
    } catch let error as CommandError {
      OutputSink.standardOutput.flush()
      var text = "Error: \(error.message)\n"
      if error.showsUsage {
        text += "\(command.usageLine)\n  See 'waymark \(command.name) --help'.\n"
      }
      OutputSink.standardError.write(text)
      return error.code.rawValue
    } catch {
      OutputSink.standardOutput.flush()
      OutputSink.standardError.write("Error: \(error)\n")
      return ExitCode.failure.rawValue
    }
  }
}
