import Foundation
import Testing
import WaymarkTesting

/// A real smartphone's log (the STAGA example in Tests/Fixtures/tracks: 4 h, mostly one fix in
/// 10 s, gaps up to 28 min, no speed, no error estimate) replayed through `waymark replay
/// --visits`, against the diary its owner kept that day.
@Suite struct RealPhoneLogTests {
  static let tracks = Products.packageRoot.appendingPathComponent("Tests/Fixtures/tracks")

  /// The diary's stops: arrival and departure.
  static func diary() throws -> [(arrival: Date, departure: Date)] {
    let text = try String(
      contentsOf: tracks.appendingPathComponent("staga-phone.diary.csv"), encoding: .utf8)
    return text.split(separator: "\n").dropFirst().map { row in
      let fields = row.split(separator: ",").map { Self.time(String($0)) }
      return (fields[0], fields[1])
    }
  }

  static func time(_ text: String) -> Date {
    let formatter = ISO8601DateFormatter()
    formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
    return formatter.date(from: text) ?? .distantPast
  }

  static func overlaps(_ a: (Date, Date), _ b: (Date, Date)) -> Bool {
    min(a.1, b.1) > max(a.0, b.0)
  }

  @Test func everyStopOfFiveMinutesInThePhonesDiaryIsAStay() throws {
    let run = try CommandRun.waymark([
      "replay", Self.tracks.appendingPathComponent("staga-phone.nmea").path, "--visits",
    ])
    try #require(run.status == 0, "\(run.stderr)")
    let stays: [(Date, Date)] = try run.output.split(separator: "\n").compactMap { line in
      let object = try JSONSerialization.jsonObject(with: Data(line.utf8)) as! [String: Any]
      guard object["class"] as? String == "VISIT", let arrival = object["arrival"] as? String,
        let departure = object["departure"] as? String
      else { return nil }
      return (Self.time(arrival), Self.time(departure))
    }
    let diary = try Self.diary()
    #expect(diary.count == 15)
    // The six stops of 5 min or more (20, 6, 6, 76, 20 and 11 min): each overlapped by a stay.
    let long = diary.filter { $0.departure.timeIntervalSince($0.arrival) >= 300 }
    #expect(long.count == 6)
    for stop in long {
      #expect(
        stays.contains { Self.overlaps($0, (stop.arrival, stop.departure)) },
        "missed the diary's stop at \(stop.arrival)")
    }
    // Stays where the diary has none: 2 measured (05:29-05:31 and 05:33-05:34 UTC, slow walking
    // between two stops, each 2 min); more is a regression.
    let unconfirmed = stays.filter { stay in
      !diary.contains { Self.overlaps(stay, ($0.arrival, $0.departure)) }
    }
    #expect(unconfirmed.count <= 2, "\(unconfirmed)")
    // Control: the stays are not one long span that overlaps everything.
    #expect(stays.count >= 10 && stays.allSatisfy { $0.1.timeIntervalSince($0.0) < 5_000 })
  }
}
