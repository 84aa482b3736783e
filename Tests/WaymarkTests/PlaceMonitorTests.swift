import Foundation
import Testing
import Waymark
import WaymarkCore

@Suite struct PlaceMonitorTests {
  let origin = Fixture.origin

  /// Drive 2 km at 15 m/s to a place, stop 5 minutes, drive on; a second place 300 m off the
  /// route must stay silent.
  @Test func namesComeFromTheWatchedPlacesAndFollowSetPlaces() {
    let monitor = PlaceMonitor(places: [
      Fixture.place("home", at: origin),
      Fixture.place("work", at: origin.offset(by: 900, bearingDegrees: 10)),
    ])
    #expect(monitor.name(of: "home") == "Place home")
    #expect(monitor.name(of: "work") == "Place work")
    #expect(monitor.name(of: "gym") == nil)
    monitor.setPlaces([
      Place(id: "home", name: "Home, renamed", coordinate: origin, radiusMeters: 80)
    ])
    #expect(monitor.name(of: "home") == "Home, renamed")
    #expect(monitor.name(of: "work") == nil)
  }

  @Test func stopIsFoundWithTheRightTimes() {
    let cafe = origin.offset(by: 2000, bearingDegrees: 90)
    let aside = origin.offset(by: 1000, bearingDegrees: 90).offset(by: 300, bearingDegrees: 0)
    var walk = Walk(start: "2026-11-29T10:00:00.000Z", at: origin, seed: 7)
    walk.noiseMeters = 3
    walk.move(to: cafe, speed: 15)
    walk.stay(seconds: 300)
    walk.move(to: cafe.offset(by: 2000, bearingDegrees: 90), speed: 15)
    let places = [Fixture.place("cafe", at: cafe), Fixture.place("aside", at: aside)]

    let events = Fixture.run(walk.locations, places: places)

    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(events.allSatisfy { $0.placeID == "cafe" })
    let inside = walk.locations.filter { $0.coordinate.distance(to: cafe) <= 100 }
    guard case .arrival(let arrival) = events.first, case .departure(let departure) = events.last
    else {
      Issue.record("expected an arrival, then a departure: \(events.map(\.className))")
      return
    }
    // The rule: arrival = first fix inside, departure = last fix inside.
    #expect(arrival.time == inside.first?.timestamp)
    #expect(departure.time == inside.last?.timestamp)
    #expect(departure.arrival == arrival.time)
    // Against the truth: within a few seconds of the real crossings (noise is 3 m).
    let trueInside = walk.truth.filter { $0.coordinate.distance(to: cafe) <= 100 }
    #expect(abs(arrival.time.timeIntervalSince(trueInside.first!.time)) <= 2)
    #expect(abs(departure.time.timeIntervalSince(trueInside.last!.time)) <= 2)
    #expect(abs(departure.durationSeconds - (300 + 200.0 / 15)) <= 4)
    #expect(arrival.reason.rule == "inside")
    #expect(arrival.reason.confirmations == 3)
    #expect(arrival.reason.enterRadiusMeters == 100)
    #expect(arrival.reason.exitRadiusMeters == 130)
    #expect(departure.reason.rule == "outside")
    #expect(
      departure.reason.distanceMeters - (departure.reason.horizontalAccuracyMeters ?? 0) > 130)
  }

  /// A car parked 40 m outside a place for an hour, with 10 m Gaussian noise: no events; parked
  /// there after a visit: exactly one departure, no flapping.
  @Test func parkedFortyMetresOutsideDoesNotFlap() {
    let place = origin.offset(by: 500, bearingDegrees: 0)
    let parking = place.offset(by: 140, bearingDegrees: 200)
    var walk = Walk(start: "2026-11-29T08:00:00.000Z", at: parking, seed: 40)
    walk.noiseMeters = 10
    walk.accuracyMeters = 10
    walk.stay(seconds: 3600)
    let nearest = walk.locations.map { $0.coordinate.distance(to: place) }.min() ?? 0
    #expect(nearest < 115, "the noise must really reach towards the place")
    #expect(Fixture.run(walk.locations, places: [Fixture.place("p", at: place)]).isEmpty)

    var visit = Walk(start: "2026-11-29T08:00:00.000Z", at: place, seed: 41)
    visit.noiseMeters = 10
    visit.accuracyMeters = 10
    visit.stay(seconds: 120)
    visit.move(to: parking, speed: 1.4)
    visit.stay(seconds: 3600)
    let events = Fixture.run(visit.locations, places: [Fixture.place("p", at: place)])
    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
  }

  /// Inside, then parked in the hysteresis band (between enter and exit radius): no departure.
  @Test func hysteresisBandHoldsTheVisit() {
    let place = origin
    var walk = Walk(start: "2026-11-29T09:00:00.000Z", at: place, seed: 3)
    walk.noiseMeters = 3
    walk.stay(seconds: 60)
    walk.move(to: place.offset(by: 115, bearingDegrees: 45), speed: 1.4)
    walk.stay(seconds: 1800)
    let events = Fixture.run(walk.locations, places: [Fixture.place("p", at: place)])
    #expect(events.map(\.className) == ["ARRIVAL"])
  }

  /// Fixes 300 m apart (15 m/s, one every 20 s) straddle a 50 m place: no fix inside, yet an
  /// arrival and a departure with rule `pass-through` and interpolated times.
  @Test func passThroughBetweenFixesIsDetected() {
    let place = origin.offset(by: 1050, bearingDegrees: 90)
    let near = origin.offset(by: 2250, bearingDegrees: 90).offset(by: 60, bearingDegrees: 0)
    var walk = Walk(start: "2026-11-29T12:00:00.000Z", at: origin)
    walk.interval = 20
    walk.emit()
    walk.move(to: origin.offset(by: 3000, bearingDegrees: 90), speed: 15)
    #expect(walk.locations.allSatisfy { $0.coordinate.distance(to: place) > 50 })

    let events = Fixture.run(
      walk.locations,
      places: [
        Fixture.place("x", at: place, radius: 50),
        Fixture.place("near", at: near, radius: 50),
      ])

    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(events.allSatisfy { $0.placeID == "x" && $0.reason.rule == "pass-through" })
    let start = Timestamp.parse("2026-11-29T12:00:00.000Z")!
    #expect(abs(events[0].time.timeIntervalSince(start) - 1000.0 / 15) < 0.5)
    #expect(abs(events[1].time.timeIntervalSince(start) - 1100.0 / 15) < 0.5)
    #expect(events[0].reason.distanceMeters < 1)
  }

  /// One fix inside a 40 m place, not enough to confirm: still reported as a pass-through.
  @Test func singleUnconfirmedFixInsideIsAPassThrough() {
    let place = origin.offset(by: 1000, bearingDegrees: 90)
    var walk = Walk(start: "2026-11-29T12:00:00.000Z", at: origin)
    walk.interval = 5
    walk.emit()
    walk.move(to: origin.offset(by: 2000, bearingDegrees: 90), speed: 15)
    let inside = walk.locations.filter { $0.coordinate.distance(to: place) <= 40 }
    #expect(inside.count == 1)

    let events = Fixture.run(walk.locations, places: [Fixture.place("x", at: place, radius: 40)])

    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(events.allSatisfy { $0.reason.rule == "pass-through" })
    #expect(events.first?.reason.confirmations == 1)
    let start = Timestamp.parse("2026-11-29T12:00:00.000Z")!
    #expect(abs(events[0].time.timeIntervalSince(start) - 960.0 / 15) < 0.5)
    #expect(abs(events[1].time.timeIntervalSince(start) - 1040.0 / 15) < 0.5)
  }

  /// Bursts of five fixes that jump into (or out of) the place but report 150–300 m accuracy
  /// are ignored; the same bursts with a good accuracy would fire, which proves the gate works.
  @Test func outliersWithPoorAccuracyAreIgnored() {
    let place = origin
    let outsideSpot = place.offset(by: 600, bearingDegrees: 270)
    func scenario(outlierAccuracy: Double) -> [Location] {
      var walk = Walk(start: "2026-11-29T07:00:00.000Z", at: outsideSpot, seed: 9)
      walk.noiseMeters = 2
      for _ in 0..<10 {
        walk.stay(seconds: 55)
        for _ in 0..<5 {
          walk.time += 1
          walk.emit(accuracy: outlierAccuracy, displacedTo: place)
        }
      }
      walk.move(to: place, speed: 1.4)
      walk.stay(seconds: 300)
      for _ in 0..<10 {
        walk.stay(seconds: 25)
        for _ in 0..<5 {
          walk.time += 1
          walk.emit(accuracy: outlierAccuracy * 1.5, displacedTo: outsideSpot)
        }
      }
      return walk.locations
    }
    let places = [Fixture.place("p", at: place)]

    let gated = Fixture.run(scenario(outlierAccuracy: 150), places: places)
    #expect(gated.map(\.className) == ["ARRIVAL"])
    #expect(gated.first?.reason.horizontalAccuracyMeters == 5)

    // Without the gate, the plausibility check still holds the 600 m jumps as suspect (five
    // seconds, shorter than the 20 s hold): only the real arrival.
    let ungated = Fixture.run(
      scenario(outlierAccuracy: 150), places: places,
      configuration: .init(maximumAccuracyMeters: 1000))
    #expect(ungated.map(\.className) == ["ARRIVAL"])

    let unchecked = Fixture.run(
      scenario(outlierAccuracy: 150), places: places,
      configuration: .init(maximumAccuracyMeters: 1000, maximumSpeedMetersPerSecond: .infinity))
    #expect(unchecked.count > 10, "control: without the gate and the speed bound they do fire")
  }

  /// Ten minutes without a fix inside a place is not a departure; the departure afterwards is
  /// timed by the last fix inside.
  @Test func tenMinuteFixLossInsideIsNotADeparture() {
    let place = origin
    var walk = Walk(start: "2026-11-29T15:00:00.000Z", at: place.offset(by: 500, bearingDegrees: 0))
    walk.noiseMeters = 3
    walk.move(to: place, speed: 1.4)
    walk.stay(seconds: 300)
    walk.gap(seconds: 600)
    walk.stay(seconds: 300)
    let lastInside = walk.time
    walk.move(to: place.offset(by: 500, bearingDegrees: 180), speed: 1.4)

    let events = Fixture.run(walk.locations, places: [Fixture.place("p", at: place)])

    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    guard case .departure(let departure) = events.last else {
      Issue.record("the last event is not a departure: \(events.map(\.className))")
      return
    }
    #expect(abs(departure.time.timeIntervalSince(lastInside)) <= 75)  // walking out of 100 m
    #expect(departure.durationSeconds > 1200)
    #expect(departure.reason.rule == "outside")
  }

  /// The device leaves while no fix arrives: departure rule `fix-loss`, timed by the last fix
  /// inside before the gap.
  @Test func departureDuringFixLossIsTimedByTheLastFixInside() {
    let place = origin
    var walk = Walk(start: "2026-11-29T15:00:00.000Z", at: place)
    walk.stay(seconds: 120)
    let lastInside = walk.time
    walk.gap(seconds: 600, moveTo: place.offset(by: 2000, bearingDegrees: 10))
    walk.stay(seconds: 10)

    let events = Fixture.run(walk.locations, places: [Fixture.place("p", at: place)])

    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(events.last?.time == lastInside)
    #expect(events.last?.reason.rule == "fix-loss")
  }

  /// A visit from 23:54 to 00:10 UTC keeps its dates and duration across midnight.
  @Test func visitAcrossUTCMidnight() {
    let place = origin.offset(by: 300, bearingDegrees: 0)
    var walk = Walk(start: "2026-11-29T23:54:00.000Z", at: origin, seed: 5)
    walk.noiseMeters = 2
    walk.move(to: place, speed: 5)
    walk.stay(seconds: 900)
    walk.move(to: origin, speed: 5)

    let events = Fixture.run(walk.locations, places: [Fixture.place("p", at: place)])
    let lines = String(decoding: Fixture.ndjson(events), as: UTF8.self)
      .split(separator: "\n").map(String.init)

    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(lines.count == 2)
    #expect(lines.first?.contains(#""time":"2026-11-29T23:54:4"#) == true)
    #expect(lines.last?.contains(#""time":"2026-11-30T00:10:"#) == true)
    #expect(lines.last?.contains(#""arrival":"2026-11-29T23:54:4"#) == true)
    if case .departure(let departure) = events.last {
      #expect(abs(departure.durationSeconds - (900 + 200.0 / 5)) <= 3)
    }
  }

  /// Stopping in the middle of a visit, persisting the snapshot as JSON and resuming in a new
  /// monitor gives exactly the events of an uninterrupted run.
  @Test func restartMidVisitResumesFromSnapshot() throws {
    let place = origin.offset(by: 800, bearingDegrees: 30)
    var walk = Walk(start: "2026-11-29T11:00:00.000Z", at: origin, seed: 11)
    walk.noiseMeters = 4
    walk.move(to: place, speed: 10)
    walk.stay(seconds: 600)
    walk.move(to: origin, speed: 10)
    let places = [Fixture.place("p", at: place), Fixture.place("q", at: origin)]
    let uninterrupted = Fixture.run(walk.locations, places: places)
    #expect(
      uninterrupted.filter { $0.placeID == "p" }.map(\.className) == ["ARRIVAL", "DEPARTURE"])

    let cut = walk.locations.count / 2
    let first = PlaceMonitor(places: places)
    var resumed = walk.locations[..<cut].flatMap { first.process($0) }
    #expect(first.state(for: "p")?.isInside == true, "the cut must fall inside the visit")
    let stored = try JSONEncoder().encode(first.snapshot())

    let second = PlaceMonitor(places: places)
    second.restore(try JSONDecoder().decode(PlaceMonitor.Snapshot.self, from: stored))
    #expect(second.state(for: "p") == first.state(for: "p"))
    #expect(second.openVisits().map(\.placeID) == ["p"])
    resumed += walk.locations[cut...].flatMap { second.process($0) }

    #expect(resumed == uninterrupted)
    #expect(Fixture.ndjson(resumed) == Fixture.ndjson(uninterrupted))
  }

  /// The same input twice gives byte-identical NDJSON.
  @Test func sameInputTwiceGivesIdenticalBytes() {
    func run() -> [UInt8] {
      var walk = Walk(start: "2026-11-29T06:00:00.000Z", at: origin, seed: 99)
      walk.noiseMeters = 8
      walk.accuracyMeters = 8
      var places: [Place] = []
      var rng = SeededGenerator(seed: 5)
      for i in 0..<200 {
        let spot = origin.offset(
          by: Double.random(in: 0..<3000, using: &rng),
          bearingDegrees: Double.random(in: 0..<360, using: &rng))
        places.append(
          Fixture.place("p\(i)", at: spot, radius: Double.random(in: 20..<150, using: &rng)))
      }
      for leg in 0..<8 {
        walk.move(to: places[leg * 20].coordinate, speed: 8)
        walk.stay(seconds: 60)
      }
      return Fixture.ndjson(Fixture.run(walk.locations, places: places))
    }
    let first = run()
    #expect(first.count > 1000)
    #expect(first == run())
  }

  /// A place may override the detection defaults.
  @Test func placeOverridesApply() {
    let place = origin
    var walk = Walk(start: "2026-11-29T10:00:00.000Z", at: place.offset(by: 300, bearingDegrees: 0))
    walk.move(to: place, speed: 1.5)
    walk.stay(seconds: 30)
    walk.move(to: place.offset(by: 300, bearingDegrees: 0), speed: 1.5)
    var strict = Fixture.place("strict", at: place)
    strict.detection = PlaceDetectionOverrides(exitRadiusMeters: 200, dwellSeconds: 60)
    let loose = Fixture.place("loose", at: place)

    let events = Fixture.run(walk.locations, places: [strict, loose])

    // "strict" needs 60 s inside: the 30 s stop plus walking 100 m in (about 97 s) is enough
    // only from the first fix inside; arrival time is still that first fix.
    let byPlace = Dictionary(grouping: events, by: \.placeID)
    #expect(byPlace["loose"]?.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(byPlace["strict"]?.map(\.className) == ["ARRIVAL", "DEPARTURE"])
    #expect(byPlace["strict"]?.first?.time == byPlace["loose"]?.first?.time)
    #expect(byPlace["strict"]?.first?.reason.dwellSeconds ?? 0 >= 60)
    #expect(byPlace["strict"]?.last?.reason.exitRadiusMeters == 200)
    #expect(
      byPlace["strict"]!.last!.reason.distanceMeters > byPlace["loose"]!.last!.reason.distanceMeters
    )
  }
}
