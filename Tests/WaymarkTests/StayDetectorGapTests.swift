import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// The stay detector on the logs people really have: a phone's logger that sleeps while the
/// device stands still and wakes when it moves (``DutyCycledLogger``), gaps that end near or
/// far, the longest bridged gap, and a stay's departure inferred in a gap.
@Suite struct StayDetectorGapTests {
  /// A walk in, a stop of `seconds`, a walk out, logged by `logger`.
  static func walkedStop(
    seed: UInt64, seconds: Double, logger: DutyCycledLogger = DutyCycledLogger()
  ) -> StayTrip {
    var trip = StayTrip(seed: seed)
    trip.logger = logger
    trip.drive(400, speed: 1.4)
    trip.stay(seconds: seconds)
    trip.drive(400, speed: 1.4)
    return trip
  }

  /// The logged fixes' largest interval around `time`: the gap's start and end.
  static func gap(around time: Date, in locations: [Location]) -> (start: Date, end: Date)? {
    for (before, after) in zip(locations, locations.dropFirst())
    where before.timestamp <= time && after.timestamp >= time {
      return (before.timestamp, after.timestamp)
    }
    return nil
  }

  @Test func aStopTheLoggerSleptThroughIsAStayLeftInTheGap() throws {
    let trip = Self.walkedStop(seed: 31, seconds: 600)
    let locations = trip.locations()
    // The log has what a phone writes: no speed, HDOP 1.0 (5 m), a gap while the device
    // stood, and a first fix after it already 20–35 m along the way out.
    #expect(locations.allSatisfy { $0.speed == nil })
    let truth = trip.truth[0]
    let gap = try #require(Self.gap(around: truth.departure, in: locations))
    #expect(gap.end.timeIntervalSince(gap.start) > 500)
    let resumed = try #require(locations.first { $0.timestamp == gap.end })
    #expect((20...40).contains(resumed.coordinate.distance(to: truth.centre)))
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(truth.arrival)) <= 10)
    let departure = try #require(stays[0].departureDate)
    #expect(departure >= gap.start && departure <= gap.end)
    #expect(stays[0].isDepartureInferred)
    #expect(stays[0].observedDepartureDate == gap.start)
    #expect(stays[0].inferredSeconds > 400)
    // Control: logged without sleeping, the same stop's departure is observed.
    let awake = Self.walkedStop(
      seed: 31, seconds: 600, logger: DutyCycledLogger(sleepAfterStillSeconds: .infinity))
    let observed = StayTrip.closedStays(awake.events())
    try #require(observed.count == 1)
    #expect(!observed[0].isDepartureInferred && observed[0].inferredSeconds == 0)
    #expect(abs(observed[0].departureDate!.timeIntervalSince(truth.departure)) <= 10)
  }

  /// Under two minutes of still fixes before the logger slept: the stop is a stay all the
  /// same (it lasted to the inferred departure). Control: a stop whose logger woke after
  /// less than two minutes in all is none.
  @Test func aStopObservedUnderTwoMinutesBeforeTheGapIsAStay() throws {
    let trip = Self.walkedStop(seed: 32, seconds: 400)
    let locations = trip.locations()
    let truth = trip.truth[0]
    let observed = locations.filter {
      $0.timestamp >= truth.arrival && $0.timestamp <= truth.departure
    }
    #expect(observed.last!.timestamp.timeIntervalSince(truth.arrival) < 120)
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(truth.arrival)) <= 10)
    #expect(stays[0].isDepartureInferred)
    let short = Self.walkedStop(seed: 32, seconds: 90)
    #expect(short.events().isEmpty)
  }

  /// A gap that ends farther than a walk from the stay ends the stay at its start; the same
  /// gap ending a short walk away leaves it in the gap.
  @Test func aGapEndingFarAwayEndsTheStayAtItsStart() throws {
    var far = StayTrip(seed: 33)
    far.drive(900, speed: 12)
    far.stay(seconds: 300)
    far.tunnel(3000, seconds: 300)
    far.drive(900, speed: 12)
    let stays = StayTrip.closedStays(far.events())
    try #require(stays.count == 1)
    #expect(!stays[0].isDepartureInferred)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(far.truth[0].departure)) <= 5)
    var near = StayTrip(seed: 33)
    near.drive(900, speed: 12)
    near.stay(seconds: 300)
    near.tunnel(150, seconds: 300)
    near.drive(900, speed: 12)
    let inferred = StayTrip.closedStays(near.events())
    try #require(inferred.count == 1)
    #expect(inferred[0].isDepartureInferred)
    #expect(
      inferred[0].observedDepartureDate
        == near.locations().last { $0.timestamp <= near.truth[0].departure }?.timestamp)
    let end = near.truth[0].departure.addingTimeInterval(300)
    #expect(inferred[0].departureDate! > near.truth[0].departure)
    #expect(inferred[0].departureDate! <= end)
  }

  /// A car stop of 5 minutes that the logger slept through after 90 s, then a drive: the
  /// first fix after the gap is farther than a walk, nearer than a drive at 5 m/s from the
  /// gap's start. The stay ends at the departure that pace infers, inside the gap. Control: with
  /// a pace at which nothing could have come that far since the gap's start, the stop ends at
  /// the gap's start, under two minutes: no stay.
  @Test func aCarStopTheLoggerSleptThroughIsAStayLeftAtADrivingPace() throws {
    var trip = StayTrip(seed: 36)
    trip.logger = DutyCycledLogger(sleepAfterStillSeconds: 90)
    trip.drive(900, speed: 12)
    trip.stay(seconds: 300)
    trip.drive(1500, speed: 20)
    let locations = trip.locations()
    let truth = trip.truth[0]
    let gap = try #require(Self.gap(around: truth.departure, in: locations))
    let resumed = try #require(locations.first { $0.timestamp == gap.end })
    // Farther than walking reach (40 m + 1.4 m/s × the gap).
    #expect(
      resumed.coordinate.distance(to: truth.centre) > 40 + 1.4
        * gap.end.timeIntervalSince(gap.start))
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1, "\(stays)")
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(truth.arrival)) <= 10)
    #expect(stays[0].isDepartureInferred)
    let departure = try #require(stays[0].departureDate)
    #expect(departure > gap.start && departure < gap.end)
    #expect(abs(departure.timeIntervalSince(truth.departure)) <= 60)
    var slow = StayDetector(configuration: .init(drivingSpeedMetersPerSecond: 0.5))
    let slowStays = locations.flatMap { slow.process($0) }.compactMap { event -> Stay? in
      if case .departure(let stay) = event { return stay }
      return nil
    }
    #expect(slowStays.isEmpty, "\(slowStays)")
  }

  /// A stop of 10 minutes the logger slept through, left by car: the first fix after the gap
  /// lies within walking reach (walking pace would date the departure minutes early), and the
  /// fixes that follow move at 12 m/s, so the departure is dated at the driving pace, within
  /// the time the logger took to wake. Control: the same stop left on foot keeps the
  /// walking-pace departure, earlier than the driving one would be.
  @Test func aStopLeftByCarWithinWalkingReachIsDatedAtTheDrivingPace() throws {
    func trip(leavingAt speed: Double) -> StayTrip {
      var trip = StayTrip(seed: 37)
      trip.logger = DutyCycledLogger(sleepAfterStillSeconds: 60, wakeAfterMovingSeconds: 20)
      trip.drive(900, speed: 12)
      trip.stay(seconds: 600)
      trip.drive(1500, speed: speed)
      return trip
    }
    let driven = trip(leavingAt: 12)
    let locations = driven.locations()
    let truth = driven.truth[0]
    let gap = try #require(Self.gap(around: truth.departure, in: locations))
    let resumed = try #require(locations.first { $0.timestamp == gap.end })
    let away = resumed.coordinate.distance(to: truth.centre)
    // Within walking reach of the stay's edge, and far enough that walking pace would date
    // the departure more than a minute before the truth.
    #expect(away < 40 + 1.4 * gap.end.timeIntervalSince(gap.start))
    #expect((away - 40) / 1.4 > 60 + gap.end.timeIntervalSince(truth.departure))
    let stays = StayTrip.closedStays(driven.events())
    try #require(stays.count == 1, "\(stays)")
    let departure = try #require(stays[0].departureDate)
    #expect(stays[0].isDepartureInferred)
    #expect(departure > gap.start && departure <= gap.end)
    #expect(abs(departure.timeIntervalSince(truth.departure)) <= 45)
    let walked = trip(leavingAt: 1.4)
    let onFoot = StayTrip.closedStays(walked.events())
    try #require(onFoot.count == 1, "\(onFoot)")
    let footGap = try #require(Self.gap(around: walked.truth[0].departure, in: walked.locations()))
    let footDeparture = try #require(onFoot[0].departureDate)
    #expect(footDeparture >= footGap.start && footDeparture <= footGap.end)
    #expect(abs(footDeparture.timeIntervalSince(walked.truth[0].departure)) <= 45)
  }

  /// A gap longer than `maximumBridgedGapSeconds` ends the stay at its start even when the
  /// device comes back where it was; a shorter one (the default bridges 12 hours) does not.
  @Test func theLongestBridgedGapIsASetting() throws {
    var trip = StayTrip(seed: 34)
    trip.drive(700, speed: 12)
    trip.stay(seconds: 300, then: { $0.gap(seconds: 7200) })
    trip.stay(seconds: 300)
    trip.drive(700, speed: 12)
    let bridged = StayTrip.closedStays(trip.events())
    try #require(bridged.count == 1)
    #expect(!bridged[0].isDepartureInferred)
    let split = StayTrip.closedStays(
      trip.events(StayDetector.Configuration(maximumBridgedGapSeconds: 3600)))
    try #require(split.count == 2)
    let gapStart = trip.truth[0].arrival.addingTimeInterval(300)
    #expect(abs(split[0].departureDate!.timeIntervalSince(gapStart)) <= 2)
    #expect(abs(split[1].arrivalDate.timeIntervalSince(gapStart.addingTimeInterval(7200))) <= 2)
  }

  /// A logger that samples once every 30 s and sleeps at rest: every stop found, arrival
  /// within a sample (and the 10 m of the way in that are near the centre), departure inside
  /// the gap.
  @Test(arguments: [1, 30] as [Double])
  func aSampleAndSleepLoggerStillGivesEveryStay(interval: Double) throws {
    var trip = StayTrip(seed: 35)
    trip.logger = DutyCycledLogger(intervalSeconds: interval)
    for seconds in [300, 900, 200] as [Double] {
      trip.drive(500, speed: 1.4)
      trip.stay(seconds: seconds)
    }
    trip.drive(500, speed: 1.4)
    let locations = trip.locations()
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 3)
    for (stay, truth) in zip(stays, trip.truth) {
      #expect(abs(stay.arrivalDate.timeIntervalSince(truth.arrival)) <= interval + 15)
      let gap = try #require(Self.gap(around: truth.departure, in: locations))
      #expect(stay.departureDate! >= gap.start && stay.departureDate! <= gap.end)
    }
  }
}

