import Foundation
import NMEA
import Testing
import WaymarkCore

@Suite struct FixAssemblyTests {
  static func decode(_ lines: [String], defaultDate: UTCDate? = nil) -> NMEADecoding {
    let text = lines.map {
      $0.hasPrefix("#") || $0.isEmpty ? $0 + "\n" : NMEAWriter.checksummed($0)
    }
    .joined()
    return NMEALog.decode(Array(text.utf8), path: "test.nmea", defaultDate: defaultDate)
  }

  static func date(_ year: Int, _ month: Int, _ day: Int, _ hms: String) -> Date {
    Timestamp.parse(String(format: "%04d-%02d-%02dT", year, month, day) + hms)!
  }

  @Test func sentencesOfOneEpochMakeOneFix() throws {
    let result = Self.decode([
      "GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGSA,A,3,04,05,,09,12,,,24,,,,,2.5,1.3,2.1",
      "GPRMC,120000.00,A,4807.038,N,01131.000,E,022.4,084.4,230394,003.1,W,A",
      "GPVTG,084.4,T,087.5,M,022.4,N,041.5,K,A",
    ])
    #expect(result.fixes.count == 1)
    let fix = try #require(result.fixes.first)
    #expect(fix.time == Self.date(1994, 3, 23, "12:00:00.000Z"))
    #expect(fix.mode == .threeDimensional)
    #expect(fix.status == .gps)
    #expect(fix.altitudeMSL == 545.4)
    #expect(fix.geoidSeparation == 46.9)
    #expect(abs(fix.altitudeHAE! - 592.3) < 1e-9)
    #expect(abs(fix.speed! - 22.4 * 1852 / 3600) < 1e-12)
    #expect(fix.track == 84.4)
    #expect(fix.hdop == 1.3)
    #expect(fix.vdop == 2.1)
    #expect(fix.pdop == 2.5)
    #expect(fix.satellitesUsed == 8)
    // No GST: HDOP x UERE (5 m for autonomous GNSS).
    #expect(abs(fix.horizontalError! - 1.3 * 5) < 1e-12)
    #expect(abs(fix.verticalError! - 2.1 * 5) < 1e-12)
    #expect(fix.provenance == .file(path: "test.nmea", line: 1))
    #expect(result.statistics.epochs == 1)
    #expect(result.statistics.sentencesByType == ["GGA": 1, "GSA": 1, "RMC": 1, "VTG": 1])
  }

  @Test func gstGivesTheErrorEstimate() throws {
    let result = Self.decode([
      "GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGST,120000.00,1.2,3.0,2.0,45.0,3.0,4.0,5.0",
      "GPRMC,120000.00,A,4807.038,N,01131.000,E,0.0,,230394,,,A",
    ])
    let fix = try #require(result.fixes.first)
    #expect(fix.horizontalError == 5.0)
    #expect(fix.verticalError == 5.0)
  }

  @Test func hemispheresSouthAndWest() throws {
    let result = Self.decode([
      "GPGGA,080000,3451.5000,S,05822.8000,W,1,07,1.1,25.0,M,14.0,M,,",
      "GPRMC,080000,A,3451.5000,S,05822.8000,W,0.0,,150526,,,A",
    ])
    let coordinate = try #require(result.fixes.first?.coordinate)
    #expect(abs(coordinate.latitude - -(34 + 51.5 / 60)) < 1e-12)
    #expect(abs(coordinate.longitude - -(58 + 22.8 / 60)) < 1e-12)
  }

