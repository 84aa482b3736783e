import Foundation
import WaymarkCore
import WaymarkTesting

@testable import Waymark

/// A monitor's saved state with a condition in every state (an open stay, a pending arrival, a
/// pending departure, an explicit `outside`, one awaiting its anchor, one never decided), every
/// optional set somewhere and absent elsewhere, a cursor, suspect fixes, and numbers and strings
/// that are awkward to print: the content of `Tests/Fixtures/saved-state/monitor.json`, which
/// the code of the day wrote from it (see the README there).
enum MonitorSavedFixture {
  /// The fixtures' directory.
  static let directory = Products.packageRoot.appendingPathComponent(
    "Tests/Fixtures/saved-state")

  static let start = Date(timeIntervalSince1970: 1_796_000_000.123456)

  static func sample(
    _ seconds: Double, _ latitude: Double, _ longitude: Double, accuracy: Double,
    speed: Double? = nil, course: Double? = nil
  ) -> PlaceMonitor.Sample {
    PlaceMonitor.Sample(
      time: start.addingTimeInterval(seconds),
      coordinate: Coordinate(latitude: latitude, longitude: longitude), accuracyMeters: accuracy,
      speedMetersPerSecond: speed, courseDegrees: course)
  }

  static let home = Monitor.CircularGeographicCondition(
    center: Coordinate(latitude: 45.76, longitude: 4.83), radius: 100)
  static let office = Monitor.CircularGeographicCondition(
    center: Coordinate(latitude: 45.7700001, longitude: -4.845), radius: 150, exitRadius: 250,
    confirmations: 4, dwellSeconds: 12.5, group: "work", overlap: .nearest)
  static let park = Monitor.CircularGeographicCondition(
    center: Coordinate(latitude: -33.8688, longitude: 151.2093), radius: 0.1 + 0.2,
    group: "outdoors", overlap: .all)
  static let gym = Monitor.CircularGeographicCondition(
    center: Coordinate(latitude: 0, longitude: -180), radius: 1e-7, dwellSeconds: 0)
  static let odd = Monitor.CircularGeographicCondition(
    center: Coordinate(latitude: 89.999999999, longitude: 179.99999999999997), radius: 1e21)
  /// An identifier with quotes, a slash, a backslash, a control, accents and an emoji.
  static let oddName = "caf\u{E9} \"Zum/L\u{F6}wen\" \\ \u{1}\n\u{1F600}"

  static func entry(
    _ identifier: String, _ condition: Monitor.CircularGeographicCondition,
    _ state: Monitor.Event.State, at date: Date, awaitsAnchor: Bool = false
  ) -> MonitorState.Entry {
    MonitorState.Entry(
      identifier: identifier, condition: condition,
      lastEvent: Monitor.Event(
        identifier: identifier, state: state, date: date, condition: condition),
      awaitsAnchor: awaitsAnchor)
  }

  static var saved: MonitorState.Saved {
    let stay = PlaceMonitor.Stay(
      arrival: start.addingTimeInterval(-3600.25),
      lastInside: sample(-1, 45.76001, 4.83002, accuracy: 4.5, speed: 0.3, course: 359.9),
      lastFix: start.addingTimeInterval(-1), fixCount: 3599, bestAccuracyMeters: 2.1)
    let leaving = PlaceMonitor.Stay(
      arrival: start.addingTimeInterval(-86_400.0001),
      lastInside: sample(-20, -33.8688, 151.2093, accuracy: 0.30000000000000004),
      lastFix: start.addingTimeInterval(-2), fixCount: 1, bestAccuracyMeters: 0)
    let places: [String: PlaceMonitor.State] = [
      "home": .inside(stay),
      "office": .arriving(
        PlaceMonitor.Candidate(
          before: nil, first: sample(-3, 45.7700001, -4.845, accuracy: 12),
          last: sample(-1, 45.77, -4.845, accuracy: 8, speed: 1.25), count: 3,
          confirmingCount: 2)),
      "park": .departing(
        leaving,
        PlaceMonitor.Candidate(
          before: sample(-19, -33.8689, 151.2094, accuracy: 5, speed: 14.999, course: 0),
          first: sample(-10, -33.87, 151.21, accuracy: 6),
          last: sample(-2, -33.871, 151.211, accuracy: 7, course: 180), count: 2)),
      oddName: .outside,
    ]
    let engine = PlaceMonitor.Snapshot(
      previous: sample(0, 45.76002, 4.83001, accuracy: 3, speed: 0, course: 12.345678901234567),
      places: places,
      suspects: [
        sample(0.5, 46.5, 5.5, accuracy: 4, speed: 250),
        sample(1.000001, 46.5000001, 5.5000001, accuracy: 1e-3),
      ])
    return MonitorState.Saved(
      version: MonitorState.version,
      entries: [
        entry("home", home, .satisfied, at: start.addingTimeInterval(-3600.25)),
        entry("office", office, .unsatisfied, at: start.addingTimeInterval(-7200)),
        entry("park", park, .satisfied, at: start.addingTimeInterval(-86_400.0001)),
        entry("gym", gym, .satisfied, at: .distantPast, awaitsAnchor: true),
        entry(oddName, odd, .unknown, at: .distantPast),
      ],
      engine: engine, cursor: 9_007_199_254_740_000)
  }
}
