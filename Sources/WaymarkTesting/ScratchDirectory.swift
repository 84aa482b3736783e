import Foundation

/// A directory of a test's own under the temporary directory, removed with the value.
package final class ScratchDirectory: @unchecked Sendable {
  // @unchecked: immutable after init.
  /// The directory.
  package let url: URL

  /// Creates `waymark-<label>-<uuid>` under the temporary directory.
  package init(_ label: String) throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-\(label)-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  deinit { try? FileManager.default.removeItem(at: url) }

  /// The path of `name` in the directory.
  package func path(_ name: String) -> String { url.appendingPathComponent(name).path }
}
