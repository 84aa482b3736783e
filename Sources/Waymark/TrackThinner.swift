import FoundationEssentials

/// Decides which fixes become points of the recorded track, and where its segments break.
///
/// A value with no clock and no I/O: the same fixes always give the same points, so
/// `waymarkd` and `waymark replay --store` (which both run it) record the same track from the
/// same fixes. Only fix times are used.
///
/// **The rule.**
/// 1. A fix is *accepted* when it is usable (a time, mode 2D or 3D, a valid coordinate) and its
///    horizontal accuracy is known and at most ``Rule/maximumAccuracyMeters``, or unknown.
///    Other fixes are ignored: they neither make points nor count as fixes seen.
/// 2. An accepted fix no later than the previous accepted one, by at most ``Rule/gapSeconds``,
///    is a repeat (gpsd reporting an epoch again) and is ignored.
/// 3. A *fix loss* is more than ``Rule/gapSeconds`` of fix time between two accepted fixes (or
///    a jump back in time by more than that). The first accepted fix after a loss, like the
///    very first one, is always kept and starts a new segment.
/// 4. Any other accepted fix is kept when it is at least ``Rule/minimumDistanceMeters`` from
///    the last kept point, or at least ``Rule/minimumIntervalSeconds`` after it.
///
/// With both thresholds 0 every accepted fix is kept (what `gpxlogger` does).
///
/// **Resuming.** Created with the last point already stored, the thinner continues from it
/// when the first accepted fix is later (a restarted daemon, the next log of a drive): that
/// point counts as the last kept and the last accepted fix, so a short restart continues its
/// segment. A first fix at or before it (the same log replayed again) starts afresh in the next
/// segment number, and gives the same points as the first time.
public struct TrackThinner: Sendable {
  /// The thresholds of the rule.
  public struct Rule: Sendable, Hashable {
    /// Keep a fix this far from the last kept point, metres (default 10).
    public var minimumDistanceMeters: Double
    /// Keep a fix this long after the last kept point, seconds of fix time (default 30).
    public var minimumIntervalSeconds: Double
    /// More than this many seconds without an accepted fix is a fix loss (default 10).
    public var gapSeconds: Double
    /// Fixes with a worse horizontal accuracy are not recorded, metres (default 50).
    public var maximumAccuracyMeters: Double

    /// Creates a rule; the defaults are those of `waymarkd`.
    public init(
      minimumDistanceMeters: Double = 10, minimumIntervalSeconds: Double = 30,
      gapSeconds: Double = 10, maximumAccuracyMeters: Double = 50
    ) {
      self.minimumDistanceMeters = minimumDistanceMeters
      self.minimumIntervalSeconds = minimumIntervalSeconds
      self.gapSeconds = gapSeconds
      self.maximumAccuracyMeters = maximumAccuracyMeters
    }
  }

  /// The thresholds; a change applies from the next fix on.
  public var rule: Rule
  private var stored: TrackPoint?
  private var lastKept: TrackPoint?
  private var lastAccepted: Date?
  /// The segment of the last point kept (0 before any).
  public private(set) var segment: Int

  /// Creates a thinner.
  ///
  /// - Parameters:
  ///   - rule: the thresholds.
  ///   - stored: the last point of the track already recorded, to resume from (see above).
  public init(rule: Rule = Rule(), resumingAfter stored: TrackPoint? = nil) {
    self.rule = rule
    self.stored = stored
    segment = stored?.segment ?? 0
  }

  /// The point to record for `fix`, or `nil` when the rule drops it.
  public mutating func process(_ fix: Fix) -> TrackPoint? {
    guard fix.isUsable, let time = fix.time else { return nil }
    if let accuracy = fix.horizontalError, !(accuracy <= rule.maximumAccuracyMeters) {
      return nil
    }
    if let resume = stored {
      stored = nil
      if time > resume.timestamp {
        lastKept = resume
        lastAccepted = resume.timestamp
      }
    }
    guard let previous = lastAccepted, let kept = lastKept else {
      return keep(fix, newSegment: true)
    }
    let elapsed = time.timeIntervalSince(previous)
    if elapsed <= 0 && -elapsed <= rule.gapSeconds { return nil }
    if abs(elapsed) > rule.gapSeconds { return keep(fix, newSegment: true) }
    lastAccepted = time
    guard
      let coordinate = fix.coordinate,
      coordinate.distance(to: kept.coordinate) >= rule.minimumDistanceMeters
        || time.timeIntervalSince(kept.timestamp) >= rule.minimumIntervalSeconds
    else { return nil }
    return keep(fix, newSegment: false)
  }

  private mutating func keep(_ fix: Fix, newSegment: Bool) -> TrackPoint? {
    guard let point = TrackPoint(fix, segment: newSegment ? segment + 1 : segment) else {
      return nil
    }
    segment = point.segment
    lastKept = point
    lastAccepted = point.timestamp
    return point
  }
}
