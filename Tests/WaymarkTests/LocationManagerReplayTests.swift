import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

/// The manager on a real NMEA replay source: a synthesized drive written as NMEA, decoded and
/// replayed by the NMEA module, filtered by the manager.
@Suite struct LocationManagerReplayTests {
  @Test func replayedDriveThroughDistanceAndAccuracyFilters() async throws {
    var route = RouteSynthesizer(start: t0, origin: origin, seed: 11)
    route.noiseMeters = 2
    route.stop(seconds: 20)
    route.drive(to: origin.offset(by: 800, bearingDegrees: 45), speedMetersPerSecond: 12)
    route.outlier(offsetMeters: 300, bearingDegrees: 180, accuracyMeters: 120)
    route.gap(seconds: 30)
    route.stop(seconds: 15)
    route.drive(to: origin, speedMetersPerSecond: 15)
    let path = temporaryDirectory().appendingPathComponent("drive.nmea").path
    try NMEAWriter.log(route.fixes()).write(toFile: path, atomically: true, encoding: .utf8)
    let decoded = try NMEALog.decodeFile(atPath: path).fixes
    #expect(decoded.count > 100)
    #expect(decoded.contains { ($0.horizontalError ?? 0) >= 100 })  // the outlier is in the log

    // The rules, stated independently: accuracy first, then the distance from the last
    // delivered location, except for the first and the first after a gap.
    let filter = 50.0
    var expected: [Location] = []
    var lastTime: Date?
    var inGap = true
    for fix in decoded {
      guard let location = Location(fix) else { continue }
      if let lastTime, location.timestamp.timeIntervalSince(lastTime) > 10 { inGap = true }
      lastTime = location.timestamp
      guard let accuracy = location.horizontalAccuracy, accuracy <= 30 else { continue }
      if !inGap, let last = expected.last, location.distance(from: last) < filter { continue }
      inGap = false
      expected.append(location)
    }
    #expect(expected.count > 10)
    #expect(expected.count < decoded.count / 3)

    let center = AuthorizationCenter(
      store: InMemoryGrantStore([Grant(clientID: "replay", level: .whenInUse, grantedAt: t0)]),
      services: .enabled)
    let manager = LocationManager(
      clientID: "replay", source: NMEAReplay.source(path: path), authorization: center)
    manager.distanceFilter = filter
    manager.maximumHorizontalAccuracy = 30
    var locations = manager.locations(bufferingNewest: 10_000).makeAsyncIterator()
    manager.startUpdatingLocation()
    let delivered = try await locations.take(expected.count)
    #expect(delivered == expected)
    #expect(delivered.allSatisfy { ($0.horizontalAccuracy ?? .infinity) <= 30 })
    guard case .file(let file, _)? = delivered.first?.source else {
      Issue.record("a replayed location names its file and line")
      return
    }
    #expect(file == path)
  }
}
