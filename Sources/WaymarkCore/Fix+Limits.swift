import FoundationEssentials

extension Fix {
  /// The values a fix's fields may take. A value outside them cannot be a measurement (a
  /// broken receiver, a corrupted log line, a hostile gpsd stream) and is dropped, made
  /// unknown, where the fix enters Waymark: gpsd's messages through libgps, NMEA sentences.
  /// Every later step (monitoring, stays, MQTT, exports) can then convert them without a trap.
  ///
  /// | field | kept when |
  /// |---|---|
  /// | `time` | 1980-01-06 (GPS time's origin) to 2200-01-01 |
  /// | `coordinate` | latitude -90...90, longitude -180...180 |
  /// | `altitudeMSL` | -12 km to 50,000 km (beyond the GNSS orbits) |
  /// | `geoidSeparation` | -200 m to 200 m |
  /// | `speed` | 0 to 3,000 m/s |
  /// | `climb` | -3,000 to 3,000 m/s |
  /// | `track` | 0° to 360° |
  /// | errors (metres, m/s) | 0 to 10,000 km (m/s) |
  /// | `trackError` | 0° to 360° |
  /// | DOPs | 0 to 1,000 |
  /// | satellite counts | 0 to 1,000 |
  public enum Limits {
    /// The earliest time a fix may carry: GPS time's origin, 1980-01-06T00:00:00Z.
    public static let earliestSeconds1970 = 315_964_800.0
    /// The latest time a fix may carry (exclusive): 2200-01-01T00:00:00Z.
    public static let latestSeconds1970 = 7_258_118_400.0
    /// Altitudes, metres.
    public static let altitudeMeters: ClosedRange<Double> = -12_000...50_000_000
    /// Geoid separations, metres.
    public static let geoidSeparationMeters: ClosedRange<Double> = -200...200
    /// Speeds over ground, metres per second.
    public static let speedMetersPerSecond: ClosedRange<Double> = 0...3_000
    /// Vertical speeds, metres per second.
    public static let climbMetersPerSecond: ClosedRange<Double> = -3_000...3_000
    /// Courses and their errors, degrees.
    public static let degrees: ClosedRange<Double> = 0...360
    /// Position and speed error estimates, metres (or metres per second).
    public static let errorMeters: ClosedRange<Double> = 0...10_000_000
    /// Dilutions of precision.
    public static let dilution: ClosedRange<Double> = 0...1_000
    /// Satellite counts.
    public static let satellites: ClosedRange<Int> = 0...1_000

    /// Whether `seconds` since 1970 is within the times a fix may carry.
    @inlinable
    public static func isPlausibleTime(seconds1970 seconds: Double) -> Bool {
      seconds >= earliestSeconds1970 && seconds < latestSeconds1970
    }
  }

  /// This fix with every field outside ``Limits`` made unknown (`nil`). A fix whose fields are
  /// all within them (nearly every one) is returned as it is, after reads alone: the replay's
  /// hot path pays a few comparisons per fix, not a rewrite.
  @inlinable
  public consuming func withinLimits() -> Fix {
    if isWithinLimits { return self }
    return dropping()
  }

  /// Whether every known field is within ``Limits``.
  @inlinable
  var isWithinLimits: Bool {
    (time.map { Limits.isPlausibleTime(seconds1970: $0.timeIntervalSince1970) } ?? true)
      && (coordinate?.isValid ?? true)
      && Self.within(altitudeMSL, Limits.altitudeMeters)
      && Self.within(geoidSeparation, Limits.geoidSeparationMeters)
      && Self.within(speed, Limits.speedMetersPerSecond)
      && Self.within(climb, Limits.climbMetersPerSecond)
      && Self.within(track, Limits.degrees)
      && Self.within(horizontalError, Limits.errorMeters)
      && Self.within(verticalError, Limits.errorMeters)
      && Self.within(speedError, Limits.errorMeters)
      && Self.within(trackError, Limits.degrees)
      && Self.within(hdop, Limits.dilution) && Self.within(vdop, Limits.dilution)
      && Self.within(pdop, Limits.dilution)
      && (satellitesUsed.map { Limits.satellites.contains($0) } ?? true)
      && (satellitesVisible.map { Limits.satellites.contains($0) } ?? true)
  }

  /// Whether `value` is unknown or within `range` (NaN never is).
  @inlinable
  static func within(_ value: Double?, _ range: ClosedRange<Double>) -> Bool {
    guard let value else { return true }
    return range.contains(value)
  }

  /// The slow path of ``withinLimits()``: each field outside the limits made unknown.
  @usableFromInline
  consuming func dropping() -> Fix {
    if let time, !Limits.isPlausibleTime(seconds1970: time.timeIntervalSince1970) {
      self.time = nil
      timeOfDayMilliseconds = nil
    }
    if let coordinate, !coordinate.isValid { self.coordinate = nil }
    altitudeMSL = Self.kept(altitudeMSL, Limits.altitudeMeters)
    geoidSeparation = Self.kept(geoidSeparation, Limits.geoidSeparationMeters)
    speed = Self.kept(speed, Limits.speedMetersPerSecond)
    climb = Self.kept(climb, Limits.climbMetersPerSecond)
    track = Self.kept(track, Limits.degrees)
    horizontalError = Self.kept(horizontalError, Limits.errorMeters)
    verticalError = Self.kept(verticalError, Limits.errorMeters)
    speedError = Self.kept(speedError, Limits.errorMeters)
    trackError = Self.kept(trackError, Limits.degrees)
    hdop = Self.kept(hdop, Limits.dilution)
    vdop = Self.kept(vdop, Limits.dilution)
    pdop = Self.kept(pdop, Limits.dilution)
    if let count = satellitesUsed, !Limits.satellites.contains(count) { satellitesUsed = nil }
    if let count = satellitesVisible, !Limits.satellites.contains(count) {
      satellitesVisible = nil
    }
    return self
  }

  /// `value` when it is within `range` (NaN never is), else `nil`.
  @inlinable
  static func kept(_ value: Double?, _ range: ClosedRange<Double>) -> Double? {
    within(value, range) ? value : nil
  }
}
