import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// Significant changes on fix time.
@Suite struct SignificantChangeFilterTests {
  static func admitted(_ fixes: [Fix], filter: SignificantChangeFilter) -> [(
    Location, SignificantChangeFilter.Reason
  )] {
    var filter = filter
    return fixes.compactMap(Location.init).compactMap { location in
      filter.admit(location).map { (location, $0) }
    }
  }

  @Test func everyFiveHundredMetresOfADrive() {
    var route = RouteSynthesizer(start: t0, origin: origin)
    route.drive(to: origin.offset(by: 2100, bearingDegrees: 90), speedMetersPerSecond: 10)
    let admitted = Self.admitted(route.fixes(), filter: SignificantChangeFilter())
    #expect(admitted.map(\.1.isMoved) == [false, true, true, true, true])
    #expect(admitted.first?.1 == .first)
    for (previous, next) in zip(admitted, admitted.dropFirst()) {
      let moved = next.0.distance(from: previous.0)
      #expect(moved >= 500 && moved < 511)
    }
    // A shorter distance lets more through.
    let closer = Self.admitted(
      route.fixes(), filter: SignificantChangeFilter(minimumDistanceMeters: 250))
    #expect(closer.count == 9)
  }

  @Test func theFirstLocationAfterAGap() throws {
    var route = RouteSynthesizer(start: t0, origin: origin)
    route.stop(seconds: 60)
    route.gap(seconds: 400)
    route.stop(seconds: 60)
    let admitted = Self.admitted(route.fixes(), filter: SignificantChangeFilter())
    #expect(admitted.count == 2)
    let after = try #require(admitted.last)
    guard case .afterGap(let seconds) = after.1 else {
      Issue.record("expected a gap, got \(after.1)")
      return
    }
    #expect(seconds > 400 && seconds < 402)
    // Positive control: a gap shorter than the setting lets nothing through.
    var short = RouteSynthesizer(start: t0, origin: origin)
    short.stop(seconds: 60)
    short.gap(seconds: 200)
    short.stop(seconds: 60)
    #expect(Self.admitted(short.fixes(), filter: SignificantChangeFilter()).count == 1)
  }

  @Test func aMaximumIntervalWithoutMoving() {
    var route = RouteSynthesizer(start: t0, origin: origin)
    route.stop(seconds: 1000)
    let none = Self.admitted(route.fixes(), filter: SignificantChangeFilter())
    #expect(none.count == 1)
    let hourly = Self.admitted(
      route.fixes(), filter: SignificantChangeFilter(maximumIntervalSeconds: 300))
    #expect(hourly.count == 4)
    #expect(hourly.dropFirst().allSatisfy { $0.1 == .interval(seconds: 300) })
  }
}

extension SignificantChangeFilter.Reason {
  var isMoved: Bool {
    if case .moved = self { return true }
    return false
  }
}
