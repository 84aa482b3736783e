import Foundation
import WaymarkStore
import WaymarkTesting

@testable import WaymarkCLI

/// The demo drive replayed with its places into a store in a temporary directory, through the
/// built `waymark` (as `Scripts/demo.sh` does), for the map tests.
final class DemoStore {
  let directory: URL
  let store: String

  /// A temporary directory for a store named `name`, not yet created.
  init(empty name: String) throws {
    directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-map-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    store = directory.appendingPathComponent(name).path
  }

  /// The demo drive's store.
  convenience init() throws {
    try self.init(empty: "demo.db")
    let demo = Products.packageRoot.appendingPathComponent("Demo")
    let run = try CommandRun.waymark([
      "replay", demo.appendingPathComponent("drive.nmea").path, "--places",
      demo.appendingPathComponent("places.geojson").path, "--store", store,
    ])
    guard run.status == 0 else { throw MapTestFailure("replay failed: \(run.stderr)") }
  }

  deinit { try? FileManager.default.removeItem(at: directory) }

  func file(_ name: String) -> URL { directory.appendingPathComponent(name) }

  /// Runs `waymark map --store <store>` with `arguments`.
  func map(_ arguments: [String]) throws -> CommandRun {
    try CommandRun.waymark(["map", "--store", store] + arguments)
  }

  /// The renderer `waymark map` uses for this store, read here with the same types: its
  /// projection says where each thing must be on the picture.
  func renderer() throws -> SVGMapRenderer {
    let content = try Database(path: store, createIfMissing: false).read {
      try MapContent(connection: $0, since: nil, until: nil)
    }
    guard let renderer = SVGMapRenderer(content) else { throw MapTestFailure("empty map") }
    return renderer
  }
}

struct MapTestFailure: Error, CustomStringConvertible {
  var description: String
  init(_ description: String) { self.description = description }
}
