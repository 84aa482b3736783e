import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

/// The stay detector against what a receiver reports at rest (``StandstillNoise``: speed
/// jitter of 0–0.5 m/s with spikes above the 0.8 m/s stillness rule, a wandering position,
/// fixes without speed), against slow movement that is not a stay, and on a real receiver's
/// log of a device sitting still.
///
/// The truth: a stay is the device at one place (within the stay radius) for two minutes or
/// more. A crawl in traffic at 1–2 m/s covers 180–360 m in three minutes and a walk at
/// 1.4 m/s 250 m: both move on through the radius, so neither is a stay, however slowly.
@Suite struct StayStillnessTests {
  /// A drive, a stop of `seconds` with the noise of a receiver at rest, a drive.
  static func noisyStop(seconds: Double, seed: UInt64 = 21, hz: Double = 1) -> StayTrip {
    var trip = StayTrip.stopOnTheWay(seed: seed, seconds: seconds)
    trip.route.rateHz = hz
    trip.standstill = StandstillNoise(seed: seed)
    return trip
  }

  @Test(arguments: [1, 10] as [Double])
  func aStopWithReceiverNoiseIsAStayAndARedLightIsNot(hz: Double) throws {
    let trip = Self.noisyStop(seconds: 300, hz: hz)
    // The noise is there: fixes at rest without speed, with jitter, and with spikes above the
    // stillness rule (0.8 m/s).
    let atRest = trip.locations().filter {
      $0.timestamp > trip.truth[0].arrival && $0.timestamp < trip.truth[0].departure
    }
    #expect(atRest.contains { $0.speed == nil })
    #expect(atRest.contains { ($0.speed ?? 0) > 0 && ($0.speed ?? 0) <= 0.5 })
    #expect(atRest.contains { ($0.speed ?? 0) > 0.8 })
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(trip.truth[0].arrival)) <= 10)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(trip.truth[0].departure)) <= 10)
    #expect(stays[0].coordinate.distance(to: trip.truth[0].centre) <= 5)
    // The same noise over a red light of 100 s: no stay.
    #expect(Self.noisyStop(seconds: 100, hz: hz).events().isEmpty)
  }

  @Test func aStopWhereNoFixReportsSpeedIsAStay() throws {
    var trip = Self.noisyStop(seconds: 200)
    trip.standstill?.missingSpeedFraction = 1
    #expect(trip.locations().contains { $0.speed == nil })
    #expect(StayTrip.closedStays(trip.events()).count == 1)
    // Control: without speed a red light is still judged by the radius and the minimum.
    var light = Self.noisyStop(seconds: 100)
    light.standstill?.missingSpeedFraction = 1
    #expect(light.events().isEmpty)
  }

  /// Stop-and-go at 1–2 m/s for three minutes, with standstills of a few seconds (noise and
  /// all) between the crawls: not a stay. Control: the same place, stopped for three
  /// minutes, is one.
  @Test func aCrawlInTrafficIsNotAStay() throws {
    var crawl = StayTrip(seed: 22)
    crawl.standstill = StandstillNoise(seed: 22)
    crawl.drive(800, speed: 13)
    var rng = SeededGenerator(seed: 22)
    var seconds = 0.0
    while seconds < 180 {
      let speed = Double.random(in: 1...2, using: &rng)
      let moving = Double.random(in: 8...20, using: &rng).rounded()
      crawl.drive(speed * moving, speed: speed)
      let pause = Double.random(in: 2...6, using: &rng).rounded()
      crawl.stay(seconds: pause)
      seconds += moving + pause
    }
    crawl.drive(800, speed: 13)
    #expect(crawl.events().isEmpty)
    #expect(crawl.mergedTruth.isEmpty)
    var stopped = StayTrip.stopOnTheWay(seed: 22, seconds: 180, speed: 13)
    stopped.standstill = StandstillNoise(seed: 22)
    #expect(StayTrip.closedStays(stopped.events()).count == 1)
  }

  /// A ten-minute walk at 1.4 m/s is not a stay; the walker standing three minutes half way
  /// (with the noise of a receiver at rest) is one.
  @Test func aWalkIsNotAStayButStandingIs() throws {
    var walk = StayTrip(seed: 23)
    walk.route.noiseMeters = 5
    walk.route.horizontalAccuracyMeters = 8
    walk.standstill = StandstillNoise(seed: 23)
    walk.drive(840, speed: 1.4)
    #expect(walk.events().isEmpty)
    var standing = StayTrip.stopOnTheWay(seed: 23, seconds: 180, meters: 420, speed: 1.4)
    standing.route.noiseMeters = 5
    standing.route.horizontalAccuracyMeters = 8
    standing.standstill = StandstillNoise(seed: 23)
    let stays = StayTrip.closedStays(standing.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(standing.truth[0].arrival)) <= 10)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(standing.truth[0].departure)) <= 10)
  }

  /// A real receiver's log (Telit HE910, gpsd's regression corpus): 186 s of fixes of a device
  /// sitting still, speeds of up to 0.15 m/s, 5 m of wander. It is a stay, open at the end of
  /// the log and arriving at its first fix; its first 100 s are not.
  @Test(.enabled(if: Products.gpsdCorpus != nil, "Tests/Fixtures/gpsd is absent"))
  func aRealReceiverSittingStillMakesAStay() throws {
    let corpus = try #require(Products.gpsdCorpus)
    let bytes = try Array(Data(contentsOf: corpus.appendingPathComponent("telit-he910.log")))
    let locations = NMEALog.decode(bytes, path: "telit-he910.log").fixes.compactMap(Location.init)
    let first = try #require(locations.first)
    let last = try #require(locations.last)
    try #require(last.timestamp.timeIntervalSince(first.timestamp) > 180)
    var detector = StayDetector()
    var events: [StayDetector.Event] = []
    for location in locations { events += detector.process(location) }
    events += detector.finish()
    #expect(events.count == 1)
    let open = try #require(detector.openStay)
    #expect(abs(open.arrivalDate.timeIntervalSince(first.timestamp)) <= 2)
    #expect(open.coordinate.distance(to: first.coordinate) <= 10)
    // Control: the same fixes cut at 100 s (under the two minutes) make none.
    var short = StayDetector()
    var shortEvents: [StayDetector.Event] = []
    for location in locations where location.timestamp.timeIntervalSince(first.timestamp) <= 100 {
      shortEvents += short.process(location)
    }
    #expect(shortEvents.isEmpty && short.openStay == nil)
  }
}
