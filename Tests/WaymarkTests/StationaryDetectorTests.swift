import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore

/// Stationarity on fix time, from synthesized drives.
@Suite struct StationaryDetectorTests {
  /// Runs `fixes` through a detector: each location with the detector's answer after it.
  static func run(_ fixes: [Fix], thresholds: StationaryDetector.Thresholds = .init()) -> [(
    location: Location, stationary: Bool
  )] {
    var detector = StationaryDetector(thresholds: thresholds)
    return fixes.compactMap(Location.init).map { ($0, detector.update(with: $0)) }
  }

  /// 1 km east at 10 m/s, a stop of `stopSeconds`, 1 km further east: stop from 100 s.
  static func drive(stopSeconds: Double = 120) -> RouteSynthesizer {
    var route = RouteSynthesizer(start: t0, origin: origin, seed: 7)
    route.noiseMeters = 2
    let stop = origin.offset(by: 1000, bearingDegrees: 90)
    route.drive(to: stop, speedMetersPerSecond: 10)
    route.stop(seconds: stopSeconds)
    route.drive(to: stop.offset(by: 1000, bearingDegrees: 90), speedMetersPerSecond: 10)
    return route
  }

  @Test func aStopRaisesItAndMovingAgainClearsIt() throws {
    let results = Self.run(Self.drive().fixes())
    let stopStart = t0.addingTimeInterval(100)
    let departure = stopStart.addingTimeInterval(120)
    // Positive control: never stationary while driving to the stop.
    #expect(results.filter { $0.location.timestamp < stopStart }.allSatisfy { !$0.stationary })
    let raised = try #require(results.first { $0.stationary }?.location.timestamp)
    let settled = raised.timeIntervalSince(stopStart)
    #expect(settled >= 30 && settled <= 32, "raised \(settled) s into the stop")
    // Held for the rest of the stop.
    #expect(
      results.filter { $0.location.timestamp >= raised && $0.location.timestamp < departure }
        .allSatisfy { $0.stationary })
    let cleared = try #require(
      results.first { $0.location.timestamp > raised && !$0.stationary }?.location.timestamp)
    let moving = cleared.timeIntervalSince(departure)
    #expect(moving >= 5 && moving <= 7, "cleared \(moving) s after driving off")
    #expect(results.filter { $0.location.timestamp >= cleared }.allSatisfy { !$0.stationary })
  }

  /// A multipath burst at the stop: positions thrown 60 m away with a made-up speed of 4 m/s.
  static func stopWithBurst(seconds: Double) -> [Fix] {
    var route = RouteSynthesizer(start: t0, origin: origin, seed: 7)
    let stop = origin.offset(by: 1000, bearingDegrees: 90)
    route.drive(to: stop, speedMetersPerSecond: 10)
    route.stop(seconds: 60)
    route.multipath(seconds: seconds, offsetMeters: 60, bearingDegrees: 0, accuracyMeters: 30)
    route.stop(seconds: 60)
    let burstStart = t0.addingTimeInterval(160)
    let burstEnd = burstStart.addingTimeInterval(seconds)
    return route.fixes().map { fix in
      var fix = fix
      if let time = fix.time, time >= burstStart, time < burstEnd { fix.speed = 4 }
      return fix
    }
  }

  @Test func aMultipathBurstAtAStopDoesNotClearIt() throws {
    let burstStart = t0.addingTimeInterval(160)
    let short = Self.run(Self.stopWithBurst(seconds: 3))
    let raised = try #require(short.first { $0.stationary }?.location.timestamp)
    #expect(raised < burstStart)
    #expect(short.filter { $0.location.timestamp >= raised }.allSatisfy { $0.stationary })
    // Positive control: the same displacement held longer than the move time clears it.
    let long = Self.run(Self.stopWithBurst(seconds: 12))
    #expect(long.contains { $0.location.timestamp > burstStart && !$0.stationary })
  }

  @Test func withoutSpeedThePositionSpreadDecides() throws {
    let fixes = Self.drive().fixes().map { fix in
      var fix = fix
      fix.speed = nil
      return fix
    }
    let results = Self.run(fixes)
    let stopStart = t0.addingTimeInterval(100)
    // Positive control: 10 m between fixes is never still.
    #expect(results.filter { $0.location.timestamp < stopStart }.allSatisfy { !$0.stationary })
    let raised = try #require(results.first { $0.stationary }?.location.timestamp)
    #expect(raised.timeIntervalSince(stopStart) <= 32)
    #expect(results.last.map { !$0.stationary } == true)
  }
}
