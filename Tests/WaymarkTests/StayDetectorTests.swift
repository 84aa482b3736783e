import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// The stay detector on routes built with the `RouteSynthesizer` and decoded from NMEA, as a
/// receiver reports them: stops that are stays, stops that are not (red lights), multipath
/// bursts and jumps, fix losses, cold starts, 1 and 20 Hz.
@Suite struct StayDetectorTests {
  static let start = Timestamp.parse("2026-12-01T07:00:00.000Z")!
  static let origin = Coordinate(latitude: 48.137, longitude: 11.575)

  @Test func aStopOfFiveMinutesIsOneStayDatedByItsFixes() throws {
    var trip = StayTrip(seed: 3)
    trip.drive(800, speed: 12)
    trip.stay(seconds: 300)
    trip.drive(800, speed: 12)
    let events = trip.events()
    #expect(events.count == 2)
    let stays = StayTrip.closedStays(events)
    try #require(stays.count == 1)
    let truth = trip.truth[0]
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(truth.arrival)) <= 5)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(truth.departure)) <= 5)
    #expect(stays[0].coordinate.distance(to: truth.centre) <= 3)
    #expect(stays[0].horizontalAccuracy > 0 && stays[0].horizontalAccuracy < 10)
    // The arrival event came out open, with the same arrival.
    guard case .arrival(let open) = events[0] else {
      Issue.record("first event is not an arrival")
      return
    }
    #expect(open.isOpen && open.arrivalDate == stays[0].arrivalDate)
  }

  @Test func aRedLightIsNotAStayButTheSameStopLongerIs() {
    var light = StayTrip(seed: 4)
    light.drive(600, speed: 13)
    light.stay(seconds: 100)
    light.drive(600, speed: 13)
    #expect(light.events().isEmpty)
    // Control: the same stop, past the minimum duration, is one.
    var longer = StayTrip(seed: 4)
    longer.drive(600, speed: 13)
    longer.stay(seconds: 140)
    longer.drive(600, speed: 13)
    #expect(StayTrip.closedStays(longer.events()).count == 1)
  }

  /// On foot the radius holds a minute of walking in and out: the Doppler speed, not the
  /// radius, says when the walker stood still.
  @Test func aWalkersRedLightIsNotAStayButAWalkersStopIsDatedByItsStill() throws {
    var light = StayTrip(seed: 12)
    light.route.noiseMeters = 6
    light.route.horizontalAccuracyMeters = 9
    light.drive(300, speed: 1.4)
    light.stay(seconds: 110)
    light.drive(300, speed: 1.4)
    #expect(light.events().isEmpty)
    var stop = StayTrip(seed: 12)
    stop.route.noiseMeters = 6
    stop.route.horizontalAccuracyMeters = 9
    stop.drive(300, speed: 1.4)
    stop.stay(seconds: 150)
    stop.drive(300, speed: 1.4)
    let stays = StayTrip.closedStays(stop.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(stop.truth[0].arrival)) <= 5)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(stop.truth[0].departure)) <= 5)
  }

  @Test func theMinimumDurationIsConfigurable() {
    var light = StayTrip(seed: 5)
    light.drive(600, speed: 13)
    light.stay(seconds: 100)
    light.drive(600, speed: 13)
    let configuration = StayDetector.Configuration(minimumDurationSeconds: 60)
    #expect(StayTrip.closedStays(light.events(configuration)).count == 1)
  }

  @Test func burstsAndJumpsDuringAStayEndNothing() throws {
    var trip = StayTrip(seed: 6)
    trip.drive(500, speed: 10)
    trip.stay(
      seconds: 200,
      then: { route in
        route.multipath(seconds: 20, offsetMeters: 180, bearingDegrees: 90, accuracyMeters: 8)
      })
    trip.stay(
      seconds: 200,
      then: { route in
        route.outlier(offsetMeters: 2000, bearingDegrees: 10, accuracyMeters: 6)
      })
    // A long burst (90 s, as long as a departure and a red light together).
    trip.stay(
      seconds: 300,
      then: { route in
        route.multipath(seconds: 90, offsetMeters: 250, bearingDegrees: 200, accuracyMeters: 10)
      })
    trip.stay(seconds: 200)
    trip.drive(500, speed: 10)
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(trip.truth[0].arrival)) <= 5)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(trip.truth.last!.departure)) <= 5)
    // The centre is the stay's, not pulled towards the burst.
    #expect(stays[0].coordinate.distance(to: trip.truth[0].centre) <= 5)
    // Control: without the hold and the return window the same fixes split the stay.
    let naive = StayDetector.Configuration(
      departureConfirmationSeconds: 0, returnWindowSeconds: 0)
    #expect(StayTrip.closedStays(trip.events(naive)).count > 1)
  }

  /// The held-out misses (days 14 and 16 of `waymark-bench stays --drives`): a multipath
  /// burst of 30–60 s within the first two minutes of a stop of three, so that neither side of
  /// it lasts two minutes. The Doppler speed showed the device still through the burst: the
  /// stop goes on. Control: the same positions with the device really driving away and back
  /// are two short stops, no stay.
  @Test func aBurstEarlyInAStopEndsNothingWhenTheSpeedShowedNoMove() throws {
    var trip = StayTrip(seed: 14)
    trip.standstill = StandstillNoise(seed: 14)
    trip.drive(800, speed: 12)
    trip.stay(
      seconds: 95,
      then: { route in
        route.multipath(seconds: 40, offsetMeters: 110, bearingDegrees: 30, accuracyMeters: 30)
      })
    trip.stay(seconds: 95)
    trip.drive(800, speed: 12)
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(trip.truth[0].arrival)) <= 10)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(trip.truth[0].departure)) <= 10)
    #expect(stays[0].coordinate.distance(to: trip.truth[0].centre) <= 5)
    var away = StayTrip(seed: 14)
    away.standstill = StandstillNoise(seed: 14)
    away.drive(800, speed: 12)
    away.stay(seconds: 95)
    away.drive(110, speed: 5)
    away.stay(seconds: 10)
    away.heading += 180
    away.drive(110, speed: 5)
    away.stay(seconds: 80)
    away.heading += 180
    away.drive(800, speed: 12)
    #expect(away.mergedTruth.isEmpty)
    #expect(away.events().isEmpty)
  }

  @Test func aStayContinuesAcrossAFixLossWhenTheDeviceComesBack() throws {
    var trip = StayTrip(seed: 7)
    trip.drive(700, speed: 12)
    trip.stay(seconds: 40, then: { $0.gap(seconds: 1800) })
    trip.stay(seconds: 60)
    trip.drive(700, speed: 12)
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(trip.truth[0].arrival)) <= 5)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(trip.truth.last!.departure)) <= 5)
    // Control: a fix loss while driving on (a tunnel) is no stay.
    var tunnel = StayTrip(seed: 7)
    tunnel.drive(700, speed: 12)
    tunnel.tunnel(1500, seconds: 150)
    tunnel.drive(700, speed: 12)
    #expect(tunnel.events().isEmpty)
  }

  @Test func aColdStartsWanderingFixesAreNotTheStay() throws {
    var trip = StayTrip(seed: 8)
    // The first fixes of a cold start: 600 m off and then 300 m off, for 20 s.
    trip.route.multipath(seconds: 10, offsetMeters: 600, bearingDegrees: 45, accuracyMeters: 30)
    trip.stay(seconds: 10)
    trip.route.multipath(seconds: 10, offsetMeters: 300, bearingDegrees: 45, accuracyMeters: 15)
    trip.stay(seconds: 400)
    trip.drive(900, speed: 14)
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(stays[0].coordinate.distance(to: StayDetectorTests.origin) <= 5)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(trip.truth.last!.departure)) <= 5)
  }

  @Test(arguments: [1, 5, 10, 20] as [Double])
  func theRateDoesNotChangeTheStays(hz: Double) throws {
    var trip = StayTrip(seed: 9)
    trip.route.rateHz = hz
    trip.drive(900, speed: 14)
    trip.stay(seconds: 90)
    trip.drive(400, speed: 14)
    trip.stay(seconds: 600)
    trip.drive(900, speed: 14)
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(trip.truth[1].arrival)) <= 5)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(trip.truth[1].departure)) <= 5)
  }

  @Test func theSameFixesGiveTheSameEvents() {
    var trip = StayTrip(seed: 10)
    trip.drive(500, speed: 10)
    trip.stay(seconds: 200)
    trip.drive(500, speed: 10)
    trip.stay(seconds: 200)
    let first = trip.events()
    #expect(first.count == 3)
    #expect(first == trip.events())
  }

  @Test func aResumedDetectorContinuesTheStayItWasGiven() throws {
    var trip = StayTrip(seed: 11)
    trip.stay(seconds: 600)
    trip.drive(800, speed: 12)
    let locations = trip.locations()
    let cut = locations.count / 4
    var before = StayDetector()
    var open: Stay?
    for location in locations[..<cut] {
      for case .arrival(let stay) in before.process(location) { open = stay }
    }
    let stay = try #require(open)
    var after = StayDetector(resuming: stay, lastSeen: locations[cut - 1].timestamp)
    var events: [StayDetector.Event] = []
    for location in locations[cut...] { events += after.process(location) }
    events += after.finish()
    // One departure of the same stay, no second arrival.
    #expect(events.count == 1)
    guard case .departure(let closed) = events.first else {
      Issue.record("the resumed detector's one event is not the stay's departure: \(events)")
      return
    }
    #expect(closed.arrivalDate == stay.arrivalDate)
    #expect(abs(closed.departureDate!.timeIntervalSince(trip.truth[0].departure)) <= 5)
    // Control: a fresh detector on the same fixes finds a stay arriving later.
    var fresh = StayDetector()
    var freshEvents: [StayDetector.Event] = []
    for location in locations[cut...] { freshEvents += fresh.process(location) }
    freshEvents += fresh.finish()
    #expect(
      StayTrip.closedStays(freshEvents).first.map { $0.arrivalDate > stay.arrivalDate } == true)
  }

  /// Held-out style: every seed draws its own day (stays of 2.5–40 min, red lights of 20–100 s,
  /// bursts during drives and stays, fix losses in stays and tunnels on the road, urban noise);
  /// every stay is found, nothing else, arrival and departure within 10 s (medians); with
  /// `restingNoise`, every stop carries what a receiver at rest reports (``StandstillNoise``).
  @Test(arguments: Array(1...12) as [UInt64], [false, true])
  func randomDaysFindEveryStayAndNothingElse(seed: UInt64, restingNoise: Bool) throws {
    var trip = StayTrip.randomDay(seed: seed)
    if restingNoise { trip.standstill = StandstillNoise(seed: seed &+ 77) }
    let stays = StayTrip.closedStays(trip.events())
    let truth = trip.mergedTruth
    try #require(stays.count == truth.count, "found \(stays.count), truth \(truth.count)")
    var arrivalErrors: [Double] = []
    var departureErrors: [Double] = []
    for (found, expected) in zip(stays, truth) {
      arrivalErrors.append(abs(found.arrivalDate.timeIntervalSince(expected.arrival)))
      departureErrors.append(abs(found.departureDate!.timeIntervalSince(expected.departure)))
      #expect(found.coordinate.distance(to: expected.centre) <= 15)
    }
    #expect(StayTrip.median(arrivalErrors) <= 10)
    #expect(StayTrip.median(departureErrors) <= 10)
  }
}
