import Foundation

/// Locates the package's built executables and shared test data from inside a test process.
package enum Products {
  /// The directory that holds the test bundle, which is also where SwiftPM puts executables.
  package static var buildDirectory: URL {
    var url = URL(fileURLWithPath: CommandLine.arguments.first ?? ".").absoluteURL
    // The test runner is `.../debug/WaymarkPackageTests.xctest` (Linux: an executable file).
    while url.pathComponents.count > 1 {
      url.deleteLastPathComponent()
      if FileManager.default.fileExists(atPath: url.appendingPathComponent("waymark").path) {
        return url
      }
    }
    return URL(fileURLWithPath: CommandLine.arguments.first ?? ".").deletingLastPathComponent()
  }

  /// The path of the executable `name` (such as `waymark`) built next to the tests.
  package static func executable(_ name: String) -> String {
    buildDirectory.appendingPathComponent(name).path
  }

  /// The package root, found from this source file's location.
  package static var packageRoot: URL {
    URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent()  // WaymarkTesting
      .deletingLastPathComponent()  // Sources
      .deletingLastPathComponent()
  }

  /// gpsd's regression logs and their expected output, kept in the repository as test data
  /// (`Tests/Fixtures/gpsd`, with their licence and provenance), or `nil` when a checkout lacks
  /// them.
  package static var gpsdCorpus: URL? {
    let url = packageRoot.appendingPathComponent("Tests/Fixtures/gpsd")
    return FileManager.default.fileExists(atPath: url.appendingPathComponent("manifest.json").path)
      ? url : nil
  }
}
