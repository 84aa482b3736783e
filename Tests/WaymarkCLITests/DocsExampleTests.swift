import Foundation
import Testing
import WaymarkTesting

/// The examples of the documentation that are not Swift: the README's tour prints what the
/// README shows, and every ```json block is JSON (a places file among them imports).
@Suite struct DocsExampleTests {
  /// A `$ command` of a shell block and the lines shown after it.
  struct ShownCommand: CustomStringConvertible {
    var command: String
    var output: String
    var description: String { "$ \(command)" }
  }

  /// The commands of the README's tour: the shell blocks that work on `demo.db`, in order.
  static var tour: [ShownCommand] {
    let readme = MarkdownFiles.codeBlocksOfPackage.filter {
      $0.file == "README.md" && $0.language == "sh" && $0.code.contains("demo.db")
    }
    var commands: [ShownCommand] = []
    for block in readme {
      for line in block.code.split(separator: "\n", omittingEmptySubsequences: false) {
        if line.hasPrefix("$ ") {
          commands.append(ShownCommand(command: String(line.dropFirst(2)), output: ""))
        } else if !line.isEmpty, !commands.isEmpty {
          commands[commands.count - 1].output += line + "\n"
        }
      }
    }
    return commands
  }

  /// Each command of the tour, run in order in an empty directory that has the repository's
  /// `Demo/` (with the built `waymark` first on the PATH), prints exactly the lines the README
  /// shows after it (standard output and error together).
  @Test func theReadmeTourPrintsWhatItShows() throws {
    let tour = Self.tour
    // replay, places list, visits, track stats, map: the tour is found.
    #expect(tour.count >= 5, "\(tour)")
    #expect(tour.first?.command.hasPrefix("waymark replay ") == true)
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-tour-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    try FileManager.default.createSymbolicLink(
      at: directory.appendingPathComponent("Demo"),
      withDestinationURL: Products.packageRoot.appendingPathComponent("Demo"))
    var environment = ProcessInfo.processInfo.environment
    environment["PATH"] = Products.buildDirectory.path + ":" + (environment["PATH"] ?? "/usr/bin")
    environment["WAYMARK_STORE"] = nil
    for shown in tour {
      #expect(!shown.output.isEmpty, "\(shown) shows no output")
      let run = try CommandRun.run(
        "/bin/bash", ["-c", "{ \(shown.command); } 2>&1"], environment: environment,
        currentDirectory: directory)
      #expect(run.status == 0, "\(shown): \(run.output)")
      #expect(run.output == shown.output, "\(shown)")
    }
  }

  /// Every ```json block is one JSON value, or one JSON object per line (NDJSON).
  @Test func jsonBlocksAreJSON() throws {
    let blocks = MarkdownFiles.codeBlocksOfPackage.filter { $0.language == "json" }
    #expect(blocks.count >= 2)
    for block in blocks {
      let whole = try? JSONSerialization.jsonObject(with: Data(block.code.utf8))
      guard whole == nil else { continue }
      for line in block.code.split(separator: "\n") {
        let object = try? JSONSerialization.jsonObject(with: Data(line.utf8))
        #expect(object is [String: Any], "\(block.file):\(block.line): not JSON: \(line)")
      }
    }
  }

  /// The places files the guides show (```json FeatureCollections) are what `places import`
  /// takes: each imports, and the store then lists as many places as the file has features.
  @Test func placesFilesOfTheGuidesImport() throws {
    let files = MarkdownFiles.codeBlocksOfPackage.filter {
      $0.language == "json" && $0.code.contains("\"FeatureCollection\"")
    }
    #expect(!files.isEmpty)
    for block in files {
      let directory = FileManager.default.temporaryDirectory
        .appendingPathComponent("waymark-places-\(getpid())-\(UUID().uuidString)")
      try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
      defer { try? FileManager.default.removeItem(at: directory) }
      let places = directory.appendingPathComponent("places.geojson").path
      let store = directory.appendingPathComponent("store.db").path
      try block.code.write(toFile: places, atomically: true, encoding: .utf8)
      let imported = try CommandRun.waymark(["places", "import", places, "--store", store])
      #expect(imported.status == 0, "\(block.file):\(block.line): \(imported.stderr)")
      let listed = try CommandRun.waymark(["places", "list", "--store", store])
      let features = block.code.components(separatedBy: "\"type\": \"Feature\"").count - 1
      #expect(features > 0)
      #expect(listed.output.split(separator: "\n").count == features, "\(listed.output)")
    }
  }
}
