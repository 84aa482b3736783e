import Foundation
import Testing
import WaymarkCore

@testable import Waymark

@Suite struct SpatialIndexTests {
  /// The row tables (built once per index, mirrored where the rows tile the sphere) are,
  /// row for row and at every level, the width that one cosine per row gives: an index built
  /// before the mirroring, kept in the store, still finds its cells. Whole levels, and bands
  /// that straddle the equator by more or less than half a level (mirrored or not).
  @Test func theColumnTablesAreTheDirectWidthsAtEveryRow() {
    var rows = 0
    var mismatches = 0
    func check(level: Int, band: ClosedRange<Int>) -> SpatialIndex.RowTable {
      let table = SpatialIndex.RowTable(level: level, rows: band)
      #expect(table.firstRow == band.lowerBound && table.lastRow == band.upperBound)
      for row in band {
        rows += 1
        if table[row] != SpatialIndex.columnCount(level: level, row: row) { mismatches += 1 }
      }
      return table
    }
    var tables: [SpatialIndex.RowTable] = []
    for level in 0...SpatialIndex.maximumLevel {
      let count = SpatialIndex.rowCount(level: level)
      tables.append(check(level: level, band: 0...(count - 1)))
      _ = check(level: level, band: (count / 4)...(count - 1 - count / 8))
      _ = check(level: level, band: (count / 2 - count / 8)...(count / 2 + count / 16))
    }
    #expect(rows > 440_000)
    #expect(mismatches == 0)
    // Not vacuous: the widths vary, one column at the poles, just under 360 · 1024 beside the
    // equator (the row's poleward edge is a row height off it).
    let count = SpatialIndex.rowCount(level: 0)
    #expect(tables[0][0] == 1 && tables[0][count - 1] == 1)
    #expect(tables[0][count / 2] == 368_639)
    // A row outside the band is not held; an empty table holds none.
    let band = SpatialIndex.RowTable(level: 0, rows: 100...200)
    #expect(band.holds(100) && band.holds(200) && !band.holds(99) && !band.holds(201))
    #expect(!SpatialIndex.RowTable(level: 0, rows: nil).holds(0))
  }

  /// The geometry a cell stores is compact but honest: every candidate's centre is within
  /// 0.05 % of its radius (plus 5 mm) of the exact one, and its radius is never under it and at
  /// most one radius step (a 254th of a quarter row) over it. Each circle is asked for at its
  /// own centre, in the cell that holds its centre: there the index must know the radius (the
  /// level makes a row at least four radii high, so it fits the code), never "unknown".
  @Test func candidateGeometryBoundsTheExactCircle() {
    var rng = SeededGenerator(seed: 17)
    var centers: [Coordinate] = []
    var radii: [Double] = []
    for _ in 0..<3000 {
      let z = Double.random(in: -1...1, using: &rng)
      centers.append(
        Coordinate(
          latitude: asin(z) * 180 / .pi, longitude: Double.random(in: -180...180, using: &rng)))
      radii.append(exp(Double.random(in: 0..<log(50_000.0), using: &rng)))
    }
    let index = SpatialIndex(centers: centers, radiiMeters: radii)
    var seen = 0
    var unknown = 0
    for (circle, center) in centers.enumerated() {
      let step = SpatialIndex.radiusUnitMeters(
        level: SpatialIndex.level(forRadiusMeters: radii[circle]))
      index.forEachCandidate(near: center) { candidate in
        guard candidate.circle == circle else { return }
        seen += 1
        guard candidate.radiusMeters.isFinite else {
          unknown += 1
          return
        }
        #expect(candidate.radiusMeters >= radii[circle])
        #expect(candidate.radiusMeters <= radii[circle] + step, "circle \(circle)")
        let stored = Coordinate(
          latitude: candidate.latitude, longitude: SpatialIndex.wrapped(candidate.longitude))
        #expect(stored.distance(to: center) <= radii[circle] * 5e-4 + 0.005)
      }
    }
    #expect(seen >= centers.count)
    #expect(unknown == 0, "\(unknown) of \(seen) candidates at their own centre had no radius")

    // The control: a circle too large for a quarter of the coarsest row (256°, about 7,100 km)
    // cannot have its radius coded, and is answered as "unknown" next to a known one.
    let large = SpatialIndex(
      centers: [centers[0], centers[0]], radiiMeters: [8_000_000, radii[0]])
    var answers: [Int: Double] = [:]
    large.forEachCandidate(near: centers[0]) { answers[$0.circle] = $0.radiusMeters }
    #expect(answers[0] == .infinity)
    #expect(answers[1]?.isFinite == true)
  }

