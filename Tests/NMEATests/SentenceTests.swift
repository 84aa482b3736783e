import NMEA
import Testing
import WaymarkCore

/// One test per sentence type, on sentences written by hand (checksums computed here).
@Suite struct SentenceTests {
  static func parse(_ body: String) -> NMEADecoder.ParsedLine {
    NMEADecoder.parseLine(NMEAWriter.checksummed(body))
  }

  @Test func gga() throws {
    let parsed = Self.parse(
      "GNGGA,132819.60,4134.49795459,N,09345.03431408,W,4,10,0.9,278.161,M,-31.442,M,6.6,0133")
    guard case .gga(let gga) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gga.timeOfDay == ((13 * 60 + 28) * 60 + 19) * 1000 + 600)
    #expect(abs(gga.latitude! - (41 + 34.49795459 / 60)) < 1e-12)
    #expect(abs(gga.longitude! + (93 + 45.03431408 / 60)) < 1e-12)
    #expect(gga.quality == 4)
    #expect(gga.satellitesUsed == 10)
    #expect(gga.hdop == 0.9)
    #expect(gga.altitudeMSL == 278.161)
    #expect(gga.geoidSeparation == -31.442)
    #expect(gga.differentialAge == 6.6)
    #expect(gga.differentialStation == "0133")
    #expect(!parsed.hasMalformedField)
  }

  @Test func ggaEmptyFieldsAreNilNotZero() throws {
    let parsed = Self.parse("GPGGA,235959.00,,,,,0,00,,,M,,M,,")
    guard case .gga(let gga) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gga.latitude == nil && gga.longitude == nil)
    #expect(gga.quality == 0)
    #expect(gga.hdop == nil && gga.altitudeMSL == nil && gga.geoidSeparation == nil)
  }

  @Test func rmcWithNMEA41Fields() throws {
    let parsed = Self.parse("GNRMC,001031.00,A,3348.8320,S,15117.3990,E,0.011,,010226,11.2,W,D,V")
    guard case .rmc(let rmc) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(rmc.status == UInt8(ascii: "A"))
    #expect(rmc.latitude! < -33.8 && rmc.longitude! > 151.2)
    #expect(rmc.speedKnots == 0.011)
    #expect(rmc.course == nil)
    #expect(rmc.date == UTCDate(year: 2026, month: 2, day: 1))
    #expect(rmc.magneticVariation == -11.2)
    #expect(rmc.mode == UInt8(ascii: "D"))
    #expect(rmc.navigationalStatus == UInt8(ascii: "V"))
  }

  @Test func gns() throws {
    let parsed = Self.parse("GNGNS,014035.00,4332.69262,S,17235.48549,E,RR,13,0.9,25.63,11.24,,,S")
    guard case .gns(let gns) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gns.modes == Array("RR".utf8))
    #expect(gns.satellitesUsed == 13)
    #expect(gns.altitudeMSL == 25.63)
    #expect(gns.geoidSeparation == 11.24)
    #expect(gns.navigationalStatus == UInt8(ascii: "S"))
    #expect(gns.latitude! < 0)
  }

  @Test func gll() throws {
    let parsed = Self.parse("GPGLL,4916.45,N,12311.12,W,225444,A,A")
    guard case .gll(let gll) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(abs(gll.latitude! - (49 + 16.45 / 60)) < 1e-12)
    #expect(abs(gll.longitude! + (123 + 11.12 / 60)) < 1e-12)
    #expect(gll.timeOfDay == (22 * 3600 + 54 * 60 + 44) * 1000)
    #expect(gll.status == UInt8(ascii: "A"))
  }

  @Test func vtgModernAndLegacy() throws {
    let modern = Self.parse("GPVTG,054.7,T,034.4,M,005.5,N,010.2,K,A")
    guard case .vtg(let vtg) = modern.sentence else { throw ParseFailure(modern) }
    #expect(vtg.courseTrue == 54.7 && vtg.courseMagnetic == 34.4)
    #expect(vtg.speedKnots == 5.5 && vtg.speedKilometersPerHour == 10.2)
    #expect(vtg.mode == UInt8(ascii: "A"))
    let legacy = Self.parse("GPVTG,054.7,034.4,005.5,010.2")
    guard case .vtg(let old) = legacy.sentence else { throw ParseFailure(legacy) }
    #expect(old.courseTrue == 54.7 && old.speedKnots == 5.5 && old.speedKilometersPerHour == 10.2)
  }

  @Test func gsaWithSystemID() throws {
    let parsed = Self.parse("GNGSA,A,3,05,13,15,18,23,24,,,,,,,1.73,0.97,1.43,1")
    guard case .gsa(let gsa) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gsa.fixType == 3)
    #expect(gsa.satellites == [5, 13, 15, 18, 23, 24])
    #expect(gsa.pdop == 1.73 && gsa.hdop == 0.97 && gsa.vdop == 1.43)
    #expect(gsa.systemID == 1)
  }

  @Test func gsaWithMoreThanTwelveSatellites() throws {
    let prns = (1...16).map { String(format: "%02d", $0) }.joined(separator: ",")
    let parsed = Self.parse("GPGSA,A,3,\(prns),1.5,0.8,1.2")
    guard case .gsa(let gsa) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gsa.satellites.count == 16)
    #expect(gsa.pdop == 1.5 && gsa.hdop == 0.8 && gsa.vdop == 1.2)
  }

  @Test func gsvWithSignalID() throws {
    let parsed = Self.parse("GAGSV,2,1,07,02,21,311,31,07,56,063,41,08,10,128,,27,65,275,45,7")
    guard case .gsv(let gsv) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gsv.messageCount == 2 && gsv.messageNumber == 1 && gsv.satellitesInView == 7)
    #expect(gsv.satellites.count == 4)
    #expect(gsv.satellites[2].snr == nil)
    #expect(gsv.satellites[3].azimuth == 275)
    #expect(gsv.signalID == 7)
  }

  @Test func gst() throws {
    let parsed = Self.parse("GPGST,172814.0,0.006,0.023,0.020,273.6,0.023,0.020,0.031")
    guard case .gst(let gst) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(gst.rangeRMS == 0.006 && gst.orientation == 273.6)
    #expect(gst.latitudeError == 0.023 && gst.longitudeError == 0.020)
    #expect(gst.altitudeError == 0.031)
  }

  @Test func zda() throws {
    let parsed = Self.parse("GPZDA,201530.00,04,07,2002,00,00")
    guard case .zda(let zda) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(zda.date == UTCDate(year: 2002, month: 7, day: 4))
    #expect(zda.timeOfDay == (20 * 3600 + 15 * 60 + 30) * 1000)
  }

  /// A signed integer field keeps its sign: the zone of a ZDA west of Greenwich.
  @Test func zdaZoneWestOfGreenwichIsNegative() throws {
    let west = Self.parse("GPZDA,201530.00,04,07,2002,-05,30")
    guard case .zda(let zda) = west.sentence else { throw ParseFailure(west) }
    #expect(zda.zoneHours == -5 && zda.zoneMinutes == 30)
    let east = Self.parse("GPZDA,201530.00,04,07,2002,+05,00")
    guard case .zda(let eastZDA) = east.sentence else { throw ParseFailure(east) }
    #expect(eastZDA.zoneHours == 5)
  }

  @Test func txtProprietaryAndUnsupported() throws {
    let text = Self.parse("GPTXT,01,01,02,ANTSTATUS=OK")
    guard case .txt(let txt) = text.sentence else { throw ParseFailure(text) }
    #expect(txt.text == "ANTSTATUS=OK")
    #expect(Self.parse("PGRME,15.0,M,45.0,M,25.0,M").sentence == .proprietary("PGRME"))
    #expect(Self.parse("SDDBT,7.8,f,2.4,M,1.3,F").sentence == .unsupported("SDDBT"))
  }

  @Test func malformedFieldIsUnknownAndFlagged() throws {
    let parsed = Self.parse("GPRMC,225446,A,4916.45,N,12311.12,W,000.5,054.7,2208-1,020.3,E")
    guard case .rmc(let rmc) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(rmc.date == nil)
    #expect(rmc.latitude != nil)
    #expect(parsed.hasMalformedField)
  }

  /// Found by the fuzzer: a longitude field `0045510.4092` (455° 10.4') was taken as 455.17°.
  /// An angle beyond 90° N/S or 180° E/W is unknown and flagged, like any malformed field.
  @Test(arguments: [
    ("GPRMC,075020.000,A,4545.621889,N,0045510.4092,E,0.0,,291126,,,A", false, true),
    ("GPRMC,075020.000,A,9100.000000,N,00450.153556,E,0.0,,291126,,,A", true, false),
    ("GPRMC,075020.000,A,9000.000000,S,18000.000000,W,0.0,,291126,,,A", false, false),
  ])
  func anglesBeyondThePolesOrTheAntimeridianAreMalformed(
    sentence: String, latitudeBad: Bool, longitudeBad: Bool
  ) throws {
    let parsed = Self.parse(sentence)
    guard case .rmc(let rmc) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect((rmc.latitude == nil) == latitudeBad)
    #expect((rmc.longitude == nil) == longitudeBad)
    #expect(parsed.hasMalformedField == (latitudeBad || longitudeBad))
    if !latitudeBad && !longitudeBad {
      #expect(rmc.latitude == -90 && rmc.longitude == -180)
    }
  }

  /// Found by the fuzzer: 18 fraction digits in an angle made a bound check overflow and trap.
  @Test func anAngleWithEighteenFractionDigitsIsRead() throws {
    let parsed = Self.parse(
      "GPGGA,204138.07,.900004444444444444,N,000.0000,E,1,05,1.0,0.0,M,0.0,M,,")
    guard case .gga(let gga) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(abs(gga.latitude! - 0.900004444444444444 / 60) < 1e-12)
    #expect(!parsed.hasMalformedField)
  }

  /// Found by the fuzzer: a ZDA year of 14 digits overflowed the instant's arithmetic.
  @Test func aZDAYearBeyondFourDigitsIsMalformed() throws {
    let parsed = Self.parse("GPZDA,010005.00,08,07,20201777777770,+00,00")
    guard case .zda(let zda) = parsed.sentence else { throw ParseFailure(parsed) }
    #expect(zda.date == nil)
    #expect(parsed.hasMalformedField)
    #expect(UTCDate(year: 9999, month: 12, day: 31) != nil)
    #expect(UTCDate(year: 10000, month: 1, day: 1) == nil)
  }

  @Test func talkers() {
    #expect(Talker(UInt8(ascii: "G"), UInt8(ascii: "B")) == .beidou)
    #expect(Talker(UInt8(ascii: "B"), UInt8(ascii: "D")) == .beidou)
    #expect(Talker(UInt8(ascii: "Q"), UInt8(ascii: "Z")) == .qzss)
    #expect(Talker(UInt8(ascii: "G"), UInt8(ascii: "Q")) == .qzss)
    #expect(Talker(UInt8(ascii: "G"), UInt8(ascii: "I")) == .navic)
    #expect(Talker(UInt8(ascii: "G"), UInt8(ascii: "A")) == .galileo)
    #expect(Talker(UInt8(ascii: "G"), UInt8(ascii: "L")) == .glonass)
    #expect(Talker(UInt8(ascii: "G"), UInt8(ascii: "N")) == .gnss)
    #expect(!Talker(UInt8(ascii: "I"), UInt8(ascii: "N")).isGNSS)
  }
}

struct ParseFailure: Error, CustomStringConvertible {
  var parsed: NMEADecoder.ParsedLine
  init(_ parsed: NMEADecoder.ParsedLine) { self.parsed = parsed }
  var description: String { "unexpected parse result: \(parsed)" }
}
