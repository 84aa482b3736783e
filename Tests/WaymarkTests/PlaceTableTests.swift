import Foundation
import Testing
import WaymarkCore

@testable import Waymark

@Suite struct PlaceTableTests {
  /// A place with an invalid centre and a second place with an id already there are skipped
  /// (the first wins), whether the ids come in ascending order (the store's) or not — the
  /// second case checks every id against a set from the first id out of order on.
  @Test func invalidCentresAndRepeatedIDsAreSkipped() {
    let origin = Fixture.origin
    let ascending: [Place] = [
      Fixture.place("a", at: origin),
      Fixture.place("b", at: origin.offset(by: 500, bearingDegrees: 0)),
      Place(id: "c", name: "Nowhere", coordinate: Coordinate(latitude: 91, longitude: 0)),
      Fixture.place("d", at: origin.offset(by: 900, bearingDegrees: 90)),
    ]
    var table = PlaceTable()
    for place in ascending { table.append(place) }
    #expect(table.count == 3)
    // Out of order from here: "b" again (skipped), then "0" (new, before every id so far),
    // then "a" again (skipped), then "e" (new).
    var repeated = Fixture.place("b", at: origin.offset(by: 2000, bearingDegrees: 180))
    repeated.name = "Second b"
    let kept = [
      table.append(repeated),
      table.append(Fixture.place("0", at: origin.offset(by: 3000, bearingDegrees: 45))),
      table.append(Fixture.place("a", at: origin.offset(by: 4000, bearingDegrees: 45))),
      table.append(Fixture.place("e", at: origin.offset(by: 5000, bearingDegrees: 45))),
    ]
    #expect(kept == [false, true, false, true])
    #expect(table.count == 5)

    let monitor = PlaceMonitor(table: table)
    #expect(monitor.placeCount == 5)
    #expect(monitor.name(of: "b") == "Place b")
    #expect(monitor.name(of: "0") == "Place 0")
    #expect(monitor.name(of: "e") == "Place e")
    #expect(monitor.name(of: "c") == nil)
    // The kept "b" is the first one: its circle, not the repeated one's, holds its centre.
    #expect(monitor.nearestPlaceID(containing: origin.offset(by: 500, bearingDegrees: 0)) == "b")
    #expect(
      monitor.nearestPlaceID(containing: origin.offset(by: 2000, bearingDegrees: 180)) == nil)
    // The same places through `init(places:)` keep the same ones.
    let listed = PlaceMonitor(places: ascending + [repeated])
    #expect(listed.placeCount == 3)
    #expect(listed.name(of: "b") == "Place b")
  }

  /// The index's answer to "which place holds this point, nearest centre first" is the list
  /// search's (`Stay.place(in:)`), over overlapping circles, for points inside one, several
  /// or no circle.
  @Test func nearestPlaceIDMatchesTheListSearch() {
    var rng = SeededGenerator(seed: 11)
    let origin = Fixture.origin
    let places = (0..<400).map { number in
      Fixture.place(
        "p\(number)",
        at: origin.offset(
          by: 3000 * Double.random(in: 0..<1, using: &rng).squareRoot(),
          bearingDegrees: Double.random(in: 0..<360, using: &rng)),
        radius: Double.random(in: 20...400, using: &rng))
    }
    let monitor = PlaceMonitor(places: places)
    var inside = 0
    var outside = 0
    for _ in 0..<2000 {
      let point = origin.offset(
        by: 3500 * Double.random(in: 0..<1, using: &rng).squareRoot(),
        bearingDegrees: Double.random(in: 0..<360, using: &rng))
      let stay = Stay(arrivalDate: Date(), coordinate: point, horizontalAccuracy: 5, fixCount: 1)
      let expected = stay.place(in: places)?.id
      #expect(monitor.nearestPlaceID(containing: point) == expected)
      if expected == nil { outside += 1 } else { inside += 1 }
    }
    // Both kinds of answer were checked.
    #expect(inside > 100)
    #expect(outside > 100)
  }
}