/// The stay detector on noise it must learn from the fixes: a logger claiming HDOP 1.0
/// (5 m) while the positions wander tens of metres, and random days of a duty-cycled phone.
@Suite struct StayDetectorNoiseTests {
  /// A long stop whose positions wander tens of metres (σ 32 m per axis) while HDOP says
  /// 5 m: one stay, and the fixes beyond the 40 m the reported error allows are counted in it
  /// because the radius is learned from their spread. Control: the noise is there (a fifth
  /// of the fixes lie beyond 40 m), and with learning off (`maximumLearnedRadiusMeters` 0)
  /// the stay holds fewer of them.
  @Test func aWanderingStopIsOneStayWithTheRadiusLearnedFromItsSpread() throws {
    var trip = StayTrip(seed: 41)
    var noise = StandstillNoise(seed: 41)
    noise.wanderMeters = 45
    noise.wanderSeconds = 300
    trip.logger = DutyCycledLogger(sleepAfterStillSeconds: .infinity, restingNoise: noise)
    trip.drive(1200, speed: 10)
    trip.stay(seconds: 2400)
    trip.drive(1200, speed: 10)
    let truth = trip.truth[0]
    let atRest = trip.locations().filter {
      $0.timestamp >= truth.arrival && $0.timestamp <= truth.departure
    }
    #expect(atRest.allSatisfy { $0.horizontalAccuracy == 5 })
    let far = atRest.filter { $0.coordinate.distance(to: truth.centre) > 40 }
    #expect(Double(far.count) > 0.2 * Double(atRest.count))
    let stays = StayTrip.closedStays(trip.events())
    try #require(stays.count == 1)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(truth.arrival)) <= 30)
    #expect(abs(stays[0].departureDate!.timeIntervalSince(truth.departure)) <= 30)
    #expect(stays[0].fixCount > atRest.count * 95 / 100)
    let fixed = StayTrip.closedStays(
      trip.events(StayDetector.Configuration(maximumLearnedRadiusMeters: 0)))
    #expect(fixed.reduce(0) { $0 + $1.fixCount } < atRest.count * 95 / 100)
  }

