import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkPipeline
import WaymarkStore
import WaymarkTesting

/// The real daemon records the same events whether it reads its places from their rows or
/// from the store's snapshot of them.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonPlaceSnapshotTests {
  /// The commute through Home and the Office, once for a daemon on a fresh store (no
  /// snapshot: it reads the rows, and says so) and once for a daemon on a store whose snapshot
  /// was stored before it started (it says it used it): the same events, with the same times,
  /// reasons and positions, in the same order.
  @Test func theSameEventsFromTheRowsAndFromTheSnapshot() async throws {
    let places = [
      ("home", "Home", Commute.home), ("office", "Office", Commute.office),
      ("far", "Far", Commute.home.offset(by: 5000, bearingDegrees: 0)),
    ]
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    var runs: [[String]] = []
    for snapshot in [false, true] {
      let rig = try await DaemonRig.start(places: places)
      defer { rig.stop() }
      if snapshot {
        _ = try PlaceTable.load(from: try Database(path: rig.store, createIfMissing: false))
      }
      let daemon = try rig.launch()
      try await rig.gpsd.waitForWatchers(1)
      let (fromRows, fromSnapshot) = (
        "<6>3 place(s) read from the store's rows", "<6>3 place(s) from the store's snapshot"
      )
      try await daemon.waitForLine { $0 == (snapshot ? fromSnapshot : fromRows) }
      #expect(!daemon.log.contains(snapshot ? fromRows : fromSnapshot))
      try await rig.send(epochs)
      try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office (office)") }
      daemon.signal(SIGTERM)
      #expect(try await daemon.waitForExit() == 0)
      let database = try Database(path: rig.store, createIfMissing: false)
      let events = try database.read { try EventRepository($0).all() }
      runs.append(
        events.map {
          "\($0.className) \($0.placeID) \($0.time.timeIntervalSince1970) "
            + "\($0.coordinate.map { "\($0.latitude),\($0.longitude)" } ?? "-") \($0.reasonJSON)"
        })
    }
    // The drive made the four events (the comparison compares something), the same twice.
    #expect(
      runs[0].map { $0.split(separator: " ").prefix(2).joined(separator: " ") } == [
        "ARRIVAL home", "DEPARTURE home", "ARRIVAL office", "DEPARTURE office",
      ])
    #expect(runs[1] == runs[0])
  }
}
