import Foundation
import Testing
import WaymarkCore

@Suite struct TimestampTests {
  @Test func formatsWithMilliseconds() {
    let date = UTCDate(year: 2026, month: 11, day: 29)!.instant(millisecondsOfDay: 43_207_000)
    #expect(Timestamp.format(date) == "2026-11-29T12:00:07.000Z")
  }

  @Test func roundTripsAcrossCenturiesAndLeapDays() {
    for text in [
      "1970-01-01T00:00:00.000Z", "2000-02-29T23:59:59.999Z", "1999-12-31T23:59:59.500Z",
      "2100-03-01T00:00:00.001Z", "1969-12-31T23:59:59.000Z",
    ] {
      let date = Timestamp.parse(text)
      #expect(date != nil, "\(text)")
      #expect(date.map(Timestamp.format) == text)
    }
  }

  @Test func rejectsMalformed() {
    #expect(Timestamp.parse("2026-13-01T00:00:00Z") == nil)
    #expect(Timestamp.parse("2026-02-30T00:00:00Z") == nil)
    #expect(Timestamp.parse("2026-01-01 00:00:00Z") == nil)
    #expect(Timestamp.parse("2026-01-01T25:00:00Z") == nil)
  }

  @Test func fractionsOfAnyLengthAreTruncatedToMilliseconds() {
    let reference = Timestamp.parse("2026-11-29T12:00:07.999Z")
    #expect(reference != nil)
    #expect(Timestamp.parse("2026-11-29T12:00:07.9999999999999999999999999Z") == reference)
    #expect(
      Timestamp.parse("2026-11-29T12:00:07.5Z") == Timestamp.parse("2026-11-29T12:00:07.500Z"))
    #expect(Timestamp.parse("2026-11-29T12:00:07.Z") == nil)
    #expect(Timestamp.parse("2026-11-29T12:00:07.12x4Z") == nil)
  }

  @Test func exportTimesWithZonesAndSpacesAreReadAsUTC() {
    let reference = Timestamp.parse("2024-05-01T08:00:00.250Z")
    #expect(reference != nil)
    for text in [
      "2024-05-01T10:00:00.250+02:00", "2024-05-01T10:00:00.250+0200", "2024-05-01T10:00:00,250+02",
      "2024-05-01 08:00:00.250", "2024-05-01T08:00:00.2509z", "2024-05-01T03:30:00.250-04:30",
    ] {
      #expect(Timestamp.parseISO8601(text) == reference, "\(text)")
    }
    for text in [
      "2024-05-01T10:00:00+2", "2024-05-01T10:00:00+24:00", "2024-05-01T10:00:00+02:60",
      "2024-05-01T10:00:00Zx", "2024-05-01T10:00:00.", "2024-05-01T10:00", "9999-99-99T99:99:99Z",
    ] {
      #expect(Timestamp.parseISO8601(text) == nil, "\(text)")
    }
    // The strict form keeps refusing what is not `yyyy-mm-ddThh:mm:ss[.fff]Z`.
    #expect(Timestamp.parse("2024-05-01T10:00:00.250+02:00") == nil)
    #expect(Timestamp.parse("2024-05-01T10:00:00,250Z") == nil)
  }

  @Test func calendarDaysMatchFoundation() {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    for days in stride(from: -40_000, through: 60_000, by: 97) {
      let date = UTCDate(daysSinceEpoch: days)
      let parts = calendar.dateComponents(
        [.year, .month, .day], from: Date(timeIntervalSince1970: Double(days) * 86_400))
      #expect(date.year == parts.year && date.month == parts.month && date.day == parts.day)
      #expect(date.daysSinceEpoch == days)
    }
  }

  @Test func nextDayCrossesMonthAndYearEnds() {
    #expect(UTCDate(year: 2025, month: 12, day: 31)!.next == UTCDate(year: 2026, month: 1, day: 1))
    #expect(UTCDate(year: 2024, month: 2, day: 28)!.next == UTCDate(year: 2024, month: 2, day: 29))
    #expect(UTCDate(year: 2023, month: 2, day: 28)!.next == UTCDate(year: 2023, month: 3, day: 1))
  }
}
