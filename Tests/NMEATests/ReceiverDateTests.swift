import Foundation
import NMEA
import Testing
import WaymarkCore

/// Receiver dates the fault campaign's clock stage plays (docs/reliability.md): a leap second,
/// midnight at 10 Hz with GGA-only epochs, and a receiver 1,024 weeks early (GPS week rollover).
@Suite struct ReceiverDateTests {
  static func times(_ lines: [String], defaultDate: UTCDate? = nil) -> [String?] {
    let text = lines.map(NMEAWriter.checksummed).joined()
    return NMEALog.decode(Array(text.utf8), path: "test.nmea", defaultDate: defaultDate)
      .fixes.map { $0.time.map(Timestamp.format) }
  }

  /// 23:59:60 is the next day's first instant, as gpsd 3.22 reports it (its TPV for a 23:59:60
  /// RMC is 00:00:00.000Z of the next day): the epoch after it has the same time, never an
  /// earlier one, and the date moves on once.
  @Test func aLeapSecondIsTheNextDaysFirstInstant() {
    let expected = [
      "2016-12-31T23:59:59.000Z", "2017-01-01T00:00:00.000Z", "2017-01-01T00:00:00.000Z",
      "2017-01-01T00:00:01.000Z",
    ]
    let withDates = Self.times([
      "GPRMC,235959,A,4807.038,N,01131.000,E,0.0,,311216,,,A",
      "GPRMC,235960,A,4807.038,N,01131.000,E,0.0,,311216,,,A",
      "GPRMC,000000,A,4807.038,N,01131.000,E,0.0,,010117,,,A",
      "GPRMC,000001,A,4807.038,N,01131.000,E,0.0,,010117,,,A",
    ])
    #expect(withDates == expected)
    let ggaOnly = Self.times([
      "GPRMC,235959,A,4807.038,N,01131.000,E,0.0,,311216,,,A",
      "GPGGA,235960,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,000001,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
    ])
    #expect(ggaOnly == expected)
  }

  /// At 10 Hz the leap second's epochs take the first second of the next day and the real first
  /// second repeats them: the decoder reports what the receiver said (the place monitor ignores a
  /// fix not later than the last one it took), and the date still advances exactly once.
  @Test func aLeapSecondAtTenHertzRepeatsTheFirstSecond() {
    let times = Self.times([
      "GPRMC,235959.900,A,4807.038,N,01131.000,E,0.0,,311216,,,A",
      "GPGGA,235960.000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,235960.900,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,000000.000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
      "GPGGA,000001.000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
    ])
    #expect(
      times == [
        "2016-12-31T23:59:59.900Z", "2017-01-01T00:00:00.000Z", "2017-01-01T00:00:00.900Z",
        "2017-01-01T00:00:00.000Z", "2017-01-01T00:00:01.000Z",
      ])
  }

  /// Ten GGA-only epochs a second across midnight after one RMC: each takes the next day from
  /// 00:00:00.000 on, none two days on.
  @Test func ggaOnlyTenHertzEpochsCrossMidnightOnce() {
    var lines = ["GPRMC,235959.800,A,4807.038,N,01131.000,E,0.0,,301126,,,A"]
    for tenth in [9, 0, 1, 2] {
      let time = tenth == 9 ? "235959.900" : String(format: "000000.%d00", tenth)
      lines.append("GPGGA,\(time),4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,")
    }
    #expect(
      Self.times(lines) == [
        "2026-11-30T23:59:59.800Z", "2026-11-30T23:59:59.900Z", "2026-12-01T00:00:00.000Z",
        "2026-12-01T00:00:00.100Z", "2026-12-01T00:00:00.200Z",
      ])
  }

  /// A receiver with the week-rollover bug reports 2007-04-15 for 2026-11-29 (7,168 days
  /// early). The decoder keeps the receiver's date (a log has no "now" to judge it by; gpsd 3.22
  /// moves such a date forward live): every fix is exactly 1,024 weeks early, in order.
  @Test func aWeekRolloverDateIsKeptAsTheReceiverSentIt() throws {
    let times = Self.times([
      "GPRMC,235959,A,4807.038,N,01131.000,E,0.0,,140407,,,A",
      "GPGGA,000000,4807.038,N,01131.000,E,1,08,0.9,545.4,M,46.9,M,,",
    ])
    #expect(times == ["2007-04-14T23:59:59.000Z", "2007-04-15T00:00:00.000Z"])
    let received = try #require(times.last.flatMap { $0 }.flatMap(Timestamp.parse))
    let truth = try #require(Timestamp.parse("2026-11-29T00:00:00.000Z"))
    #expect(truth.timeIntervalSince(received) == 1024 * 7 * 86_400)
  }
}
