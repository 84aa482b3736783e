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
