import Foundation
import Testing
import WaymarkTesting

/// The shell blocks (```` ```sh ````, ```` ```console ````) of every Markdown file: each is valid
/// shell, each `waymark`, `waymarkd` and `waymark-bench` it runs names a command and options the
/// real program accepts, and each block that can run in a sandbox runs there.
@Suite struct DocsCommandTests {
  /// The blocks that are not run, keyed by file and a fragment of the block, with the reason. A
  /// block that is not runnable (a command other than `waymark`, `head`, `tail` on files) and is
  /// not listed here fails the test until it is classified; an entry that matches no block fails.
  static let notRun: [(file: String, fragment: String, reason: String)] = [
    ("BENCHMARKS.md", "--megabytes 20", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench gpsd", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench store", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench daemon", "release builds and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench idle", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench broker", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench mqtt", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "Scripts/ab-replay.py", "two release builds and minutes of runs"),
    ("BENCHMARKS.md", "Scripts/package-deb.sh", "static release builds of minutes, then the .deb"),
    ("BENCHMARKS.md", "waymark-bench track", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "waymark-bench map", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "sqlite3 big.db", "a store of a million points and a release build"),
    ("BENCHMARKS.md", "waymark-bench stays", "release build, trackintel (Python) and data"),
    ("README.md", "package-deb.sh", "sudo apt install: installs the package system-wide"),
    ("README.md", "Scripts/demo.sh", "installs Debian packages (root) and builds"),
    ("docs/guide/daemon.md", "package-deb.sh", "sudo apt install: installs system-wide"),
    ("docs/reliability.md", "--sanitize=thread", "a sanitized build of the package and its tests"),
    ("docs/guide/daemon.md", "install.sh --uninstall", "sudo: installs into the system"),
    ("docs/guide/daemon.md", "sudo -u waymark", "root, the waymark user and systemd"),
    ("docs/guide/daemon.md", "journalctl", "the system journal of an installed daemon"),
    ("docs/guide/daemon.md", "systemd-analyze", "the installed unit under /etc/systemd"),
    ("docs/guide/desktop.md", "--geoclue", "sudo: installs into the system and GeoClue"),
    ("docs/guide/gpsd.md", "waymark watch", "a gpsd with a receiver (status, watch, simulate)"),
    ("docs/guide/location-manager.md", "Examples/LocationApp", "a Swift build of the example"),
    ("docs/guide/places-and-visits.md", "waymark stamp", "a live fix from gpsd or the daemon"),
    ("docs/guide/replay.md", "Fuzz/run.sh", "a fuzzer build and a million inputs"),
    ("docs/guide/import.md", "Takeout/", "the reader's own files: a Takeout export, tracks"),
    ("BENCHMARKS.md", "waymark-bench import", "release build and a benchmark of minutes"),
    ("BENCHMARKS.md", "WAYMARK_BIN=.build/debug Scripts/trackintel-logs.sh", "trackintel (Python)"),
    ("BENCHMARKS.md", "waymark-bench gazetteer", "release build and a benchmark of seconds"),
  ]

  /// The names a runnable block uses for the demo's files, mapped to the repository's: each
  /// block runs in an empty directory holding `Demo/` and `Tests/` (links) and these copies.
  static let demoFiles: [String: String] = [
    "drive.nmea": "Demo/drive.nmea",
    "places.geojson": "Demo/places.geojson",
  ]

  /// Text replaced in a block before it runs, so that it writes only in its directory.
  static let rewrites: [(from: String, to: String)] = [("/tmp/demo.db", "demo.db")]

  /// Lines of runnable blocks that are not run (still checked), keyed by file and fragment.
  static let linesNotRun: [(file: String, fragment: String, reason: String)] = [
    ("docs/guide/tracks-and-map.md", "gpsbabel", "a third-party converter, not a dependency")
  ]

  /// The `waymark` commands a block may run in the sandbox: they read and write files only.
  static let sandboxCommands: Set<String> = [
    "replay", "import", "synthesize", "places", "visits", "track", "map", "docs",
  ]

  /// The shell blocks of every Markdown file of the package.
  static var shellBlocks: [MarkdownFiles.CodeBlock] {
    MarkdownFiles.codeBlocksOfPackage.filter { isShell($0) }
  }

  static func isShell(_ block: MarkdownFiles.CodeBlock) -> Bool {
    ["sh", "console", "bash", "shell"].contains(block.language)
  }

  /// A block as a script: with `$ ` prompts, the prompted lines (the rest is output shown).
  static func script(of block: MarkdownFiles.CodeBlock) -> String {
    let lines = block.code.split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.contains(where: { $0.hasPrefix("$ ") }) else { return block.code }
    return lines.filter { $0.hasPrefix("$ ") }.map { $0.dropFirst(2) + "\n" }.joined()
  }

  /// The `$ command` lines of a block with the output lines shown after each.
  static func shown(in block: MarkdownFiles.CodeBlock) -> [(command: String, output: [String])] {
    var commands: [(command: String, output: [String])] = []
    for line in block.code.split(separator: "\n") {
      if line.hasPrefix("$ ") {
        commands.append((String(line.dropFirst(2)), []))
      } else if !commands.isEmpty {
        commands[commands.count - 1].output.append(String(line))
      }
    }
    return commands
  }

  /// The simple commands of a script, each as its words (quotes removed, comments and
  /// redirection targets dropped); pipes, `&&`, `||`, `;`, `&` and newlines separate them.
  static func simpleCommands(of script: String) -> [[String]] {
    var commands: [[String]] = []
    var words: [String] = []
    var word = ""
    var inWord = false
    var skipNext = false
    func endWord() {
      if inWord {
        if skipNext { skipNext = false } else { words.append(word) }
      }
      word = ""
      inWord = false
    }
    func endCommand() {
      endWord()
      if !words.isEmpty { commands.append(words) }
      words = []
    }
    var characters = Array(script)[...]
    while let character = characters.popFirst() {
      switch character {
      case "'", "\"":
        inWord = true
        while let next = characters.popFirst(), next != character {
          if next == "\\", character == "\"", let escaped = characters.popFirst() {
            word.append(escaped)
          } else {
            word.append(next)
          }
        }
      case "\\":
        if let next = characters.popFirst(), next != "\n" {
          inWord = true
          word.append(next)
        }
      case "#" where !inWord:
        while let next = characters.first, next != "\n" { characters.removeFirst() }
      case " ", "\t":
        endWord()
      case "\n", "|", "&", ";":
        endCommand()
      case ">", "<":
        if word.allSatisfy(\.isNumber) { word = "" } else { endWord() }
        inWord = false
        if characters.first == "&" {
          characters.removeFirst()
          while characters.first?.isNumber == true { characters.removeFirst() }
        } else {
          skipNext = true
        }
        if characters.first == ">" { characters.removeFirst() }
      default:
        inWord = true
        word.append(character)
      }
    }
    endCommand()
    return commands
  }

  /// The programs of the package, by name.
  static let programs: Set<String> = ["waymark", "waymarkd", "waymark-bench"]

  /// The invocation of one of ``programs`` in a simple command, from the program's word on;
  /// nil when there is none. A word that is an option's value (`sudo -u waymark`) is no program.
  static func invocation(in words: [String]) -> [String]? {
    for (index, word) in words.enumerated() {
      let name = word.split(separator: "/").last.map(String.init) ?? word
      guard programs.contains(name) else { continue }
      if index > 0, words[index - 1].hasPrefix("-") { continue }
      return [name] + words[(index + 1)...]
    }
    return nil
  }

  /// What the programs accept, read from the programs themselves: `waymark`'s and `waymarkd`'s
  /// `--help` texts, and `waymark-bench`'s table of benchmarks and option names in its sources.
  final class Parsers {
    private var helps: [String: String] = [:]

    func help(_ arguments: [String]) -> String {
      let key = arguments.joined(separator: " ")
      if let known = helps[key] { return known }
      let run = try? CommandRun.run(
        Products.executable(arguments[0]), Array(arguments.dropFirst()) + ["--help"])
      let text = (run?.output ?? "") + (run?.stderr ?? "")
      helps[key] = text
      return text
    }

    lazy var benchSources: String = {
      let directory = Products.packageRoot.appendingPathComponent("Sources/WaymarkBenchmarks")
      let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
      return names.sorted().compactMap {
        try? String(contentsOf: directory.appendingPathComponent($0), encoding: .utf8)
      }.joined(separator: "\n")
    }()

    lazy var benchNames: Set<String> = {
      let main = Products.packageRoot.appendingPathComponent("Sources/WaymarkBenchmarks/main.swift")
      let text = (try? String(contentsOf: main, encoding: .utf8)) ?? ""
      var names: Set<String> = []
      for line in text.split(separator: "\n") {
        let trimmed = line.trimmingCharacters(in: .whitespaces)
        guard trimmed.hasPrefix("\""), let end = trimmed.dropFirst().firstIndex(of: "\""),
          trimmed[end...].hasPrefix("\":")
        else { continue }
        names.insert(String(trimmed[trimmed.index(after: trimmed.startIndex)..<end]))
      }
      return names
    }()
  }

  /// Whether `help` names `option` as a whole word (`--store`, not `--store-path`).
  static func names(_ help: String, _ option: String) -> Bool {
    var rest = help[...]
    while let range = rest.range(of: option) {
      let next = rest[range.upperBound...].first
      if next.map({ !($0.isLetter || $0.isNumber || $0 == "-") }) ?? true { return true }
      rest = rest[range.upperBound...]
    }
    return false
  }

  /// The problems of one invocation (program first): an unknown command or option.
  static func problems(of invocation: [String], parsers: Parsers) -> [String] {
    let program = invocation[0]
    let arguments = Array(invocation.dropFirst())
    let options = arguments.filter { $0.hasPrefix("--") && $0 != "--" }.map {
      String($0.prefix { $0 != "=" })
    }
    let shown = invocation.joined(separator: " ")
    switch program {
    case "waymark-bench":
      guard let name = arguments.first, parsers.benchNames.contains(name) else {
        return ["\(shown): not a benchmark of waymark-bench"]
      }
      return options.filter { !parsers.benchSources.contains("\"\($0)\"") }.map {
        "\(shown): waymark-bench reads no option \($0)"
      }
    case "waymarkd":
      let help = parsers.help(["waymarkd"])
      return options.filter { !names(help, $0) }.map { "\(shown): waymarkd has no option \($0)" }
    default:
      guard let command = arguments.first, !command.hasPrefix("-") else {
        let help = parsers.help(["waymark"])
        return options.filter { !names(help, $0) }.map { "\(shown): waymark has no option \($0)" }
      }
      let commands = parsers.help(["waymark"])
      guard commands.contains("\n  \(command) ") else {
        return ["\(shown): waymark has no command '\(command)'"]
      }
      let help = parsers.help(["waymark", command])
      var found: [String] = []
      // A command with subcommands lists them under SUBCOMMANDS: or in its usage lines
      // (`waymark track export …`); its first word is then one of them.
      let usage = "waymark \(command) "
      let hasSubcommands =
        help.contains("SUBCOMMANDS:")
        || help.components(separatedBy: usage).dropFirst().contains {
          $0.first?.isLowercase == true
        }
      if hasSubcommands, let word = arguments.dropFirst().first, !word.hasPrefix("-"),
        !help.contains("\n  \(word) ") && !help.contains("\n  \(word)\n")
          && !help.contains(usage + word + " ") && !help.contains(usage + word + "\n")
      {
        found.append("\(shown): 'waymark \(command)' has no subcommand '\(word)'")
      }
      found += options.filter { !names(help, $0) }.map {
        "\(shown): 'waymark \(command)' has no option \($0)"
      }
      return found
    }
  }

  /// The problems of a block that are found without running it: shell syntax (`bash -n`) and
  /// the commands and options it gives the package's programs.
  static func problems(of block: MarkdownFiles.CodeBlock, parsers: Parsers) throws -> [String] {
    let script = script(of: block)
    var found: [String] = []
    let syntax = try CommandRun.run("/bin/bash", ["-n"], input: Data(script.utf8))
    if syntax.status != 0 { found.append("not valid shell: \(syntax.stderr)") }
    for words in simpleCommands(of: script) {
      guard let invocation = invocation(in: words) else { continue }
      found += problems(of: invocation, parsers: parsers)
    }
    return found.map { "\(block.file):\(block.line): \($0)" }
  }

  /// Whether a block runs in the sandbox: every command is `waymark` on files, `head` or `tail`.
  static func runnable(_ block: MarkdownFiles.CodeBlock) -> Bool {
    let lines = script(of: block).split(separator: "\n").filter { line in
      !linesNotRun.contains { $0.file == block.file && line.contains($0.fragment) }
    }
    let commands = simpleCommands(of: lines.joined(separator: "\n"))
    return !commands.isEmpty
      && commands.allSatisfy { words in
        words[0] == "head" || words[0] == "tail"
          || (words[0] == "waymark" && words.count > 1 && sandboxCommands.contains(words[1]))
      }
  }

  /// Whether an output line matches the line a document shows, `...` standing for any text.
  static func matches(_ line: String, shown: String) -> Bool {
    let pieces = shown.components(separatedBy: "...")
    guard pieces.count > 1 else { return line == shown }
    var rest = line[...]
    for (index, piece) in pieces.enumerated() {
      if index == 0 {
        guard rest.hasPrefix(piece) else { return false }
        rest = rest.dropFirst(piece.count)
      } else if index == pieces.count - 1 {
        return piece.isEmpty || rest.hasSuffix(piece)
      } else if let range = rest.range(of: piece) {
        rest = rest[range.upperBound...]
      } else {
        return false
      }
    }
    return true
  }

  @Test func everyShellBlockIsValidShellAndNamesWhatTheProgramsAccept() throws {
    let blocks = Self.shellBlocks
    // README, BENCHMARKS.md and eight guides hold 32 shell blocks, with 62 invocations.
    #expect(blocks.count >= 30, "\(blocks.count)")
    let parsers = Parsers()
    var invocations = 0
    for block in blocks {
      let problems = try Self.problems(of: block, parsers: parsers)
      #expect(problems.isEmpty, "\(problems)")
      invocations +=
        Self.simpleCommands(of: Self.script(of: block)).compactMap {
          Self.invocation(in: $0)
        }.count
    }
    #expect(invocations >= 60, "\(invocations)")
  }

  /// A block with a syntax error, one with an unknown option, one with an unknown command and one
  /// with an unknown benchmark, benchmark option and subcommands are each reported; their
  /// corrected forms are not.
  @Test func aBadBlockIsReported() throws {
    let markdown = """
      ```sh
      if true; then waymark replay Demo/drive.nmea
      ```
      ```console
      $ waymark replay Demo/drive.nmea --no-such-option | head -1
      ```
      ```sh
      waymark replays Demo/drive.nmea
      ```
      ```sh
      .build/release/waymark-bench mapp --rows 10
      waymark-bench map --rowz 10
      sudo -u waymark waymark places impor x.geojson
      waymark track stat --store x.db
      ```
      ```sh
      if true; then waymark replay Demo/drive.nmea --fixes; fi
      waymark replay Demo/drive.nmea --places=Demo/places.geojson 2>&1 >/dev/null | tail -1
      .build/release/waymark-bench map --rows 10   # --no-such-option in a comment
      sudo -u waymark waymark places import x.geojson --store "a b.db"
      waymark track stats --store x.db
      ```
      """
    let blocks = MarkdownFiles.codeBlocks(in: markdown, file: "bad.md")
    #expect(blocks.count == 5)
    let parsers = Parsers()
    let reports = try blocks.map { try Self.problems(of: $0, parsers: parsers) }
    #expect(reports[0].count == 1 && reports[0][0].contains("not valid shell"), "\(reports[0])")
    #expect(reports[1].count == 1 && reports[1][0].contains("no option --no-such-option"))
    #expect(reports[2].count == 1 && reports[2][0].contains("no command 'replays'"))
    #expect(reports[3].count == 4, "\(reports[3])")
    #expect(reports[3].first?.contains("not a benchmark") == true)
    #expect(reports[3].dropFirst().first?.contains("no option --rowz") == true)
    #expect(reports[3].dropFirst(2).first?.contains("no subcommand 'impor'") == true)
    #expect(reports[3].last?.contains("no subcommand 'stat'") == true)
    #expect(reports[4] == [])
  }

  /// Each block not run is listed with its reason, each entry matches a block, and every other
  /// block runs (in order, one directory per file) with status 0, printing what it shows.
  @Test func theRunnableBlocksRun() throws {
    let blocks = Self.shellBlocks
    for entry in Self.notRun + Self.linesNotRun {
      #expect(
        blocks.contains { $0.file == entry.file && $0.code.contains(entry.fragment) },
        "stale entry: \(entry.file): \(entry.fragment)")
    }
    var ran = 0
    var directories: [String: URL] = [:]
    defer {
      for directory in directories.values { try? FileManager.default.removeItem(at: directory) }
    }
    for block in blocks {
      let listed = Self.notRun.contains {
        $0.file == block.file && block.code.contains($0.fragment)
      }
      let runnable = Self.runnable(block)
      #expect(
        listed != runnable,
        "\(block.file):\(block.line): \(runnable ? "runnable, yet listed as not run" : "not runnable: list it in notRun with the reason")"
      )
      guard runnable, !listed else { continue }
      let directory = try directories[block.file] ?? Self.sandbox()
      directories[block.file] = directory
      try run(block, in: directory)
      ran += 1
    }
    // README (2), replay, places and visits (3), stays, tracks and map (2).
    #expect(ran >= 9, "\(ran)")
  }

  /// An empty directory with `Demo/` and `Tests/` linked and the demo files under their names.
  static func sandbox() throws -> URL {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-docs-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    for name in ["Demo", "Tests"] {
      try FileManager.default.createSymbolicLink(
        at: directory.appendingPathComponent(name),
        withDestinationURL: Products.packageRoot.appendingPathComponent(name))
    }
    for (name, source) in demoFiles {
      try FileManager.default.copyItem(
        at: Products.packageRoot.appendingPathComponent(source),
        to: directory.appendingPathComponent(name))
    }
    return directory
  }

  /// Runs each command of `block` in `directory` (with `$ ` prompts, each prompted command and
  /// the output shown after it; otherwise each line), with the built `waymark` first on the PATH
  /// and the default store (`demo.db`), home and state directories inside `directory`.
  func run(_ block: MarkdownFiles.CodeBlock, in directory: URL) throws {
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = Products.buildDirectory.path + ":" + (environment["PATH"] ?? "/usr/bin")
    environment["WAYMARK_STORE"] = directory.appendingPathComponent("demo.db").path
    environment["HOME"] = directory.path
    environment["XDG_STATE_HOME"] = directory.appendingPathComponent("state").path
    environment["STATE_DIRECTORY"] = nil
    var steps = Self.shown(in: block)
    if steps.isEmpty {
      steps = block.code.split(separator: "\n").map { (String($0), []) }
    }
    for (command, output) in steps {
      guard
        !Self.linesNotRun.contains(where: { $0.file == block.file && command.contains($0.fragment) }
        )
      else { continue }
      var script = command
      for rewrite in Self.rewrites {
        script = script.replacingOccurrences(of: rewrite.from, with: rewrite.to)
      }
      guard !Self.simpleCommands(of: script).isEmpty else { continue }
      let run = try CommandRun.run(
        "/bin/bash", ["-c", "{ \(script)\n} 2>&1"], environment: environment,
        currentDirectory: directory)
      let place = "\(block.file):\(block.line): $ \(command)"
      #expect(run.status == 0, "\(place): \(run.output)")
      // The lines shown are lines of the output, in order (`...` for text left out).
      var lines = run.output.split(separator: "\n").map(String.init)[...]
      for shown in output {
        guard let index = lines.firstIndex(where: { Self.matches($0, shown: shown) }) else {
          Issue.record("\(place): does not print \(shown)\n\(run.output)")
          break
        }
        lines = lines[(index + 1)...]
      }
    }
  }
}
