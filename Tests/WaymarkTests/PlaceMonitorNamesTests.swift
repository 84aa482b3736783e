import Foundation
import Testing
import WaymarkCore

@testable import Waymark

@Suite struct PlaceMonitorNamesTests {
  /// Ids of every length class (empty name, a 200-byte id whose length takes two LEB128
  /// bytes, UTF-8), found by id, in any order; unknown ids are not.
  @Test func packedIdsAndNamesAreFoundByID() {
    let long = String(repeating: "x", count: 200)
    let records: [(id: String, name: String)] = [
      ("b", "Bee"), (long, "Long"), ("ä-1", "Umlaut"), ("a", ""), ("p10", "Ten"), ("p9", "Nine"),
    ]
    let names = PlaceMonitorNames(records)
    #expect(names.count == records.count)
    for (number, record) in records.enumerated() {
      #expect(names.id(number) == record.id)
      #expect(names.name(number) == record.name)
      #expect(names.number(of: record.id) == Int32(number))
    }
    for missing in ["", "c", "p1", "p", long + "x", "ä"] {
      #expect(names.number(of: missing) == nil)
    }
  }

  /// Ids in ascending byte order (as the store loads places) need no id-sorted permutation:
  /// 4 bytes a place less than the same records out of order, and both find every id over
  /// many blocks of sixteen records.
  @Test func ascendingIdsNeedNoPermutation() {
    let sorted: [(id: String, name: String)] = (0..<100).map {
      (id: "place-" + String(1000 + $0), name: $0 % 7 == 0 ? "" : "Name \($0)")
    }
    var shuffled = sorted
    var rng = SeededGenerator(seed: 3)
    shuffled.shuffle(using: &rng)
    let ascending = PlaceMonitorNames(sorted)
    let unordered = PlaceMonitorNames(shuffled)
    // `byteCount` sums the arrays' capacities, which on Linux are what malloc rounded each
    // allocation up to: the two tables' byte and block arrays may differ by up to 16 bytes each
    // (8 was seen once), whatever the order; the permutation is 4 bytes a place.
    #expect(unordered.byteCount - ascending.byteCount >= 4 * sorted.count - 2 * 16)
    for (names, records) in [(ascending, sorted), (unordered, shuffled)] {
      for (number, record) in records.enumerated() {
        #expect(names.id(number) == record.id)
        #expect(names.name(number) == record.name)
        #expect(names.number(of: record.id) == Int32(number))
      }
      for missing in ["place-0999", "place-1100", "place-10", "", "q"] {
        #expect(names.number(of: missing) == nil)
      }
    }
  }

  /// The engine keeps the first of two places with the same id, as before.
  @Test func aLaterDuplicateIsIgnored() {
    let origin = Fixture.origin
    let monitor = PlaceMonitor(places: [
      Place(id: "x", name: "First", coordinate: origin),
      Place(id: "x", name: "Second", coordinate: origin),
      Place(id: "y", name: "Other", coordinate: origin),
    ])
    #expect(monitor.placeCount == 2)
    #expect(monitor.name(of: "x") == "First")
    #expect(monitor.name(of: "y") == "Other")
  }
}
