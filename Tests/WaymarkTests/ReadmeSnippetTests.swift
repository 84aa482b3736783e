import Foundation
import Testing
import WaymarkTesting

/// Whether the modules the documentation's blocks import are built next to the tests.
private var readmeModulesBuilt: Bool {
  ["Waymark", "GPSD", "NMEA", "WaymarkNotifications"].allSatisfy {
    FileManager.default.fileExists(
      atPath: Products.buildDirectory.appendingPathComponent("Modules/\($0).swiftmodule").path)
  }
}

/// Every ```swift block of every Markdown file of the repository (README.md, docs/**, …)
/// compiles against the package's built modules, as a reader would paste it into a
/// `main.swift` of a package that depends on Waymark.
///
/// A block is first compiled exactly as written. A fragment that uses names it leaves to the
/// reader (`source`, `manager`, …) is compiled again with placeholder declarations for just the
/// names the compiler reported missing, inserted after its imports; any other error fails the
/// test. Placeholders are never imports: a block that forgets one fails.
@Suite(.enabled(if: readmeModulesBuilt, "the package's modules are not built"))
struct ReadmeSnippetTests {
  /// A ```swift block of a Markdown file and the line its code starts on.
  struct Snippet: Sendable, CustomTestStringConvertible {
    var file: String
    var line: Int
    var code: String
    var testDescription: String { "\(file):\(line)" }
  }

  /// Declarations for the names documentation fragments leave to the reader.
  static let placeholders: [String: String] = [
    "source": #"let source = FixSource(name: "readme") { AsyncStream { $0.finish() } }"#,
    "manager": #"""
    let manager = LocationManager(
      clientID: "org.example.readme",
      source: FixSource(name: "readme") { AsyncStream { $0.finish() } })
    """#,
    "places": "let places: [Place] = []",
    "log": "func log(_ event: PlaceEvent) {}",
  ]

  static let snippets: [Snippet] = MarkdownFiles.codeBlocksOfPackage.filter {
    $0.language == "swift"
  }.map { Snippet(file: $0.file, line: $0.line, code: $0.code) }

  static var modules: URL { Products.buildDirectory.appendingPathComponent("Modules") }

  /// A module cache of the snippets' own, kept between runs. Not the build's: modules cached
  /// there must not record the paths of our compiles (`.build/debug` is a symbolic link).
  static let moduleCache = FileManager.default.temporaryDirectory
    .appendingPathComponent("waymark-readme-snippets-module-cache")

  /// The blocks are found where the documentation has them (so that the compile test below
  /// is not vacuous): the README's tour, and the guides'.
  @Test func theDocumentationHasSwiftBlocks() {
    let files = Set(Self.snippets.map(\.file))
    for file in [
      "README.md", "docs/guide/gpsd.md", "docs/guide/location-manager.md",
      "docs/guide/places-and-visits.md", "docs/guide/socket.md",
    ] {
      #expect(files.contains(file), "no ```swift block found in \(file)")
    }
    #expect(Self.snippets.count >= 6)
  }

  @Test(arguments: snippets) func compiles(_ snippet: Snippet) throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let asWritten = try Self.compile(snippet.code, in: directory)
    guard asWritten.status != 0 else { return }
    let missing = Self.missingNames(in: asWritten.stderr)
    let unknown = missing.filter { Self.placeholders[$0] == nil }
    guard !missing.isEmpty, unknown.isEmpty else {
      Issue.record("\(snippet.testDescription) does not compile:\n\(asWritten.stderr)")
      return
    }
    let completed = try Self.compile(Self.adding(missing, to: snippet.code), in: directory)
    #expect(
      completed.status == 0,
      "\(snippet.testDescription) with placeholders for \(missing):\n\(completed.stderr)")
  }

  /// Compiles `code` as the main file of a module, with the package's modules and C module maps.
  static func compile(_ code: String, in directory: URL) throws -> CommandRun {
    let file = directory.appendingPathComponent("main.swift")
    try code.write(to: file, atomically: true, encoding: .utf8)
    let sources = Products.packageRoot.appendingPathComponent("Sources")
    let cModules = try FileManager.default.contentsOfDirectory(atPath: sources.path).filter {
      FileManager.default.fileExists(
        atPath: sources.appendingPathComponent("\($0)/module.modulemap").path)
    }.sorted()
    return try CommandRun.run(
      "/usr/bin/env",
      [
        "swiftc", "-c", "-swift-version", "6", "-module-name", "ReadmeSnippet",
        "-module-cache-path", moduleCache.path,
        "-I", modules.path,
      ]
        // Every C module map of the package (CGPS, CSQLite, CPidfd, …): a module that imports
        // one needs it found, as SwiftPM does for a dependent package.
        + cModules.flatMap { ["-I", sources.appendingPathComponent($0).path] }
        + ["-o", directory.appendingPathComponent("main.o").path, file.path])
  }

  /// The names of `cannot find 'name' in scope` errors (not `cannot find type`: types come from
  /// imports).
  static func missingNames(in diagnostics: String) -> [String] {
    var names: Set<String> = []
    for line in diagnostics.split(separator: "\n") {
      guard let range = line.range(of: "error: cannot find '") else { continue }
      let rest = line[range.upperBound...]
      guard let quote = rest.firstIndex(of: "'"), rest[quote...].hasPrefix("' in scope") else {
        continue
      }
      names.insert(String(rest[..<quote]))
    }
    return names.sorted()
  }

  /// `code` with the placeholders for `names` after its leading imports.
  static func adding(_ names: [String], to code: String) -> String {
    let lines = code.split(separator: "\n", omittingEmptySubsequences: false)
    let imports = lines.prefix { $0.hasPrefix("import ") || $0.isEmpty }
    let declarations = names.compactMap { placeholders[$0] }
    return (imports + declarations.map { Substring($0) } + lines.dropFirst(imports.count))
      .joined(separator: "\n")
  }
}
