import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkPipeline
import WaymarkStore

@Suite struct PlaceTableStoreTests {
  /// The daemon's loader (`PlaceTable.load`, the monitor's columns only) gives a monitor that
  /// behaves as one over the store's `Place` values: the same places, names, overrides (exit
  /// radius, accuracy gate, confirmations, dwell, `overlap: nearest` groups) and so the same
  /// events, byte for byte, on a drive past them all; and so does the monitor of the next
  /// load, which reads the snapshot the first load stored instead of the rows.
  @Test func loadedTableMonitorsAsThePlaces() throws {
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent(
        "waymark-place-table-\(getpid())-\(UInt64.random(in: 0...UInt64.max))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let database = try Database(path: directory.appendingPathComponent("store.db").path)
    let origin = Coordinate(latitude: 48.137, longitude: 11.575)
    let north = { (meters: Double) in origin.offset(by: meters, bearingDegrees: 0) }
    // Inserted out of id order; two share an `overlap: nearest` group.
    let places = [
      Place(id: "z-last", name: "Last", coordinate: north(4000), radiusMeters: 80),
      Place(
        id: "m-slow", name: "Slow to confirm", coordinate: north(1000), radiusMeters: 120,
        detection: PlaceDetectionOverrides(
          exitRadiusMeters: 400, maximumAccuracyMeters: 30, confirmations: 4, dwellSeconds: 20)),
      Place(
        id: "g1", name: "Group one", coordinate: north(2500), radiusMeters: 150,
        detection: PlaceDetectionOverrides(group: "yard", overlap: .nearest)),
      Place(
        id: "g2", name: "Group two", coordinate: north(2600), radiusMeters: 150,
        detection: PlaceDetectionOverrides(group: "yard", overlap: .nearest)),
      Place(id: "a-first", name: "Über", coordinate: north(200), radiusMeters: 60),
    ]
    try database.write { _ = try PlaceRepository($0).upsert(places) }

    let table = try PlaceTable.load(from: database)
    #expect(table.count == places.count)
    let hasSnapshot = try database.read { connection in
      let repository = PlaceSnapshotRepository(connection)
      return try repository.withSnapshot(
        version: try repository.placesVersion(), format: PlaceTable.snapshotFormat
      ) { _ in true }
    }
    #expect(hasSnapshot == true)
    let loaded = PlaceMonitor(table: table)
    let snapshotted = PlaceMonitor(table: try PlaceTable.load(from: database))
    let reference = PlaceMonitor(places: try database.read { try PlaceRepository($0).all() })
    for place in places {
      #expect(loaded.name(of: place.id) == place.name)
      #expect(snapshotted.name(of: place.id) == place.name)
    }

    var events: (loaded: [UInt8], reference: [UInt8], snapshotted: [UInt8]) = ([], [], [])
    var count = 0
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    for second in 0..<900 {
      // North at 5 m/s, through every circle (24 to 60 s inside each).
      let meters = Double(second) * 5
      let location = Location(
        coordinate: north(meters), horizontalAccuracy: 5,
        timestamp: start.addingTimeInterval(Double(second)))
      for event in loaded.process(location) { event.jsonLine().write(to: &events.loaded) }
      for event in snapshotted.process(location) {
        event.jsonLine().write(to: &events.snapshotted)
      }
      for event in reference.process(location) {
        event.jsonLine().write(to: &events.reference)
        count += 1
      }
    }
    // The drive made events (so the comparison compares something), the same on both.
    #expect(count >= 6)
    #expect(events.loaded == events.reference)
    #expect(events.snapshotted == events.reference)
  }
}
