import Foundation
import Testing
import WaymarkTesting

/// Writes the completion script for `shell` to a fresh temporary file and runs `body` with its
/// path; the file is removed afterwards.
private func withScript<T>(_ shell: String, name: String, _ body: (String) throws -> T) throws
  -> T
{
  let run = try CommandRun.waymark(["docs", "completions", shell])
  #expect(run.status == 0, "\(run.stderr)")
  let directory = FileManager.default.temporaryDirectory
    .appendingPathComponent("waymark-docs-\(getpid())-\(UUID().uuidString)")
  try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
  defer { try? FileManager.default.removeItem(at: directory) }
  let path = directory.appendingPathComponent(name).path
  try run.stdout.write(to: URL(fileURLWithPath: path))
  return try body(path)
}

/// The manual pages in man/ are what `waymark docs man` renders from the --help texts (so they
/// cannot drift), roff accepts them, and the completion scripts complete in real shells.
@Suite struct DocsTests {
  static let pages = ["waymark.1", "waymarkd.8", "waymark.conf.5"]

  static func render(_ page: String) throws -> CommandRun {
    var arguments = ["docs", "man", page]
    if page == "waymark.conf.5" {
      arguments += [
        "--config", Products.packageRoot.appendingPathComponent("config/waymark.conf").path,
      ]
    }
    return try CommandRun.waymark(arguments)
  }

  @Test(arguments: pages)
  func theShippedPageIsTheRenderedOne(page: String) throws {
    let run = try Self.render(page)
    #expect(run.status == 0, "\(run.stderr)")
    let shipped = try Data(contentsOf: Products.packageRoot.appendingPathComponent("man/\(page)"))
    #expect(
      run.stdout == shipped,
      "man/\(page) is stale: regenerate it with 'waymark docs man \(page) > man/\(page)'")
  }

  @Test(arguments: pages)
  func groffRendersThePageWithoutAWarning(page: String) throws {
    try #require(installed("/usr/bin/groff"), "groff is not installed (groff-base)")
    let path = Products.packageRoot.appendingPathComponent("man/\(page)").path
    let run = try CommandRun.run("/usr/bin/groff", ["-man", "-ww", "-z", path])
    #expect(run.status == 0)
    #expect(run.stderr.isEmpty, "\(run.stderr)")
  }

  @Test func theDaemonPageHoldsItsHelp() throws {
    let page = try Self.render("waymarkd.8").output
    let help = try CommandRun.run(Products.executable("waymarkd"), ["--help"]).output
    // Every line of the help is in the page (escaped as roff wants it).
    for line in help.split(separator: "\n") {
      #expect(page.contains(line.replacingOccurrences(of: "-", with: "\\-")), "\(line)")
    }
  }

  @Test func installShPutsThePagesAndCompletionsInPlace() throws {
    let destination = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-docs-install-\(getpid())-\(UUID().uuidString)")
    defer { try? FileManager.default.removeItem(at: destination) }
    let install = try CommandRun.run(
      "/bin/bash",
      [
        Products.packageRoot.appendingPathComponent("Scripts/install.sh").path, "--destdir",
        destination.path, "--build-dir", Products.buildDirectory.path,
      ])
    #expect(install.status == 0, "\(install.stderr)")
    let share = destination.appendingPathComponent("usr/local/share")
    for page in ["man1/waymark.1", "man5/waymark.conf.5", "man8/waymarkd.8"] {
      let installed = try Data(contentsOf: share.appendingPathComponent("man/\(page)"))
      let name = String(page.split(separator: "/").last!)
      #expect(installed == (try Self.render(name).stdout), "\(page)")
    }
    for (shell, path) in [
      ("bash", "bash-completion/completions/waymark"), ("zsh", "zsh/site-functions/_waymark"),
      ("fish", "fish/vendor_completions.d/waymark.fish"),
    ] {
      let installed = try Data(contentsOf: share.appendingPathComponent(path))
      #expect(installed == (try CommandRun.waymark(["docs", "completions", shell]).stdout))
    }
  }

  @Test func unknownPagesAndShellsAreUsageErrors() throws {
    let page = try CommandRun.waymark(["docs", "man", "waymark.7"])
    #expect(page.status == 64)
    #expect(page.stderr.contains("waymark.1, waymarkd.8, waymark.conf.5"))
    let shell = try CommandRun.waymark(["docs", "completions", "tcsh"])
    #expect(shell.status == 64)
  }

  @Test(.enabled(if: installed("/bin/bash"), "bash is not installed"))
  func bashCompletesCommandsSubcommandsAndOptions() throws {
    try withScript("bash", name: "waymark.bash") { (path: String) throws in
      func complete(_ words: [String]) throws -> [String] {
        let script = """
          source '\(path)'
          COMP_WORDS=(\(words.map { "'\($0)'" }.joined(separator: " ")))
          COMP_CWORD=\(words.count - 1)
          _waymark
          printf '%s\\n' "${COMPREPLY[@]}"
          """
        let result = try CommandRun.run("/bin/bash", ["--norc", "-c", script])
        #expect(result.status == 0, "\(result.stderr)")
        return result.output.split(separator: "\n").map(String.init)
      }
      #expect(try complete(["waymark", "rep"]) == ["replay"])
      #expect(try complete(["waymark", "replay", "--mqtt-w"]) == ["--mqtt-wait"])
      #expect(try complete(["waymark", "visits", "del"]) == ["delete"])
      #expect(try complete(["waymark", "visits", "--form"]) == ["--format"])
      #expect(try complete(["waymark", "docs", "com"]) == ["completions"])
    }
  }

  @Test(.enabled(if: installed("/usr/bin/fish"), "fish is not installed"))
  func fishCompletesCommandsSubcommandsAndOptions() throws {
    try withScript("fish", name: "waymark.fish") { (path: String) throws in
      func complete(_ line: String) throws -> [String] {
        let result = try CommandRun.run(
          "/usr/bin/fish", ["--no-config", "-c", "source '\(path)'; complete -C '\(line)'"])
        #expect(result.status == 0, "\(result.stderr)")
        return result.output.split(separator: "\n").map {
          String($0.split(separator: "\t").first ?? "")
        }
      }
      #expect(try complete("waymark rep") == ["replay"])
      #expect(try complete("waymark places ").contains("import"))
      #expect(try complete("waymark replay --pla") == ["--places"])
    }
  }

  @Test(.enabled(if: installed("/usr/bin/zsh"), "zsh is not installed"))
  func zshReadsItsScript() throws {
    try withScript("zsh", name: "_waymark") { (path: String) throws in
      let check = try CommandRun.run("/usr/bin/zsh", ["-n", path])
      #expect(check.status == 0, "\(check.stderr)")
      let text = try String(contentsOfFile: path, encoding: .utf8)
      #expect(text.hasPrefix("#compdef waymark"))
      #expect(text.contains("'replay:Replay an NMEA log"))
    }
  }
}
