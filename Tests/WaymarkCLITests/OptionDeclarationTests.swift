import Testing
import WaymarkCLI
import WaymarkDaemonConfiguration
import WaymarkProcess
import WaymarkTesting

/// Each option is declared once, and what is derived from the declaration agrees with it:
/// the help lists it with the default it declares, and the completions offer it.
@Suite struct OptionDeclarationTests {
  static let tables: [(program: String, table: OptionTable, help: String)] =
    WaymarkCommandLine.commands.map { ("waymark \($0.name)", $0.options, $0.help) }
    + [("waymarkd", WaymarkDaemon.options, WaymarkDaemon.help)]

  @Test func everyHelpListsItsDeclaredOptionsWithTheirDefaults() {
    for (program, table, help) in Self.tables {
      #expect(help.contains("OPTIONS:\n" + table.listing), "\(program)")
      for option in table.options {
        guard let text = option.help else {
          // Described where it is used (a subcommand's line, the usage line).
          #expect(help.contains(option.name), "\(program) \(option.name)")
          continue
        }
        #expect(help.contains("  \(option.label)"), "\(program) \(option.name)")
        if let value = option.defaultValue {
          #expect(text.contains(value), "\(program) \(option.name): default \(value)")
        }
      }
    }
    // A control: an option absent from a table is absent from its listing.
    let replay = WaymarkCommandLine.commands.first { $0.name == "replay" }
    #expect(replay?.options.listing.contains("--places <geojson>") == true)
    #expect(replay?.options.listing.contains("--no-such-option") == false)
  }

  @Test func completionsOfferEveryDeclaredOption() throws {
    let bash = try #require(Completions.script(for: "bash"))
    let lines = bash.split(separator: "\n")
    for command in WaymarkCommandLine.commands {
      // The command's case: from `    <name>)` to its `;;`.
      let start = try #require(
        lines.firstIndex { $0.hasPrefix("    \(command.name))") }, "\(command.name)")
      let end = try #require(lines[start...].firstIndex { $0.hasSuffix(";;") })
      let words = Set(
        lines[start...end].joined(separator: " ")
          .split(whereSeparator: { $0 == " " || $0 == "\"" }).map(String.init))
      for name in command.options.names {
        #expect(words.contains(name), "waymark \(command.name) \(name)")
      }
      #expect(!words.contains("--no-such-option"))
    }
  }

  /// waymark-bench parses with the same parser: its options are listed by `--help`, and a
  /// misspelt one is a usage error instead of being taken for a value.
  @Test func benchmarksListTheirOptionsAndRejectUnknownOnes() throws {
    let bench = Products.executable("waymark-bench")
    let help = try CommandRun.run(bench, ["gpsd", "--help"])
    #expect(help.status == 0)
    #expect(
      help.output.contains("  --seconds <n>         Seconds of drive per run (default 20).\n"))
    let wrong = try CommandRun.run(bench, ["gpsd", "--sconds", "3"])
    #expect(wrong.status == 64)
    #expect(wrong.stderr.hasPrefix("Error: Unknown option '--sconds'.\n"))
    let number = try CommandRun.run(bench, ["stays", "--hz", "fast"])
    #expect(number.status == 64)
    #expect(number.stderr.hasPrefix("Error: '--hz' expects a number, got 'fast'.\n"))
  }

  /// `replay --jobs N` times a fleet (it was once taken for a flag, and the single-log
  /// benchmark ran instead); without `--jobs` the single log is timed (the control).
  @Test func replayWithJobsTimesAFleet() throws {
    let bench = Products.executable("waymark-bench")
    let fleet = try CommandRun.run(
      bench, ["replay", "--jobs", "2", "--logs", "2", "--megabytes", "0.05", "--runs", "1"])
    #expect(fleet.status == 0, "\(fleet.stderr)")
    #expect(fleet.output.hasPrefix("fleet: 2 logs, "))
    #expect(fleet.output.contains("| waymark replay <2 logs> --store --jobs 2 | "))
    #expect(fleet.output.contains("same visits in both stores: true\n"))
    let single = try CommandRun.run(bench, ["replay", "--megabytes", "1", "--runs", "1"])
    #expect(single.status == 0, "\(single.stderr)")
    #expect(single.output.hasPrefix("log: "))
    #expect(!single.output.contains("fleet"))
  }
}
