import Foundation
import Testing
import WaymarkCore

@testable import Waymark

/// Writes the fixtures of `Tests/Fixtures/saved-state` with the code of the day (run once,
/// with WAYMARK_WRITE_FIXTURES=1, before the JSON writer changed).
@Suite struct SavedStateFixtureWriter {
  @Test(.enabled(if: ProcessInfo.processInfo.environment["WAYMARK_WRITE_FIXTURES"] != nil))
  func writeMonitorAndGrants() throws {
    let directory = MonitorSavedFixture.directory
    let store = try MonitorStore(name: "monitor", directory: directory)
    try store.save(MonitorSavedFixture.saved)
    store.release()
    try FileManager.default.removeItem(at: directory.appendingPathComponent("monitor.lock"))
    let grants = FileGrantStore(directory: directory)
    let at = Date(timeIntervalSince1970: 1_796_000_000)
    for grant in [
      Grant(clientID: "org.example.app", level: .whenInUse, accuracy: .full, grantedAt: at),
      Grant(
        clientID: "/usr/bin/alice-tool", level: .always, accuracy: .reduced,
        grantedAt: at.addingTimeInterval(0.123)),
      Grant(
        clientID: "com.example.\u{E9}t\u{E9}", level: .whenInUse, accuracy: .reduced,
        grantedAt: at.addingTimeInterval(86_400.999)),
      Grant(
        clientID: "Zed \"quoted\"", level: .never, accuracy: .full,
        grantedAt: Date(timeIntervalSince1970: 0)),
      Grant(
        clientID: "alice:/usr/bin/app", level: .always, accuracy: .full,
        grantedAt: at.addingTimeInterval(-0.5)),
    ] {
      try grants.save(grant)
    }
    try FileManager.default.removeItem(at: directory.appendingPathComponent("grants.lock"))
  }
}
