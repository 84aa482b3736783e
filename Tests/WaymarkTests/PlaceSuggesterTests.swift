import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// Places suggested from stays: a month of synthetic commuting found by the stay detector,
/// clustered into exactly the recurring places.
@Suite struct PlaceSuggesterTests {
  static let origin = Coordinate(latitude: 48.137, longitude: 11.575)

  static func stay(_ coordinate: Coordinate, at seconds: Double, accuracy: Double = 5) -> Stay {
    Stay(
      arrivalDate: Date(timeIntervalSince1970: 1_800_000_000 + seconds),
      departureDate: Date(timeIntervalSince1970: 1_800_000_600 + seconds),
      coordinate: coordinate, horizontalAccuracy: accuracy, fixCount: 600)
  }

  @Test func aPlaceNeedsTheMinimumOfVisits() {
    let twice = [
      Self.stay(Self.origin, at: 0),
      Self.stay(Self.origin.offset(by: 10, bearingDegrees: 0), at: 1000),
    ]
    #expect(PlaceSuggester(minimumVisits: 3).suggestions(twice).isEmpty)
    // Control: a third visit makes it a place, centred between them.
    let thrice = twice + [Self.stay(Self.origin.offset(by: 10, bearingDegrees: 90), at: 2000)]
    let places = PlaceSuggester(minimumVisits: 3).suggestions(thrice)
    #expect(places.count == 1)
    #expect(places.first?.visitCount == 3)
    #expect((places.first?.coordinate.distance(to: Self.origin)).map { $0 < 10 } == true)
  }

  @Test func placesFartherApartThanTheRadiusStaySeparate() {
    var stays: [Stay] = []
    for index in 0..<5 {
      stays.append(Self.stay(Self.origin, at: Double(index) * 10_000))
      stays.append(
        Self.stay(Self.origin.offset(by: 120, bearingDegrees: 45), at: Double(index) * 10_000 + 5))
    }
    #expect(PlaceSuggester(radiusMeters: 50).suggestions(stays).count == 2)
    // Control: a radius wider than the gap makes them one.
    #expect(PlaceSuggester(radiusMeters: 150).suggestions(stays).count == 1)
  }

  /// 30 days: home every night, work on weekdays, a supermarket twice a week, a DIY store on
  /// Saturdays, and one errand a day somewhere new; stays found by the detector from the
  /// synthesized fixes; exactly the four recurring places, each within 25 m of its centre.
  @Test(arguments: [1, 2, 3] as [UInt64])
  func aMonthOfCommutingGivesExactlyTheRecurringPlaces(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed)
    let home = Self.origin.offset(
      by: Double.random(in: 0...2000, using: &rng),
      bearingDegrees: Double.random(in: 0..<360, using: &rng))
    let work = home.offset(by: 6000, bearingDegrees: Double.random(in: 0..<360, using: &rng))
    let supermarket = home.offset(by: 1500, bearingDegrees: Double.random(in: 0..<360, using: &rng))
    let diy = work.offset(by: 2500, bearingDegrees: Double.random(in: 0..<360, using: &rng))
    let recurring = [home, work, supermarket, diy]
    var stays: [Stay] = []
    var dayStart = Timestamp.parse("2026-11-01T06:00:00.000Z")!
    for day in 0..<30 {
      var route = RouteSynthesizer(start: dayStart, origin: home, seed: seed &* 1000 &+ UInt64(day))
      route.noiseMeters = 4
      route.horizontalAccuracyMeters = 6
      // A parking spot within 15 m of the place's centre.
      func spot(_ place: Coordinate) -> Coordinate {
        place.offset(
          by: Double.random(in: 0...15, using: &rng),
          bearingDegrees: Double.random(in: 0..<360, using: &rng))
      }
      route.stop(seconds: 600)
      var stops: [Coordinate] = []
      if day % 7 < 5 { stops.append(spot(work)) }
      if day % 7 == 1 || day % 7 == 4 { stops.append(spot(supermarket)) }
      if day % 7 == 5 { stops.append(spot(diy)) }
      var errand: Coordinate
      repeat {
        errand = home.offset(
          by: Double.random(in: 500...9000, using: &rng),
          bearingDegrees: Double.random(in: 0..<360, using: &rng))
      } while recurring.contains { $0.distance(to: errand) < 300 }
      stops.insert(errand, at: Int.random(in: 0...stops.count, using: &rng))
      for stop in stops {
        route.drive(to: stop, speedMetersPerSecond: 14)
        route.stop(seconds: Double.random(in: 300...1800, using: &rng).rounded())
      }
      route.drive(to: spot(home), speedMetersPerSecond: 14)
      route.stop(seconds: 600)
      var detector = StayDetector()
      for fix in route.fixes() {
        guard let location = Location(fix) else { continue }
        for case .departure(let stay) in detector.process(location) { stays.append(stay) }
      }
      stays += detector.finish().map(\.stay)
      if let open = detector.openStay { stays.append(open) }
      dayStart = dayStart.addingTimeInterval(86_400)
    }
    // Every stop of the month was found (home twice a day).
    #expect(stays.count == 30 * 3 + 22 + 9 + 4)
    let places = PlaceSuggester(minimumVisits: 3, radiusMeters: 50).suggestions(stays)
    try #require(places.count == 4, "\(places)")
    for truth in recurring {
      let nearest = places.min {
        $0.coordinate.distance(to: truth) < $1.coordinate.distance(to: truth)
      }!
      #expect(nearest.coordinate.distance(to: truth) <= 25)
    }
    #expect(places[0].visitCount == 60)
  }
}
