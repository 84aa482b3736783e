import Foundation
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct PipelineEquivalenceTests {
  /// The claim of docs/architecture.md: live and replayed go through the same pipeline. A drive fed to
  /// `waymarkd` through a real gpsd on a pseudo-terminal records exactly the visits (place,
  /// arrival, departure) that `waymark replay --store` records from the same NMEA log.
  @Test func daemonThroughGPSDRecordsWhatReplayRecords() async throws {
    let places = [("home", "Home", Commute.home), ("office", "Office", Commute.office)]
    let rig = try await DaemonRig.start(places: places)
    defer { rig.stop() }
    let epochs = Commute.epochs(homeStay: 25, officeStay: 30)
    let daemon = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(epochs)
    try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office (office)") }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)

    let log = rig.directory.file("drive.nmea")
    try Data(epochs.flatMap(\.lines).map { $0 + "\r\n" }.joined().utf8)
      .write(to: URL(fileURLWithPath: log))
    let replayStore = rig.directory.file("replay.db")
    for (id, name, coordinate) in places {
      try addPlace(store: replayStore, id: id, name: name, at: coordinate, radius: 50)
    }
    let replay = try CommandRun.waymark(["replay", log, "--store", replayStore])
    #expect(replay.status == 0, "\(replay.stderr)")

    func summary(_ store: String) throws -> [String] {
      try storedVisits(store).map { record in
        let visit = record.visit
        return "\(visit.placeID) \(Timestamp.format(visit.arrivalDate)) "
          + (visit.departureDate.map(Timestamp.format) ?? "open")
      }
    }
    let live = try summary(rig.store)
    #expect(live.count == 2, "\(live)")
    #expect(live == (try summary(replayStore)))
  }
}
