import Foundation
import WaymarkCore

/// A year of history, as an import of one looks: from 2025-01-01, on five days of each seven a
/// 5 km commute in the morning and back in the evening, on the sixth a 15 km drive out of town; a point a
/// second at 15 m/s with 3 m of noise, each drive a segment. Once, on day 200, the morning
/// drive starts with a 40 m square around the block, without noise: detail that only shows
/// close up.
package enum SyntheticYear {
  /// Where the commute starts.
  package static let home = Coordinate(latitude: 45.75, longitude: 4.85)
  /// The corners of the square driven once (home, then north, east and south of it).
  package static let squareCorners = [
    home, home.offset(by: 40, bearingDegrees: 0),
    home.offset(by: 40, bearingDegrees: 0).offset(by: 40, bearingDegrees: 90),
    home.offset(by: 40, bearingDegrees: 90),
  ]

  /// The year's points, in time order.
  package static func points() -> [TrackPoint] {
    let start = Timestamp.date(milliseconds: 1_735_689_600_000)  // 2025-01-01T00:00:00Z
    var generator = SeededGenerator(seed: 38)
    var points: [TrackPoint] = []
    var segment = 0
    func drive(_ path: [Coordinate], at time: Date, noise: Double) {
      segment += 1
      for (index, coordinate) in path.enumerated() {
        let jittered =
          noise == 0
          ? coordinate
          : coordinate.offset(
            by: noise * generator.nextUnit(), bearingDegrees: 360 * generator.nextUnit())
        points.append(
          TrackPoint(
            timestamp: time.addingTimeInterval(Double(index)), coordinate: jittered, speed: 15,
            horizontalAccuracy: 4, segment: segment))
      }
    }
    let commute = route(from: home, [(0, 1200), (90, 1500), (30, 800), (90, 1000), (150, 600)])
    let outing = route(from: home, [(120, 6000), (100, 5000), (140, 4000)])
    let square = route(from: home, [(0, 40), (90, 40), (180, 40), (270, 40)], step: 5)
    for day in 0..<365 {
      let morning = start.addingTimeInterval(Double(day) * 86_400 + 7.5 * 3600)
      let evening = start.addingTimeInterval(Double(day) * 86_400 + 17.5 * 3600)
      switch day % 7 {
      case 0...4:
        if day == 200 { drive(square, at: morning.addingTimeInterval(-600), noise: 0) }
        drive(commute, at: morning, noise: 3)
        drive(commute.reversed(), at: evening, noise: 3)
      case 5: drive(outing, at: morning.addingTimeInterval(3 * 3600), noise: 3)
      default: break
      }
    }
    return points
  }

  /// The points every `step` metres along legs of (bearing in degrees, metres) from `start`.
  static func route(from start: Coordinate, _ legs: [(Double, Double)], step: Double = 15)
    -> [Coordinate]
  {
    var path = [start]
    var here = start
    for (bearing, length) in legs {
      let count = max(1, Int(saturating: (length / step).rounded()))
      for _ in 0..<count {
        here = here.offset(by: length / Double(count), bearingDegrees: bearing)
        path.append(here)
      }
    }
    return path
  }
}
