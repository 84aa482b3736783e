import Foundation
import NMEA
import Testing
import WaymarkCore

@Suite struct NMEARoundTripTests {
  /// Fixes → `NMEAWriter` → `NMEADecoder` gives the same fixes: the time to the millisecond
  /// (10 Hz, so fractions matter) and the position within 1 cm, in all four hemispheres and
  /// across the antimeridian. This is what waymarkd's NMEA socket sends GeoClue.
  @Test(
    arguments: [
      Coordinate(latitude: 45.76, longitude: 4.835),  // Lyon
      Coordinate(latitude: -33.8688, longitude: 151.2093),  // Sydney
      Coordinate(latitude: 40.7128, longitude: -74.006),  // New York
      Coordinate(latitude: -54.8019, longitude: -68.303),  // Ushuaia
      Coordinate(latitude: 65.0, longitude: 179.9995),  // the antimeridian
      Coordinate(latitude: 0.000_01, longitude: -0.000_01),  // null island's neighbour
    ])
  func writerThenDecoderGivesTheSameFixes(origin: Coordinate) {
    let start = Timestamp.parse("2026-12-01T23:59:50.000Z")!  // crosses midnight
    var route = RouteSynthesizer(start: start, origin: origin, seed: 7)
    route.rateHz = 10
    route.noiseMeters = 3
    route.drive(to: origin.offset(by: 400, bearingDegrees: 75), speedMetersPerSecond: 20)
    let fixes = route.fixes()
    let text = NMEAWriter.log(fixes)
    var decoder = NMEADecoder(path: "round-trip")
    var decoded: [Fix] = []
    Array(text.utf8).withUnsafeBytes { raw in
      _ = decoder.decode(chunk: raw) { decoded.append($0) }
    }
    _ = decoder.finish { decoded.append($0) }
    #expect(decoded.count == fixes.count)
    for (original, back) in zip(fixes, decoded) {
      // Milliseconds are written: the time comes back to within half of one.
      #expect(abs(back.time!.timeIntervalSince(original.time!)) < 0.0005)
      let distance = back.coordinate!.distance(to: original.coordinate!)
      #expect(distance < 0.01, "\(distance) m at \(Timestamp.format(original.time!))")
      #expect(back.mode == original.mode)
      #expect(abs((back.speed ?? .nan) - (original.speed ?? .nan)) < 0.001)
    }
  }

  /// Every sentence the writer makes has a correct checksum and fits NMEA's framing.
  @Test func everySentenceIsWellFramed() {
    let fix = Fix(
      time: Timestamp.parse("2026-12-01T08:00:00.250Z"), mode: .threeDimensional,
      coordinate: Coordinate(latitude: -12.345678, longitude: 123.456789), altitudeMSL: 12,
      geoidSeparation: 30, speed: 3, track: 270, horizontalError: 4, verticalError: 6)
    let sentences = NMEAWriter.sentences(for: fix, includeSatellites: true)
    #expect(sentences.map { $0.prefix(6) }.contains("$GPGGA"))
    #expect(sentences.map { $0.prefix(6) }.contains("$GPRMC"))
    #expect(sentences.map { $0.prefix(6) }.contains("$GPGSA"))
    #expect(sentences.map { $0.prefix(6) }.contains("$GPGST"))
    for sentence in sentences {
      #expect(sentence.hasSuffix("\r\n") && sentence.utf8.count <= 84)
      let body = sentence.dropFirst().prefix { $0 != "*" }
      let checksum = body.utf8.reduce(UInt8(0)) { $0 ^ $1 }
      let written = sentence.split(separator: "*").last!.prefix(2)
      #expect(UInt8(written, radix: 16) == checksum, "\(sentence)")
    }
  }
}
