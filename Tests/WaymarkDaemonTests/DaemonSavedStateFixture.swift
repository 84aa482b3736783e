import Foundation
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkDaemon
import WaymarkPipeline
import WaymarkStore
import WaymarkTesting

/// What waymarkd keeps of the place monitor's state (one text per place, `SavedMonitorState`)
/// and of a held monitor (`HeldMonitorRegistry`), as the code of the day wrote them into
/// `Tests/Fixtures/saved-state` (see the README there).
enum DaemonSavedStateFixture {
  static let directory = Products.packageRoot.appendingPathComponent(
    "Tests/Fixtures/saved-state")

  static let start = Date(timeIntervalSince1970: 1_801_234_567.891)

  static func fix(_ seconds: Double, _ north: Double, accuracy: Double, speed: Double? = nil)
    -> PlaceMonitor.Sample
  {
    PlaceMonitor.Sample(
      time: start.addingTimeInterval(seconds),
      coordinate: Coordinate(latitude: 48.8566 + north * 1e-5, longitude: 2.3522),
      accuracyMeters: accuracy, speedMetersPerSecond: speed,
      courseDegrees: speed.map { _ in 90.5 })
  }

  /// The places' states: one of each, and a place that became idle since the last save.
  static var places: [String: PlaceMonitor.State] {
    let stay = PlaceMonitor.Stay(
      arrival: start.addingTimeInterval(-600.5), lastInside: fix(-1, 0.5, accuracy: 3.25),
      lastFix: start.addingTimeInterval(-0.999), fixCount: 600, bestAccuracyMeters: 1.5)
    return [
      "p-arriving": .arriving(
        PlaceMonitor.Candidate(
          before: fix(-9, 40, accuracy: 9, speed: 2), first: fix(-8, 10, accuracy: 9),
          last: fix(-7, 5, accuracy: 4, speed: 0.5), count: 2, confirmingCount: 1)),
      "p-inside": .inside(stay),
      "p-departing": .departing(
        stay,
        PlaceMonitor.Candidate(
          before: nil, first: fix(-0.5, 90, accuracy: 5), last: fix(0, 95, accuracy: 5),
          count: 2)),
    ]
  }

  static let previouslySaved = ["p-inside", "p-gone"]

  /// The held monitor's key, conditions and locations: after them, one condition is departing,
  /// one arriving, one decided unsatisfied and one added last (the add saves the whole state).
  static let key = HeldMonitor.Key(uid: 1000, clientID: "alice:/usr/bin/app", name: "fixture")
  static let center = Coordinate(latitude: 52.52, longitude: 13.405)
  static let conditions = [
    HeldMonitor.Condition(
      identifier: "spot", circle: Monitor.CircularGeographicCondition(center: center, radius: 50),
      assumed: .unknown),
    HeldMonitor.Condition(
      identifier: "ahead",
      circle: Monitor.CircularGeographicCondition(
        center: center.offset(by: 120, bearingDegrees: 90), radius: 50, exitRadius: 90,
        confirmations: 3, dwellSeconds: 1.5, group: "g", overlap: .nearest),
      assumed: .satisfied),
    HeldMonitor.Condition(
      identifier: "far",
      circle: Monitor.CircularGeographicCondition(
        center: center.offset(by: 5000, bearingDegrees: 0), radius: 100),
      assumed: .unknown),
  ]
  static let late = HeldMonitor.Condition(
    identifier: "late",
    circle: Monitor.CircularGeographicCondition(center: center, radius: 25.5),
    assumed: .unsatisfied)

  static var locations: [Location] {
    HeldMonitorRegistryTests.locations(count: 27, from: start)
  }
}