  @Test func ggaOnlyEpochsCarryTheDateAcrossMidnight() {
    let result = Self.decode([
      "GPRMC,235958,A,4807.038,N,01131.000,E,0.0,,311225,,,A",
      "GPGGA,235959,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,000001,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
    ])
    #expect(
      result.fixes.map { $0.time.map(Timestamp.format) } == [
        "2025-12-31T23:59:58.000Z", "2025-12-31T23:59:59.000Z", "2026-01-01T00:00:00.000Z",
        "2026-01-01T00:00:01.000Z",
      ])
  }

  @Test func rmcDatesCrossMidnightMonthAndLeapDay() {
    let result = Self.decode([
      "GPGGA,235959.500,0000.000,N,00000.000,E,1,08,0.9,1.0,M,0.0,M,,",
      "GPRMC,235959.500,A,0000.000,N,00000.000,E,0.0,,280224,,,A",
      "GPGGA,000000.500,0000.000,N,00000.000,E,1,08,0.9,1.0,M,0.0,M,,",
      "GPRMC,000000.500,A,0000.000,N,00000.000,E,0.0,,290224,,,A",
    ])
    #expect(
      result.fixes.map { $0.time.map(Timestamp.format) } == [
        "2024-02-28T23:59:59.500Z", "2024-02-29T00:00:00.500Z",
      ])
  }

  @Test func aBackwardStepIsNotMidnight() {
    // bt451-like: the clock jumps back 52 minutes; the date must not advance.
    let result = Self.decode([
      "GPRMC,152500,A,4807.038,N,01131.000,E,0.0,,010526,,,A",
      "GPGGA,143300,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
    ])
    #expect(result.fixes.last?.time.map(Timestamp.format) == "2026-05-01T14:33:00.000Z")
  }

  @Test func logWithoutDatesUsesHeaderOrGivenDate() {
    let lines = [
      "# Date: 2026-03-04",
      "GPGGA,101010,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
    ]
    #expect(
      Self.decode(lines).fixes.first?.time.map(Timestamp.format) == "2026-03-04T10:10:10.000Z")
    let given = Self.decode(
      Array(lines.dropFirst()), defaultDate: UTCDate(year: 2020, month: 1, day: 2))
    #expect(given.fixes.first?.time.map(Timestamp.format) == "2020-01-02T10:10:10.000Z")
    let none = Self.decode(Array(lines.dropFirst()))
    #expect(none.fixes.first?.time == nil)
    #expect(none.fixes.first?.timeOfDayMilliseconds == 36_610_000)
    #expect(none.fixes.first?.isUsable == false)
  }

  @Test func zdaGivesTheDateAndTheCentury() {
    let result = Self.decode([
      "GPZDA,120000.00,31,12,1999,00,00",
      "GPGGA,120000.00,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPRMC,120001.00,A,4807.038,N,01131.000,E,0.0,,311299,,,A",
    ])
    #expect(
      result.fixes.map { $0.time.map(Timestamp.format) } == [
        "1999-12-31T12:00:00.000Z", "1999-12-31T12:00:01.000Z",
      ])
  }

  @Test(arguments: [
    ("1", FixStatus.gps), ("2", .dgps), ("4", .rtkFixed), ("5", .rtkFloat), ("6", .deadReckoning),
    ("8", .simulated),
  ])
  func ggaQualityGivesStatus(quality: String, status: FixStatus) {
    let result = Self.decode([
      "GPGGA,120000,4807.038,N,01131.000,E,\(quality),08,0.9,545.4,M,46.9,M,,"
    ])
    #expect(result.fixes.first?.status == status)
    #expect(result.fixes.first?.mode == .threeDimensional)
  }

  @Test func modes() {
    // RMC only: 2D. GGA without altitude: 2D. Invalid: no fix, position kept but not usable.
    let rmcOnly = Self.decode(["GPRMC,120000,A,4807.038,N,01131.000,E,0.0,,230394,,,A"])
    #expect(rmcOnly.fixes.first?.mode == .twoDimensional)
    let noAltitude = Self.decode(["GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,,M,,M,,"])
    #expect(noAltitude.fixes.first?.mode == .twoDimensional)
    let void = Self.decode(["GPRMC,120000,V,4807.038,N,01131.000,E,0.0,,230394,,,N"])
    #expect(void.fixes.first?.mode == .noFix)
    #expect(void.fixes.first?.isUsable == false)
    #expect(void.statistics.fixesWithPosition == 0)
    let gsa2D = Self.decode([
      "GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGSA,A,2,04,05,09,,,,,,,,,,2.5,1.3,2.1",
    ])
    #expect(gsa2D.fixes.first?.mode == .twoDimensional)
    #expect(gsa2D.fixes.first?.altitudeMSL == nil)
  }

  @Test func conflictingPositionsInOneEpochAreSeparateFixes() {
    let result = Self.decode([
      "GPGGA,094737,5251.0085,N,00518.8151,E,1,12,0.60,-4,M,46.8,M,,",
      "GPGLL,5251.0085,N,00518.8151,E,094737,A,A",
      "GPRMC,094737,A,5251.0093,N,00518.8170,E,5.6,230.5,200818,1.4,E,A",
    ])
    #expect(result.fixes.count == 2)
  }

  @Test func badLinesAreCountedAndDoNotStopTheReplay() {
    let good = NMEAWriter.checksummed(
      "GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    let text = [
      "garbage line\n", "$GPGGA,120000,4807.038,N*00\n", "$GPGGA,1200\n", good,
      "$GPTXT,01,01,02,\u{1B}[31m*11\n",
      NMEAWriter.checksummed("GPGGA,120001,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,"),
    ].joined()
    let result = NMEALog.decode(Array(text.utf8), path: "x")
    #expect(result.fixes.count == 2)
    #expect(result.statistics.badLines[.junk] == 1)
    #expect(result.statistics.badLines[.checksumMismatch] == 1)
    #expect(result.statistics.badLines[.missingChecksum] == 1)
    #expect(result.statistics.badLines[.nonASCII] == 1)
    #expect(result.statistics.lines == 6)
  }

  @Test func strictDecodingStopsAtTheFirstBadLine() {
    var decoder = NMEADecoder(path: "x")
    let text =
      NMEAWriter.checksummed("GPGGA,120000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
      + "$GPGGA,1200*00\r\n" + NMEAWriter.checksummed("GPGGA,120001,,,,,0,00,,,M,,M,,")
    let bad = Array(text.utf8).withUnsafeBytes {
      decoder.decode(chunk: $0, stopOnBadLine: true) { _ in }
    }
    #expect(bad == NMEADecoder.BadLine(line: 2, kind: .checksumMismatch))
  }

  @Test func chunkBoundariesDoNotMatter() {
    var route = RouteSynthesizer(
      start: Self.date(2026, 6, 30, "23:58:00.000Z"),
      origin: Coordinate(latitude: -33.9, longitude: -70.6),
      seed: 3)
    route.noiseMeters = 2
    route.drive(to: Coordinate(latitude: -33.91, longitude: -70.61), speedMetersPerSecond: 10)
    let bytes = Array(NMEAWriter.log(route.fixes()).utf8)
    let whole = NMEALog.decode(bytes, path: "x").fixes
    var decoder = NMEADecoder(path: "x")
    var pieces: [Fix] = []
    var offset = 0
    var size = 1
    while offset < bytes.count {
      let end = min(bytes.count, offset + size)
      _ = bytes[offset..<end].withUnsafeBytes { decoder.decode(chunk: $0) { pieces.append($0) } }
      offset = end
      size = size % 97 + 13
    }
    decoder.finish { pieces.append($0) }
    #expect(pieces == whole)
    #expect(whole.count > 100)
  }
}