  /// Random circles (worldwide, and clustered at the antimeridian and both poles, radii from
  /// 1 m to 300 km) against a brute-force scan, for random points and random query distances.
  @Test(arguments: [1, 2, 3, 4] as [UInt64])
  func matchesBruteForce(seed: UInt64) {
    var rng = SeededGenerator(seed: seed)
    var centers: [Coordinate] = []
    var radii: [Double] = []
    let hotSpots = [
      Coordinate(latitude: 0, longitude: 180), Coordinate(latitude: 65, longitude: -180),
      Coordinate(latitude: 90, longitude: 0), Coordinate(latitude: -90, longitude: 0),
      Coordinate(latitude: 89.99, longitude: 179.99), Coordinate(latitude: 48.1, longitude: 11.6),
    ]
    func randomPoint() -> Coordinate {
      if Bool.random(using: &rng) {
        let z = Double.random(in: -1...1, using: &rng)  // uniform on the sphere
        return Coordinate(
          latitude: asin(z) * 180 / .pi, longitude: Double.random(in: -180...180, using: &rng))
      }
      let spot = hotSpots.randomElement(using: &rng)!
      return spot.offset(
        by: Double.random(in: 0..<20_000, using: &rng),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
    }
    for _ in 0..<2000 {
      centers.append(randomPoint())
      let scale = Double.random(in: 0..<1, using: &rng)
      radii.append(
        scale < 0.8
          ? Double.random(in: 1..<500, using: &rng)
          : scale < 0.97
            ? Double.random(in: 500..<20_000, using: &rng)
            : Double.random(in: 20_000..<300_000, using: &rng))
    }
    let index = SpatialIndex(centers: centers, radiiMeters: radii)
    #expect(index.count == centers.count)

    var hits = 0
    for query in 0..<800 {
      // Points near a circle's edge are the interesting ones.
      let target = Int.random(in: 0..<centers.count, using: &rng)
      let point =
        query % 3 == 0
        ? randomPoint()
        : centers[target].offset(
          by: radii[target] * Double.random(in: 0.9..<1.1, using: &rng),
          bearingDegrees: Double.random(in: 0..<360, using: &rng))
      let expected = centers.indices.filter { centers[$0].distance(to: point) <= radii[$0] }
      #expect(index.circles(containing: point) == expected, "point \(point)")
      hits += expected.count

      let reach = Double.random(in: 0..<2000, using: &rng)
      let near = centers.indices.filter {
        centers[$0].distance(to: point) <= radii[$0] + reach
      }
      #expect(index.circles(within: reach, of: point) == near, "cap \(point) ± \(reach) m")
    }
    #expect(hits > 300, "the queries must actually hit circles")
  }

  /// Exact cases at the antimeridian and the poles.
  @Test func antimeridianAndPoles() {
    let centers = [
      Coordinate(latitude: 10, longitude: 179.9995),  // 55 m west of the antimeridian
      Coordinate(latitude: 90, longitude: 0),  // the North Pole
      Coordinate(latitude: -89.9995, longitude: 45),  // 55 m from the South Pole
    ]
    let index = SpatialIndex(centers: centers, radiiMeters: [100, 1000, 100])
    #expect(index.circles(containing: Coordinate(latitude: 10, longitude: -179.9999)) == [0])
    #expect(index.circles(containing: Coordinate(latitude: 10, longitude: 180)) == [0])
    #expect(index.circles(containing: Coordinate(latitude: 89.995, longitude: -120)) == [1])
    #expect(index.circles(containing: Coordinate(latitude: 89.995, longitude: 179)) == [1])
    #expect(index.circles(containing: Coordinate(latitude: -90, longitude: 0)) == [2])
    #expect(index.circles(containing: Coordinate(latitude: -89.9999, longitude: -135)) == [2])
    #expect(index.circles(containing: Coordinate(latitude: 10, longitude: 179.99)).isEmpty)
  }

  /// Centres with 7 decimals and radii in millimetres, as imported places have them, take 12
  /// bytes of exact geometry a circle instead of 24, and the index answers exactly as over the
  /// same circles kept as `Double`s (one full-precision circle far away forces that): the same
  /// centres and radii bit for bit, the same circles near every query point.
  @Test func decimalGeometryIsKeptCompactlyAndExactly() {
    var rng = SeededGenerator(seed: 23)
    let origin = Fixture.origin
    func decimals(_ value: Double, _ scale: Double) -> Double { (value * scale).rounded() / scale }
    var centers: [Coordinate] = []
    var radii: [Double] = []
    for _ in 0..<5000 {
      let spot = origin.offset(
        by: 20_000 * Double.random(in: 0..<1, using: &rng).squareRoot(),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      centers.append(
        Coordinate(latitude: decimals(spot.latitude, 1e7), longitude: decimals(spot.longitude, 1e7))
      )
      radii.append(decimals(Double.random(in: 5..<500, using: &rng), 1e3))
    }
    let compact = SpatialIndex(centers: centers, radiiMeters: radii)
    let wide = SpatialIndex(
      centers: centers + [Coordinate(latitude: -60.123456789012, longitude: 1.0 / 3)],
      radiiMeters: radii + [100.0 / 3])
    #expect(wide.approximateByteCount - compact.approximateByteCount >= 11 * centers.count)
    for circle in centers.indices {
      #expect(compact.center(of: circle).latitude.bitPattern == centers[circle].latitude.bitPattern)
      #expect(
        compact.center(of: circle).longitude.bitPattern == centers[circle].longitude.bitPattern)
      #expect(compact.radiusMeters(of: circle).bitPattern == radii[circle].bitPattern)
    }
    var found = 0
    for _ in 0..<2000 {
      let point = origin.offset(
        by: 21_000 * Double.random(in: 0..<1, using: &rng).squareRoot(),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      let distance = Double.random(in: 0..<300, using: &rng)
      let near = compact.circles(within: distance, of: point)
      #expect(near == wide.circles(within: distance, of: point))
      #expect(compact.circles(containing: point) == wide.circles(containing: point))
      found += near.count
    }
    #expect(found > 0)
  }

  /// 300,000 places in a 100 km disc (the benchmark runs a million in release): the monitor
  /// finds exactly the places that contain the device.
  @Test func manyPlacesWork() {
    var rng = SeededGenerator(seed: 77)
    let origin = Fixture.origin
    var places: [Place] = []
    places.reserveCapacity(300_000)
    for i in 0..<300_000 {
      let spot = origin.offset(
        by: 100_000 * Double.random(in: 0..<1, using: &rng).squareRoot(),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      places.append(Place(id: "\(i)", name: "", coordinate: spot, radiusMeters: 60))
    }
    let target = places[123_456]
    let monitor = PlaceMonitor(places: places)
    #expect(monitor.placeCount == 300_000)
    var events: [PlaceEvent] = []
    for second in 0..<5 {
      events += monitor.process(
        Location(
          coordinate: target.coordinate, horizontalAccuracy: 3,
          timestamp: Date(timeIntervalSince1970: 1_800_000_000 + Double(second))))
    }
    let expected = places.filter { $0.coordinate.distance(to: target.coordinate) <= 60 }.map(\.id)
    #expect(Set(events.map(\.placeID)) == Set(expected))
    #expect(events.contains { $0.placeID == target.id })
  }
}

/// The indexed, pre-filtered monitor against the exhaustive one (every place stepped on every
/// fix): same events, for random places and sparse, fast, noisy drives (pass-throughs), at
/// mid-latitudes, near a pole and across the antimeridian.
@Suite struct SpatialIndexMonitorEquivalenceTests {
  @Test(arguments: [
    Coordinate(latitude: 48.137, longitude: 11.575), Coordinate(latitude: 64.9, longitude: 179.99),
    Coordinate(latitude: -89.95, longitude: 30), Coordinate(latitude: 71, longitude: -20),
  ])
  func indexedMatchesExhaustive(origin: Coordinate) {
    var rng = SeededGenerator(seed: UInt64(abs(origin.latitude * 1000)))
    var places: [Place] = []
    for i in 0..<300 {
      let spot = origin.offset(
        by: 4000 * Double.random(in: 0..<1, using: &rng).squareRoot(),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      places.append(
        Place(
          id: "p\(i)", name: "", coordinate: spot,
          radiusMeters: Double.random(in: 5..<250, using: &rng)))
    }
    var walk = Walk(start: "2026-11-29T10:00:00.000Z", at: origin, seed: 8)
    walk.noiseMeters = 6
    walk.interval = 4
    for _ in 0..<12 {
      let target = origin.offset(
        by: 4000 * Double.random(in: 0..<1, using: &rng),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      walk.move(to: target, speed: Double.random(in: 5..<40, using: &rng))
      walk.stay(seconds: 40)
    }
    var indexed = PlaceMonitorEngine(places: places)
    var exhaustive = PlaceMonitorEngine(places: places)
    exhaustive.isExhaustive = true
    var fast: [PlaceEvent] = []
    var reference: [PlaceEvent] = []
    for location in walk.locations {
      fast += indexed.process(location)
      reference += exhaustive.process(location)
    }
    #expect(reference.count > 20)
    #expect(reference.contains { $0.reason.rule == "pass-through" })
    #expect(fast == reference)
  }
}
