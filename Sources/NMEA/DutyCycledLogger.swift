import FoundationEssentials
import WaymarkCore

/// What a phone's logger (GPSLogger, OwnTracks, a tracking app) writes of synthesized fixes:
/// it sleeps while the device stands still and wakes when it moves, samples at its own
/// interval, reports no speed, and claims an HDOP of 1.0 however far its positions wander.
///
/// Applied to the exact fixes of a ``RouteSynthesizer`` (speed 0 at a stop):
/// - a fix is logged once every ``intervalSeconds`` of fix time (1 s: continuous; 30 s:
///   sample-and-sleep);
/// - after ``sleepAfterStillSeconds`` of fix time at rest the logger sleeps: no fix until the
///   device has moved for ``wakeAfterMovingSeconds`` (the motion sensor wakes it, the receiver
///   needs a fix), so the first fix after the gap is already that far along the way out;
/// - ``restingNoise``, when set, is laid over the stops first (a position wandering tens of
///   metres);
/// - every logged fix loses its speed and course and reports HDOP ``hdop`` and no error
///   estimate (NMEA without GST: the error is estimated from the HDOP).
///
/// ```swift
/// let fixes = DutyCycledLogger(sleepAfterStillSeconds: 60).apply(to: route.fixes())
/// ```
///
/// The same fixes and settings always give the same result.
public struct DutyCycledLogger: Sendable, Hashable {
  /// Seconds of fix time at rest after which the logger stops logging (`.infinity`: never).
  public var sleepAfterStillSeconds: Double
  /// Seconds of fix time the device moves before the logger logs again.
  public var wakeAfterMovingSeconds: Double
  /// Seconds of fix time between two logged fixes.
  public var intervalSeconds: Double
  /// HDOP every logged fix reports.
  public var hdop: Double
  /// What a receiver at rest reports, laid over the stops before logging (`nil`: none).
  public var restingNoise: StandstillNoise?

  /// Creates a logger.
  ///
  /// - Parameters:
  ///   - sleepAfterStillSeconds: seconds at rest before it sleeps.
  ///   - wakeAfterMovingSeconds: seconds of motion before its first fix after sleeping.
  ///   - intervalSeconds: seconds between logged fixes.
  ///   - hdop: the HDOP it reports.
  ///   - restingNoise: the noise of a receiver at rest, laid over the stops.
  public init(
    sleepAfterStillSeconds: Double = 60, wakeAfterMovingSeconds: Double = 20,
    intervalSeconds: Double = 1, hdop: Double = 1.0, restingNoise: StandstillNoise? = nil
  ) {
    self.sleepAfterStillSeconds = sleepAfterStillSeconds
    self.wakeAfterMovingSeconds = wakeAfterMovingSeconds
    self.intervalSeconds = intervalSeconds
    self.hdop = hdop
    self.restingNoise = restingNoise
  }

  /// The fixes the logger writes of `fixes` (exact fixes: speed 0 at rest, in time order).
  public func apply(to fixes: [Fix]) -> [Fix] {
    let noisy = restingNoise?.apply(to: fixes) ?? fixes
    var logged: [Fix] = []
    var stillSince: Date?
    var movingSince: Date?
    var asleep = false
    var lastLogged: Date?
    for (exact, fix) in zip(fixes, noisy) {
      guard let time = exact.time else { continue }
      if exact.speed == 0 {
        stillSince = stillSince ?? time
        movingSince = nil
        if let since = stillSince, time.timeIntervalSince(since) > sleepAfterStillSeconds {
          asleep = true
        }
      } else {
        stillSince = nil
        movingSince = movingSince ?? time
        if asleep, let since = movingSince,
          time.timeIntervalSince(since) >= wakeAfterMovingSeconds
        {
          asleep = false
        }
      }
      guard !asleep else { continue }
      if let lastLogged, time.timeIntervalSince(lastLogged) < intervalSeconds - 1e-6 { continue }
      lastLogged = time
      var written = fix
      written.speed = nil
      written.track = nil
      written.hdop = hdop
      written.horizontalError = nil
      written.verticalError = nil
      logged.append(written)
    }
    return logged
  }
}