  /// Random days of a phone that sleeps after 30–120 s at rest and samples every 1 or 30 s:
  /// every stop of two minutes or more found, its arrival within 15 s plus a sample, its
  /// departure within the gap the logger left (or within a sample of the true one when it
  /// did not sleep), nothing else.
  @Test(arguments: Array(1...48) as [UInt64])
  func dutyCycledDaysFindEveryStopAndNothingElse(seed: UInt64) throws {
    var rng = SeededGenerator(seed: seed &+ 900)
    var trip = StayTrip(seed: seed &+ 60)
    let interval: Double = Bool.random(using: &rng) ? 1 : 30
    trip.logger = DutyCycledLogger(
      sleepAfterStillSeconds: Double.random(in: 30...120, using: &rng).rounded(),
      wakeAfterMovingSeconds: Double.random(in: 15...25, using: &rng).rounded(),
      intervalSeconds: interval)
    for _ in 0..<4 {
      let walking = Bool.random(using: &rng)
      trip.drive(
        Double.random(in: 300...2000, using: &rng), speed: walking ? 1.4 : 12)
      if !walking && Bool.random(using: &rng) { trip.stay(seconds: 40) }  // a red light
      trip.drive(Double.random(in: 200...600, using: &rng), speed: 1.4)
      trip.stay(seconds: Double.random(in: 180...1800, using: &rng).rounded())
      trip.heading += Double.random(in: -90...90, using: &rng)
    }
    trip.drive(800, speed: 1.4)
    let locations = trip.locations()
    let stays = StayTrip.closedStays(trip.events())
    let truth = trip.mergedTruth
    try #require(stays.count == truth.count)
    for (stay, expected) in zip(stays, truth) {
      #expect(abs(stay.arrivalDate.timeIntervalSince(expected.arrival)) <= interval + 15)
      let gap = try #require(
        StayDetectorGapTests.gap(around: expected.departure, in: locations))
      #expect(
        stay.departureDate! >= gap.start.addingTimeInterval(-interval)
          && stay.departureDate! <= gap.end.addingTimeInterval(interval))
    }
  }
}
