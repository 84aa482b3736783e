import Foundation
import Testing
import WaymarkCore

@testable import Waymark

@Suite struct PlaceTableSnapshotTests {
  /// Random places: out of id order, some with overrides and groups, geometry either with
  /// decimals as imported (kept as integers) or full-precision `Double`s.
  static func table(seed: UInt64, count: Int, decimals: Bool) -> PlaceTable {
    var rng = SeededGenerator(seed: seed)
    let origin = Coordinate(latitude: 48.137, longitude: 11.575)
    var places: [Place] = []
    for number in 0..<count {
      var center = origin.offset(
        by: Double.random(in: 0..<5000, using: &rng),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      var radius = Double.random(in: 20..<400, using: &rng)
      if decimals {
        center = Coordinate(
          latitude: (center.latitude * 1e7).rounded() / 1e7,
          longitude: (center.longitude * 1e7).rounded() / 1e7)
        radius = radius.rounded()
      }
      var detection = PlaceDetectionOverrides()
      if number % 7 == 0 {
        detection = PlaceDetectionOverrides(
          exitRadiusMeters: radius * 2, maximumAccuracyMeters: 40, confirmations: 3,
          dwellSeconds: 15, group: "g\(number % 3)", overlap: number % 2 == 0 ? .nearest : .all)
      }
      places.append(
        Place(
          id: "p\(Int.random(in: 0..<1_000_000, using: &rng))-\(number)", name: "Ort \(number) é",
          coordinate: center, radiusMeters: radius, detection: detection))
    }
    var table = PlaceTable(places)
    table.buildIndex()
    return table
  }

  /// A drive at 10 m/s through `legs` random points within 5 km of `origin`, a fix a second.
  static func drive(seed: UInt64, from origin: Coordinate, legs: Int) -> [Location] {
    var walk = Walk(start: "2026-12-06T10:00:00.000Z", at: origin, seed: seed)
    for _ in 0..<legs {
      walk.move(
        to: origin.offset(
          by: Double.random(in: 0..<5000, using: &walk.rng),
          bearingDegrees: Double.random(in: 0..<360, using: &walk.rng)), speed: 10)
    }
    return walk.locations
  }

  /// Round trip (the positive control): a snapshot reads back as a table with the same
  /// places, names, overrides and index answers as the built one, and a monitor over it gives
  /// the same events on a drive.
  @Test(arguments: [(1, true), (2, false)] as [(UInt64, Bool)])
  func roundTripAnswersAsTheBuiltIndex(seed: UInt64, decimals: Bool) throws {
    let built = Self.table(seed: seed, count: 3000, decimals: decimals)
    let bytes = try #require(built.snapshot())
    let restored = try #require(bytes.withUnsafeBytes { PlaceTable(snapshot: $0) })
    let (index, copy) = (try #require(built.index), try #require(restored.index))
    #expect(restored.count == built.count)
    #expect(restored.overriddenPlaces == built.overriddenPlaces)
    #expect(restored.overrides == built.overrides)
    #expect(restored.names.snapshotBytes == built.names.snapshotBytes)
    for place in [0, 1, 7, built.count - 1] {
      #expect(restored.names.id(place) == built.names.id(place))
      #expect(restored.names.number(of: built.names.id(place)) == Int32(place))
    }
    #expect(restored.latitudes.map(\.bitPattern) == built.latitudes.map(\.bitPattern))
    #expect(restored.radii.map(\.bitPattern) == built.radii.map(\.bitPattern))
    var rng = SeededGenerator(seed: seed + 100)
    var hits = 0
    let origin = Coordinate(latitude: 48.137, longitude: 11.575)
    for _ in 0..<2000 {
      let point = origin.offset(
        by: Double.random(in: 0..<5500, using: &rng),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      let containing = index.circles(containing: point)
      #expect(copy.circles(containing: point) == containing)
      #expect(copy.circles(within: 150, of: point) == index.circles(within: 150, of: point))
      hits += containing.count
    }
    #expect(hits > 1000, "the queries must hit circles")

    let (fromBuilt, fromSnapshot) = (
      PlaceMonitorEngine(table: built), PlaceMonitorEngine(table: restored)
    )
    var engines = [fromBuilt, fromSnapshot]
    var events: [[String]] = [[], []]
    for location in Self.drive(seed: seed, from: origin, legs: 12) {
      for side in 0..<2 {
        events[side] += engines[side].process(location).map { "\($0)" }
      }
    }
    #expect(events[0].count > 20, "the drive must make events")
    #expect(events[1] == events[0])
  }

  /// A table without its index built gives no snapshot; with one, its bytes start with the
  /// magic number.
  @Test func snapshotNeedsTheIndex() throws {
    var table = PlaceTable(
      [
        Place(
          id: "a", name: "A", coordinate: Coordinate(latitude: 1, longitude: 2), radiusMeters: 50)
      ])
    #expect(table.snapshot() == nil)
    table.buildIndex()
    let bytes = try #require(table.snapshot())
    #expect(Array(bytes.prefix(8)) == Array("WMPLACES".utf8))
    #expect(PlaceTable().snapshot() == nil)
    var empty = PlaceTable()
    empty.buildIndex()
    let none = try #require(empty.snapshot())
    #expect(none.withUnsafeBytes { PlaceTable(snapshot: $0) }?.count == 0)
  }

  /// Truncated, extended, of another format or byte order, or with any byte flipped: refused
  /// (the checksum and the header), never a trap; the untouched bytes still read (control).
  @Test func damagedSnapshotsAreRefused() throws {
    let bytes = try #require(Self.table(seed: 3, count: 500, decimals: true).snapshot())
    func reads(_ bytes: [UInt8]) -> Bool {
      bytes.withUnsafeBytes { PlaceTable(snapshot: $0) } != nil
    }
    #expect(reads(bytes))
    for length in [0, 1, 7, 8, 31, 32, 33, bytes.count / 2, bytes.count - 1] {
      #expect(!reads(Array(bytes.prefix(length))), "truncated to \(length)")
    }
    #expect(!reads(bytes + [0]))
    var otherFormat = bytes
    otherFormat[8] &+= 1
    #expect(!reads(otherFormat))
    var otherOrder = bytes
    otherOrder.swapAt(12, 15)
    otherOrder.swapAt(13, 14)
    #expect(!reads(otherOrder))
    var rng = SeededGenerator(seed: 5)
    for _ in 0..<300 {
      var flipped = bytes
      let position = Int.random(in: 0..<bytes.count, using: &rng)
      flipped[position] ^= UInt8.random(in: 1...255, using: &rng)
      #expect(!reads(flipped), "byte \(position) flipped")
    }
  }

  /// Hostile bytes (the checksum made right after the flips, as a writer of the store could):
  /// each reads as nothing or as a table whose queries and monitor run without a trap.
  @Test func forgedSnapshotsNeverTrap() throws {
    let bytes = try #require(Self.table(seed: 4, count: 300, decimals: false).snapshot())
    var rng = SeededGenerator(seed: 6)
    var (refused, accepted) = (0, 0)
    let origin = Coordinate(latitude: 48.137, longitude: 11.575)
    for round in 0..<200 {
      var forged = bytes
      for _ in 0...(round % 4) {
        let position = Int.random(in: 32..<bytes.count, using: &rng)
        forged[position] = round % 5 == 0 ? 0xFF : UInt8.random(in: 0...255, using: &rng)
      }
      let checksum = forged.withUnsafeBytes {
        PlaceTable.checksum(UnsafeRawBufferPointer(rebasing: $0[32...]))
      }
      withUnsafeBytes(of: checksum) { for index in 0..<8 { forged[24 + index] = $0[index] } }
      guard let table = forged.withUnsafeBytes({ PlaceTable(snapshot: $0) }) else {
        refused += 1
        continue
      }
      accepted += 1
      var engine = PlaceMonitorEngine(table: table)
      for location in Self.drive(seed: UInt64(round), from: origin, legs: 1) {
        _ = engine.process(location)
      }
      for place in 0..<min(table.count, 20) { _ = table.names.id(place) }
      _ = engine.nearestPlaceID(containing: origin)
    }
    // Some forgeries are refused by the structural checks, the others (bytes of geometry or
    // names that make another sound table) ran above without a trap.
    #expect(refused > 0)
    #expect(accepted > 0)
  }
}
