import Foundation
import NMEA
import Testing
import WaymarkCore

@Suite struct SynthesizerTests {
  static let start = Timestamp.parse("2026-12-31T23:59:30.000Z")!

  /// A drive in the southern and western hemispheres that crosses UTC midnight at year end.
  static func route(seed: UInt64 = 11) -> RouteSynthesizer {
    var route = RouteSynthesizer(
      start: start, origin: Coordinate(latitude: -12.0464, longitude: -77.0428), seed: seed)
    route.noiseMeters = 4
    route.stop(seconds: 10)
    route.drive(to: Coordinate(latitude: -12.0500, longitude: -77.0400), speedMetersPerSecond: 12)
    route.gap(seconds: 20)
    route.stop(seconds: 15)
    route.outlier(offsetMeters: 300, bearingDegrees: 45, accuracyMeters: 90)
    return route
  }

  @Test func writtenLogDecodesToTheSameFixes() throws {
    let fixes = Self.route().fixes()
    let decoded = NMEALog.decode(Array(NMEAWriter.log(fixes).utf8), path: "synthetic").fixes
    try #require(decoded.count == fixes.count)
    for (ours, back) in zip(fixes, decoded) {
      #expect(back.time == ours.time)
      #expect(abs(back.coordinate!.latitude - ours.coordinate!.latitude) < 1e-7)
      #expect(abs(back.coordinate!.longitude - ours.coordinate!.longitude) < 1e-7)
      #expect(back.mode == .threeDimensional)
      #expect(abs(back.speed! - ours.speed!) < 1e-3)
    }
    #expect(decoded.first?.coordinate?.latitude ?? 0 < 0)
    #expect(decoded.first?.coordinate?.longitude ?? 0 < 0)
    let times = decoded.compactMap(\.time).map(Timestamp.format)
    #expect(times.contains("2026-12-31T23:59:59.000Z"))
    #expect(times.contains("2027-01-01T00:00:00.000Z"))
    #expect(times == times.sorted())
  }

  @Test func sameSeedSameBytesOtherSeedOtherBytes() {
    #expect(NMEAWriter.log(Self.route().fixes()) == NMEAWriter.log(Self.route().fixes()))
    #expect(NMEAWriter.log(Self.route().fixes()) != NMEAWriter.log(Self.route(seed: 12).fixes()))
  }

  @Test func gapsProduceNoFixesAndStopsStayPut() {
    let fixes = Self.route().fixes()
    let times = fixes.compactMap(\.time)
    let steps = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }
    #expect(steps.contains { $0 >= 20 })
    #expect(steps.allSatisfy { $0 > 0 })
    let outlier = fixes.first { ($0.horizontalError ?? 0) >= 90 }
    #expect(outlier != nil)
  }

  @Test func noiseHasTheRequestedSpread() {
    var route = RouteSynthesizer(start: Self.start, origin: Coordinate(latitude: 10, longitude: 10))
    route.noiseMeters = 5
    route.stop(seconds: 2000)
    let fixes = route.fixes()
    let distances = fixes.map { $0.coordinate!.distance(to: route.origin) }
    let meanSquare = distances.map { $0 * $0 }.reduce(0, +) / Double(distances.count)
    // Two axes of 5 m: E[d^2] = 2 * 25.
    #expect(abs(meanSquare - 50) < 5)
  }

  /// A multipath burst displaces the fixes of its seconds, whatever the route does meanwhile,
  /// and reports its accuracy, while speed and the true position stay true; a tunnel moves the
  /// receiver with no fix.
  @Test func multipathDisplacesABurstAndTunnelsMoveUnseen() throws {
    let origin = Coordinate(latitude: 48.1, longitude: 11.5)
    let east = origin.offset(by: 600, bearingDegrees: 90)
    let exit = east.offset(by: 2000, bearingDegrees: 0)
    var route = RouteSynthesizer(start: Self.start, origin: origin)
    route.multipath(seconds: 10, offsetMeters: 200, bearingDegrees: 0, accuracyMeters: 35)
    route.drive(to: east, speedMetersPerSecond: 15)
    route.tunnel(to: exit, seconds: 300)
    route.stop(seconds: 5)
    let samples = route.samples()
    let burst = samples.filter { $0.fix.horizontalError == 35 }
    try #require(burst.count == 10)
    for sample in burst {
      #expect(abs(sample.fix.coordinate!.distance(to: sample.truePosition) - 200) < 0.01)
      #expect(sample.fix.speed == 15)
      #expect(sample.fix.hdop! > 6)
    }
    #expect(
      samples.filter { $0.fix.horizontalError == 5 }.allSatisfy {
        $0.fix.coordinate == $0.truePosition
      })
    let times = samples.compactMap(\.fix.time)
    let longest = zip(times, times.dropFirst()).map { $1.timeIntervalSince($0) }.max() ?? 0
    #expect(longest >= 300)
    #expect(samples.last!.fix.coordinate!.distance(to: exit) < 0.01)
    #expect(route.fixes() == samples.map(\.fix))
  }
}
