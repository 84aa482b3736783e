import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// The in-process visits: a `VisitMonitor` over a synthesized drive with one stop, and a
/// `LocationManager`'s `visits` over a fix source, both on fix time.
@Suite struct VisitMonitorTests {
  /// Drive, stop five minutes, drive on: one stay.
  static func trip(stop seconds: Double = 300) -> StayTrip {
    var trip = StayTrip(seed: 23)
    trip.drive(900, speed: 12)
    trip.stay(seconds: seconds)
    trip.drive(900, speed: 12)
    return trip
  }

  /// The stream of a monitor yields the stop as one visit, open then closed, dated by the fixes
  /// and centred on the stop; the array form gives the same visits, and so does a second run.
  @Test func aStopIsOneVisitOpenThenClosed() async throws {
    let trip = Self.trip()
    let locations = trip.locations()
    let (stream, continuation) = AsyncStream.makeStream(of: Location.self)
    for location in locations { continuation.yield(location) }
    continuation.finish()
    var visits: [Stay] = []
    for await visit in VisitMonitor().visits(of: stream) { visits.append(visit) }
    try #require(visits.count == 2, "\(visits)")
    let truth = try #require(trip.truth.first)
    #expect(visits[0].isOpen && !visits[1].isOpen)
    #expect(visits[0].arrivalDate == visits[1].arrivalDate)
    #expect(abs(visits[1].arrivalDate.timeIntervalSince(truth.arrival)) <= 5)
    #expect(abs(try #require(visits[1].departureDate).timeIntervalSince(truth.departure)) <= 5)
    #expect(visits[1].coordinate.distance(to: truth.centre) <= 3)
    #expect(visits[1].horizontalAccuracy > 0 && visits[1].horizontalAccuracy < 10)
    #expect(visits.allSatisfy { $0.placeID == nil })
    #expect(VisitMonitor().visits(in: locations) == visits)
    #expect(VisitMonitor().visits(in: trip.locations()) == visits)
  }

  /// A declared place around the stop names the visit; one elsewhere does not.
  @Test func aPlaceAroundTheStopNamesIt() throws {
    let trip = Self.trip()
    let centre = try #require(trip.truth.first?.centre)
    let places = [
      Place(id: "far", name: "Far", coordinate: centre.offset(by: 2_000, bearingDegrees: 0)),
      Place(id: "depot", name: "Depot", coordinate: centre.offset(by: 30, bearingDegrees: 90)),
    ]
    let visits = VisitMonitor(places: places).visits(in: trip.locations())
    #expect(visits.count == 2)
    #expect(visits.allSatisfy { $0.placeID == "depot" })
    let elsewhere = VisitMonitor(places: [places[0]]).visits(in: trip.locations())
    #expect(elsewhere.count == 2 && elsewhere.allSatisfy { $0.placeID == nil })
  }

  /// A stop under `visit-min-duration` (a red light) gives no visit; the configuration's
  /// shorter minimum makes it one (positive control).
  @Test func aRedLightIsNoVisit() {
    let light = Self.trip(stop: 90).locations()
    #expect(VisitMonitor().visits(in: light).isEmpty)
    let shorter = VisitMonitor(configuration: .init(minimumDurationSeconds: 60))
    #expect(shorter.visits(in: light).count == 2)
  }

  /// A manager's `visits`: the same visit as the monitor's, open then closed, from the fixes
  /// its source delivers.
  @Test func aLocationManagerYieldsTheVisits() async throws {
    // The manager's locations do not end with the source: the drive after the stop lasts past
    // the detector's return window, so that the stay closes while they flow.
    var trip = Self.trip()
    trip.drive(2_000, speed: 12)
    let log = NMEAWriter.log(trip.route.fixes())
    let fixes = NMEALog.decode(Array(log.utf8), path: "trip.nmea").fixes
    let expected = VisitMonitor().visits(in: trip.locations())
    let center = AuthorizationCenter(
      store: InMemoryGrantStore([
        Grant(clientID: "visits", level: .whenInUse, grantedAt: StayDetectorTests.start)
      ]),
      services: .enabled)
    let source = FixSource(name: "trip") {
      AsyncStream { continuation in
        for fix in fixes { continuation.yield(fix) }
        continuation.finish()
      }
    }
    let manager = LocationManager(clientID: "visits", source: source, authorization: center)
    let visits = manager.visits
    manager.startUpdatingLocation()
    // A bounded wait: the first to finish (the visits, or 20 s) cancels the other.
    let received = await withTaskGroup(of: [Stay]?.self) { group in
      group.addTask {
        var received: [Stay] = []
        for await visit in visits {
          received.append(visit)
          if received.count == expected.count { break }
        }
        return received
      }
      group.addTask {
        try? await Task.sleep(for: .seconds(20))
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first ?? []
    }
    manager.stopUpdatingLocation()
    #expect(received == expected && received.count == 2, "\(received)")
  }
}
