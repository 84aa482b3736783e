import Foundation

/// A program written as Apple's documentation writes it (`Tests/Fixtures/corelocation/<name>.swift`,
/// with `import CoreLocation`), compiled against `WaymarkCoreLocation` with that line, and only
/// it, replaced: what an iOS developer porting the program does.
package enum CoreLocationProgram {
  /// The modules a program that imports WaymarkCoreLocation links, in dependency order.
  package static let linked = [
    "WaymarkCoreLocation", "WaymarkGazetteer", "Waymark", "WaymarkClient", "GPSD", "NMEA",
    "WaymarkCore",
  ]

  /// Whether the library is built (the programs compile against the build directory).
  package static var isBuilt: Bool {
    FileManager.default.fileExists(
      atPath: Products.buildDirectory.appendingPathComponent(
        "Modules/WaymarkCoreLocation.swiftmodule"
      ).path)
  }

  /// Why a program cannot be compiled.
  package struct Failure: Error, CustomStringConvertible {
    /// What went wrong: the compiler's messages, or the import line that was not found once.
    package let description: String
  }

  /// Compiles the fixture `name` with its import line replaced (warnings as errors) into
  /// `directory`; returns the executable, named `name` (the program's name, which its grant is
  /// recorded under).
  package static func compile(_ name: String, into directory: String) throws -> String {
    let source = try String(
      contentsOf: Products.packageRoot.appendingPathComponent(
        "Tests/Fixtures/corelocation/\(name).swift"), encoding: .utf8)
    let lines = source.split(separator: "\n", omittingEmptySubsequences: false)
    guard lines.filter({ $0 == "import CoreLocation" }).count == 1 else {
      throw Failure(description: "\(name): not exactly one 'import CoreLocation' line")
    }
    // The only difference is that line.
    let ported = lines.map { $0 == "import CoreLocation" ? "import WaymarkCoreLocation" : $0 }
      .joined(separator: "\n")
    let main = directory + "/main.swift"
    try Data(ported.utf8).write(to: URL(fileURLWithPath: main))
    let build = Products.buildDirectory
    let objects = try linked.flatMap { module in
      let objectDirectory = build.appendingPathComponent("\(module).build")
      return try FileManager.default.contentsOfDirectory(atPath: objectDirectory.path)
        .filter { $0.hasSuffix(".o") }.sorted()
        .map { objectDirectory.appendingPathComponent($0).path }
    }
    let executable = directory + "/" + name
    let parseAsLibrary = source.contains("@main") ? ["-parse-as-library"] : []
    let run = try CommandRun.run(
      "/usr/bin/env",
      ["swiftc", "-swift-version", "6", "-warnings-as-errors", "-module-name", name]
        + parseAsLibrary
        + [
          "-module-cache-path", directory + "/module-cache",
          "-I", build.appendingPathComponent("Modules").path,
          "-I", Products.packageRoot.appendingPathComponent("Sources/CGPS").path, main,
        ] + objects + ["-lgps", "-o", executable], timeout: .seconds(600))
    guard run.status == 0 else {
      throw Failure(description: "\(name) does not compile:\n\(run.stderr)")
    }
    return executable
  }
}
