import Foundation
import Testing
import Waymark
import WaymarkService
import WaymarkStore
import WaymarkTesting

/// Writes the daemon's fixtures of `Tests/Fixtures/saved-state` with the code of the day (run
/// once, with WAYMARK_WRITE_FIXTURES=1, before the JSON writer changed).
@Suite struct DaemonSavedStateFixtureWriter {
  @Test(.enabled(if: ProcessInfo.processInfo.environment["WAYMARK_WRITE_FIXTURES"] != nil))
  func writeSnapshotsAndHeldState() throws {
    let fixture = DaemonSavedStateFixture.self
    let entries = SavedMonitorState.entries(
      current: fixture.places, previouslySaved: fixture.previouslySaved)
    let lines = entries.sorted { $0.key < $1.key }.map { "\($0.key)\t\($0.value)\n" }
    try Data(lines.joined().utf8).write(
      to: fixture.directory.appendingPathComponent("saved-monitor-state.tsv"))

    let temporary = try TemporaryDirectory()
    let database = try Database(path: temporary.file("waymark.db"))
    let registry = try HeldMonitorRegistry(database: database)
    _ = try registry.add(fixture.conditions, to: fixture.key)
    registry.authorize([fixture.key.clientID])
    for location in fixture.locations { _ = try registry.process(location) }
    _ = try registry.add([fixture.late], to: fixture.key)
    let rows = try database.read { try HeldMonitorRepository($0).all() }
    try #require(rows.count == 1)
    try Data((rows[0].state + "\n").utf8).write(
      to: fixture.directory.appendingPathComponent("held-monitor.json"))
  }
}
