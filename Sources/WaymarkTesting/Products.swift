import Foundation

/// Locates the package's built executables and shared test data from inside a test process.
public enum Products {
  /// The directory that holds the test bundle, which is also where SwiftPM puts executables.
  public static var buildDirectory: URL {
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
  public static func executable(_ name: String) -> String {
    buildDirectory.appendingPathComponent(name).path
  }

  /// The package root, found from this source file's location.
  public static var packageRoot: URL {
    URL(fileURLWithPath: #filePath)
      .deletingLastPathComponent()  // WaymarkTesting
      .deletingLastPathComponent()  // Sources
      .deletingLastPathComponent()
  }

  /// `../shared/corpus/gpsd` beside the package, or `nil` when it is absent.
  public static var gpsdCorpus: URL? {
    let url = packageRoot.deletingLastPathComponent()
      .appendingPathComponent("shared/corpus/gpsd")
    return FileManager.default.fileExists(atPath: url.path) ? url : nil
  }
}
