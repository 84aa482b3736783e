import Foundation
import Testing
import Waymark

/// The thinning rule of the recorded track, fix by fix.
@Suite struct TrackThinnerTests {
  static let start = Date(timeIntervalSince1970: 1_795_939_200)  // 2026-11-29T08:00:00Z
  static let origin = Coordinate(latitude: 52.52, longitude: 13.405)

  /// A 3D fix `seconds` after the start, `meters` east of the origin.
  static func fix(
    _ seconds: Double, east meters: Double = 0, accuracy: Double? = 5,
    mode: FixMode = .threeDimensional
  ) -> Fix {
    Fix(
      time: start.addingTimeInterval(seconds), mode: mode,
      coordinate: origin.offset(by: meters, bearingDegrees: 90), altitudeMSL: 34, speed: 4,
      track: 90, horizontalError: accuracy)
  }

  /// The times (seconds after the start) and segments of the points kept from `fixes`.
  static func kept(
    _ fixes: [Fix], rule: TrackThinner.Rule = .init(), after stored: TrackPoint? = nil
  )
    -> [String]
  {
    var thinner = TrackThinner(rule: rule, resumingAfter: stored)
    return fixes.compactMap { thinner.process($0) }.map { point in
      "\(Int(point.timestamp.timeIntervalSince(start)))/\(point.segment)"
    }
  }

  @Test("the first fix is kept, then a fix 10 m from the last kept point or 30 s after it")
  func distanceOrInterval() {
    // 4 m/s: 12 m after 3 s, so every third fix; then standing still: every 30 s.
    let moving = (0...9).map { Self.fix(Double($0), east: Double($0) * 4) }
    let still = (10...75).map { Self.fix(Double($0), east: 36) }
    #expect(Self.kept(moving + still) == ["0/1", "3/1", "6/1", "9/1", "39/1", "69/1"])
  }

  @Test("the kept point carries the fix's values")
  func pointValues() throws {
    var thinner = TrackThinner()
    let kept = thinner.process(Self.fix(0, east: 0, accuracy: 7.5))
    let point = try #require(kept)
    #expect(point.timestamp == Self.start)
    #expect(point.coordinate == Self.origin.offset(by: 0, bearingDegrees: 90))
    #expect(point.altitude == 34)
    #expect(point.speed == 4)
    #expect(point.course == 90)
    #expect(point.horizontalAccuracy == 7.5)
    #expect(point.segment == 1)
  }

  @Test("more than 10 s without an accepted fix starts a new segment with its first fix")
  func gapStartsASegment() {
    let before = (0...4).map { Self.fix(Double($0), east: Double($0)) }
    // 10 s exactly is no loss; 10.5 s is.
    let exactly = Self.fix(14, east: 5)
    let after = [Self.fix(24.5, east: 6), Self.fix(25.5, east: 7)]
    #expect(Self.kept(before + [exactly] + after) == ["0/1", "24/2"])
  }

  @Test("fixes worse than the maximum accuracy are ignored and do not bridge a gap")
  func accuracyGate() {
    let fixes = [
      Self.fix(0), Self.fix(5, east: 50, accuracy: 80), Self.fix(9, east: 60, accuracy: 50),
      Self.fix(15, east: 70, accuracy: 51), Self.fix(25, east: 80, accuracy: nil),
    ]
    // 9 s is kept (50 m: at the limit); 15 s is ignored; 25 s is 16 s after 9: a new segment,
    // and a fix without an estimate is accepted.
    #expect(Self.kept(fixes) == ["0/1", "9/1", "25/2"])
  }

  @Test("fixes without a position or a time are ignored")
  func unusableFixes() {
    var noTime = Self.fix(1, east: 100)
    noTime.time = nil
    let fixes = [
      Self.fix(0), Self.fix(1, east: 100, mode: .noFix), noTime, Self.fix(2, east: 100),
    ]
    #expect(Self.kept(fixes) == ["0/1", "2/1"])
  }

  @Test("a repeated or slightly older epoch is ignored; a jump back over the gap is a new segment")
  func timeGoingBack() {
    let fixes = [
      Self.fix(20), Self.fix(20, east: 50), Self.fix(15, east: 50), Self.fix(21, east: 50),
      Self.fix(5, east: 100),
    ]
    #expect(Self.kept(fixes) == ["20/1", "21/1", "5/2"])
  }

  @Test("with both thresholds 0 every accepted fix is kept")
  func keepEverything() {
    let rule = TrackThinner.Rule(minimumDistanceMeters: 0, minimumIntervalSeconds: 0)
    let fixes = (0..<5).map { Self.fix(Double($0) * 0.1) }
    #expect(Self.kept(fixes, rule: rule).count == 5)
  }

  @Test("resuming: a later fix continues the stored point's segment within the gap")
  func resumeContinues() {
    let stored = TrackPoint(
      timestamp: Self.start, coordinate: Self.origin.offset(by: 0, bearingDegrees: 90),
      segment: 4)
    // 5 s later and 2 m away: not kept (the stored point is the last kept); 12 m: kept.
    #expect(
      Self.kept([Self.fix(5, east: 2), Self.fix(6, east: 12)], after: stored) == ["6/4"])
    // 11 s later: a fix loss, so segment 5.
    #expect(Self.kept([Self.fix(11, east: 2)], after: stored) == ["11/5"])
  }

  @Test("resuming: a first fix at or before the stored point starts afresh in the next segment")
  func resumeAfresh() {
    let stored = TrackPoint(
      timestamp: Self.start.addingTimeInterval(60), coordinate: Self.origin, segment: 2)
    let fixes = (0...6).map { Self.fix(Double($0), east: Double($0) * 4) }
    #expect(Self.kept(fixes, after: stored) == ["0/3", "3/3", "6/3"])
    // The same fixes without a stored track: the same times.
    #expect(Self.kept(fixes).map { $0.prefix { $0 != "/" } } == ["0", "3", "6"])
  }
}
