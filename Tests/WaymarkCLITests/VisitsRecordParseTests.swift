import Testing
import WaymarkCore

@testable import WaymarkCLI

/// One line of `waymark replay` NDJSON as `waymark visits record` reads it (through
/// `JSONObjectReader`'s lenient accessors): what it takes, what it refuses, and numbers beyond
/// `Int`'s range that once trapped (`mode`, `reason.confirmations`), now saturated.
@Suite struct VisitsRecordParseTests {
  static func parse(_ line: String) throws(VisitsCommand.LineError) -> VisitsCommand.RecordedItem {
    try VisitsCommand.parse(Array(line.utf8))
  }

  static func failure(_ line: String) -> String? {
    do {
      _ = try parse(line)
      return nil
    } catch {
      return error.text
    }
  }

  static let arrival =
    #"{"class":"ARRIVAL","time":"2026-11-29T12:00:00.000Z","place":"home","lat":45.76,"lon":4.83,"#

  @Test("a TPV is a fix; its mode beyond Int's range reads as unknown, not a trap")
  func fix() throws {
    let time = #""time":"2026-11-29T12:00:00.000Z","lat":45.76,"lon":4.83,"eph":5"#
    guard case .fix(let fix) = try Self.parse(#"{"class":"TPV","mode":3,"# + time + "}") else {
      Issue.record("a TPV with a position is not a fix")
      return
    }
    #expect(fix.mode == .threeDimensional)
    #expect(fix.coordinate?.latitude == 45.76 && fix.horizontalError == 5)
    guard case .fix(let huge) = try Self.parse(#"{"class":"TPV","mode":1e300,"# + time + "}")
    else {
      Issue.record("a TPV with a huge mode is not a fix")
      return
    }
    #expect(huge.mode == .unknown)
    guard case .ignored = try Self.parse(#"{"class":"TPV","lat":"45","lon":4.83}"#) else {
      Issue.record("a TPV whose latitude is a string is not ignored")
      return
    }
  }

  @Test("an arrival keeps its reason, keys sorted; huge confirmations saturate")
  func arrivalReason() throws {
    let line = Self.arrival + #""reason":{"rule":"dwell","confirmations":3,"Accuracy":[1]}}"#
    guard case .event(.arrival(let event), let reasonJSON) = try Self.parse(line) else {
      Issue.record("an arrival is not an arrival event")
      return
    }
    #expect(event.placeID == "home" && event.placeName == "home")
    #expect(event.reason.rule == "dwell" && event.reason.confirmations == 3)
    #expect(reasonJSON == #"{"Accuracy":[1],"confirmations":3,"rule":"dwell"}"#)
    let huge = Self.arrival + #""reason":{"confirmations":1e300}}"#
    guard case .event(.arrival(let saturated), _) = try Self.parse(huge) else {
      Issue.record("an arrival with huge confirmations is not an arrival event")
      return
    }
    #expect(saturated.reason.confirmations == Int.max)
    guard case .event(_, let none) = try Self.parse(Self.arrival + #""reason":"x"}"#) else {
      Issue.record("an arrival whose reason is a string is not an event")
      return
    }
    #expect(none == "{}")
  }

  @Test("what a line lacks is named")
  func refusals() {
    #expect(Self.failure("[1]") == "not a JSON object")
    #expect(Self.failure(#"{"class":7}"#) == #"missing "class""#)
    #expect(Self.failure(#"{"class":"ARRIVAL","place":""}"#) == #"missing "place""#)
    #expect(
      Self.failure(#"{"class":"ARRIVAL","place":"home","time":"noon"}"#)
        == #"missing or bad "time" time"#)
    #expect(
      Self.failure(#"{"class":"DEPARTURE","place":"home","time":"2026-11-29T12:00:00Z"}"#)
        == #"missing or bad "arrival" time"#)
    #expect(Self.failure(Self.arrival + #""reason":{}}"#) == nil)
  }
}
