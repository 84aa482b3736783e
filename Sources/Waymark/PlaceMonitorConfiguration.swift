import FoundationEssentials
import Glibc
import WaymarkCore

extension PlaceMonitor {
  /// The detection defaults; each place may override some of them (`Place.detection`).
  ///
  /// The "Detection" section of docs/guide/places-and-visits.md explains every default and the
  /// reasoning behind it.
  public struct Configuration: Sendable, Hashable, Codable {
    /// Worst horizontal accuracy, metres, of a fix that may change a place's state. Worse fixes
    /// are ignored entirely. Default 50 m: OwnTracks users settle on ignoring fixes worse than
    /// 50 m.
    public var maximumAccuracyMeters: Double
    /// Accuracy assumed, metres, for a fix that reports none. Default 25 m: half the gate, so
    /// such fixes count but need a clear margin to prove a departure.
    public var assumedAccuracyMeters: Double
    /// The exit radius is `max(radius × exitRadiusFactor, radius + exitMarginMeters)` unless a
    /// place sets its own. Default factor 1.2.
    public var exitRadiusFactor: Double
    /// Minimum width of the hysteresis band between enter and exit radius, metres. Default 30 m,
    /// three times the 10 m noise of a consumer receiver under open sky.
    public var exitMarginMeters: Double
    /// Consecutive accepted fixes needed to confirm an arrival or a departure. Default 3 (two
    /// seconds at 1 Hz; a single stray fix never fires).
    public var confirmations: Int
    /// Seconds of fix time the new state must also have held before it is confirmed. Default 0:
    /// the confirmations alone decide (set 120 for OwnTracks' two-minute hold).
    public var dwellSeconds: Double
    /// A gap between accepted fixes longer than this, seconds, is a fix loss: no pass-through is
    /// interpolated across it and a departure first seen after it has rule `fix-loss`. A gap is
    /// never a departure by itself. Default 30 s (450 m at 15 m/s — beyond that a straight line
    /// between fixes is a guess).
    public var fixLossSeconds: Double
    /// Entry takes accuracy into account: an inside fix counts towards confirming an arrival
    /// only when `distance + entryAccuracyFactor × accuracy ≤ radius` (at 0.5, about 80 % of its
    /// error circle lies inside). The arrival is still dated by the first fix inside the
    /// radius. Default 0.5; 0 restores the plain "inside the radius" count.
    public var entryAccuracyFactor: Double
    /// Speed, metres per second, that bounds the travel between two fixes when either fix
    /// reports no speed over ground, or across a fix loss. Default 70 m/s (252 km/h); raise it
    /// for trains or aircraft.
    public var maximumSpeedMetersPerSecond: Double
    /// Added to the larger of the two reported speeds (Doppler speed over ground) before
    /// bounding the travel between two fixes, metres per second. Default 3 m/s: speed noise and
    /// acceleration within a second or two.
    public var speedToleranceMetersPerSecond: Double
    /// How many times the sum of the two accuracies a displacement may exceed the travel that
    /// time and speed allow and still be plausible. Default 1.5.
    public var jumpAccuracyFactor: Double
    /// A run of suspect fixes (implausible against the last accepted fix) that is consistent
    /// with itself is accepted once it has lasted this many seconds of fix time (and has at
    /// least `confirmations` fixes); it is then fed to the places in order, so nothing it shows
    /// is lost. Default 20 s: multipath bursts last 5–15 s.
    public var suspectHoldSeconds: Double

    /// Creates a configuration; every parameter has the documented default.
    public init(
      maximumAccuracyMeters: Double = 50,
      assumedAccuracyMeters: Double = 25,
      exitRadiusFactor: Double = 1.2,
      exitMarginMeters: Double = 30,
      confirmations: Int = 3,
      dwellSeconds: Double = 0,
      fixLossSeconds: Double = 30,
      entryAccuracyFactor: Double = 0.5,
      maximumSpeedMetersPerSecond: Double = 70,
      speedToleranceMetersPerSecond: Double = 3,
      jumpAccuracyFactor: Double = 1.5,
      suspectHoldSeconds: Double = 20
    ) {
      self.maximumAccuracyMeters = maximumAccuracyMeters
      self.assumedAccuracyMeters = assumedAccuracyMeters
      self.exitRadiusFactor = exitRadiusFactor
      self.exitMarginMeters = exitMarginMeters
      self.confirmations = confirmations
      self.dwellSeconds = dwellSeconds
      self.fixLossSeconds = fixLossSeconds
      self.entryAccuracyFactor = entryAccuracyFactor
      self.maximumSpeedMetersPerSecond = maximumSpeedMetersPerSecond
      self.speedToleranceMetersPerSecond = speedToleranceMetersPerSecond
      self.jumpAccuracyFactor = jumpAccuracyFactor
      self.suspectHoldSeconds = suspectHoldSeconds
    }

    private enum CodingKeys: String, CodingKey {
      case maximumAccuracyMeters, assumedAccuracyMeters, exitRadiusFactor, exitMarginMeters
      case confirmations, dwellSeconds, fixLossSeconds, entryAccuracyFactor
      case maximumSpeedMetersPerSecond, speedToleranceMetersPerSecond, jumpAccuracyFactor
      case suspectHoldSeconds
    }

    /// Decodes a configuration; a key that is absent (one saved before it existed) takes its
    /// default.
    public init(from decoder: any Decoder) throws {
      let container = try decoder.container(keyedBy: CodingKeys.self)
      let defaults = Configuration()
      func value<T: Decodable>(_ key: CodingKeys, _ fallback: T) throws -> T {
        try container.decodeIfPresent(T.self, forKey: key) ?? fallback
      }
      self.init(
        maximumAccuracyMeters: try value(.maximumAccuracyMeters, defaults.maximumAccuracyMeters),
        assumedAccuracyMeters: try value(.assumedAccuracyMeters, defaults.assumedAccuracyMeters),
        exitRadiusFactor: try value(.exitRadiusFactor, defaults.exitRadiusFactor),
        exitMarginMeters: try value(.exitMarginMeters, defaults.exitMarginMeters),
        confirmations: try value(.confirmations, defaults.confirmations),
        dwellSeconds: try value(.dwellSeconds, defaults.dwellSeconds),
        fixLossSeconds: try value(.fixLossSeconds, defaults.fixLossSeconds),
        entryAccuracyFactor: try value(.entryAccuracyFactor, defaults.entryAccuracyFactor),
        maximumSpeedMetersPerSecond: try value(
          .maximumSpeedMetersPerSecond, defaults.maximumSpeedMetersPerSecond),
        speedToleranceMetersPerSecond: try value(
          .speedToleranceMetersPerSecond, defaults.speedToleranceMetersPerSecond),
        jumpAccuracyFactor: try value(.jumpAccuracyFactor, defaults.jumpAccuracyFactor),
        suspectHoldSeconds: try value(.suspectHoldSeconds, defaults.suspectHoldSeconds))
    }

    /// The parameters in force for `place`: its overrides, else these defaults.
    public func rules(for place: Place) -> Rules {
      rules(enterRadiusMeters: max(0, place.radiusMeters), overrides: place.detection)
    }

    /// The parameters for a circle of `enter` metres with `overrides`.
    func rules(
      enterRadiusMeters enter: Double,
      overrides: PlaceDetectionOverrides = PlaceDetectionOverrides()
    ) -> Rules {
      let defaultExit = max(enter * exitRadiusFactor, enter + exitMarginMeters)
      return Rules(
        enterRadiusMeters: enter,
        exitRadiusMeters: overrides.exitRadiusMeters.map { max($0, enter) } ?? defaultExit,
        maximumAccuracyMeters: overrides.maximumAccuracyMeters ?? maximumAccuracyMeters,
        confirmations: max(1, overrides.confirmations ?? confirmations),
        dwellSeconds: max(0, overrides.dwellSeconds ?? dwellSeconds),
        fixLossSeconds: fixLossSeconds,
        entryAccuracyFactor: max(0, entryAccuracyFactor)
      )
    }

    /// How far the move from `start` to `end` exceeds what the elapsed time, the reported
    /// speeds and the two error estimates explain: the displacement divided by the largest
    /// plausible one, `(speed bound) × Δt + jumpAccuracyFactor × (a₀ + a₁)`. At most 1 is
    /// plausible. The speed bound is the larger reported speed plus the tolerance when both
    /// fixes report one and no fix loss separates them, else `maximumSpeedMetersPerSecond`.
    func jumpRatio(from start: Sample, to end: Sample) -> Double {
      let allowed = plausibleJumpMeters(from: start, to: end)
      guard allowed.isFinite else { return 0 }
      return start.coordinate.distance(to: end.coordinate) / allowed
    }

    /// The largest plausible displacement from `start` to `end`, metres (at least 1; may be
    /// infinite): the denominator of `jumpRatio(from:to:)`.
    func plausibleJumpMeters(from start: Sample, to end: Sample) -> Double {
      let elapsed = end.time.timeIntervalSince(start.time)
      let allowed =
        speedBound(start, end, elapsed: elapsed) * elapsed + jumpAccuracyFactor
        * (start.accuracyMeters + end.accuracyMeters)
      return allowed.isNaN ? .infinity : max(allowed, 1)
    }

    /// Whether the straight segment from `start` to `end` is one a receiver could have driven:
    /// its length at most `(speed bound) × Δt + a₀ + a₁` (both errors counted once). The test a
    /// pass-through segment must pass.
    func isPlausibleSegment(from start: Sample, to end: Sample) -> Bool {
      let elapsed = end.time.timeIntervalSince(start.time)
      let allowed =
        speedBound(start, end, elapsed: elapsed) * elapsed + start.accuracyMeters
        + end.accuracyMeters
      return !(start.coordinate.distance(to: end.coordinate) > allowed)
    }

    /// The course test, for two fixes that both move (at least `minimumCourseSpeed`) with a
    /// reported course and no fix loss between them: the displacement `(east, north)` metres
    /// from `start` to `end` against the one the two velocities predict (their mean times
    /// `Δt`). The residual is allowed `(tolerance + v × sin(Δθ / 2)) × Δt +
    /// jumpAccuracyFactor × (a₀ + a₁)`, `Δθ` the change of course (a straight road allows
    /// almost nothing sideways; a U-turn allows the whole speed bound). Returns the residual
    /// over its allowance, 0 when the test does not apply.
    func courseRatio(from start: Sample, to end: Sample, east: Double, north: Double) -> Double {
      courseRatio(
        from: start, heading: Self.heading(of: start), to: end, heading: Self.heading(of: end),
        east: east, north: north)
    }

    /// `courseRatio(from:to:east:north:)` with the two fixes' headings already computed
    /// (`heading(of:)`), so that a fix's sine and cosine are taken once.
    @inline(__always)
    func courseRatio(
      from start: Sample, heading h0: Heading?, to end: Sample, heading h1: Heading?,
      east: Double, north: Double
    ) -> Double {
      guard let h0, let h1, let v0 = start.speedMetersPerSecond,
        let v1 = end.speedMetersPerSecond
      else { return 0 }
      let elapsed = end.time.timeIntervalSince(start.time)
      guard elapsed <= fixLossSeconds else { return 0 }
      let dx = east - (v0 * h0.east + v1 * h1.east) / 2 * elapsed
      let dy = north - (v0 * h0.north + v1 * h1.north) / 2 * elapsed
      // sin(Δθ / 2) from the cosine of the change of course, the dot product.
      let halfTurnSine = (max(0, 1 - (h0.east * h1.east + h0.north * h1.north)) / 2).squareRoot()
      let allowed =
        (speedToleranceMetersPerSecond + max(v0, v1) * halfTurnSine) * elapsed
        + jumpAccuracyFactor * (start.accuracyMeters + end.accuracyMeters)
      guard allowed.isFinite else { return 0 }
      return (dx * dx + dy * dy).squareRoot() / max(allowed, 1)
    }

    /// A fix's direction of travel as a unit vector (east, north), when it moves at least
    /// `minimumCourseSpeed` and reports a course; else `nil` (the course test does not apply).
    static func heading(of sample: Sample) -> Heading? {
      guard let speed = sample.speedMetersPerSecond, speed >= minimumCourseSpeed,
        let course = sample.courseDegrees
      else { return nil }
      let radians = course * .pi / 180
      return Heading(east: sin(radians), north: cos(radians))
    }

    /// A unit vector of a direction of travel.
    struct Heading {
      var east: Double
      var north: Double
    }

    /// Below this speed, metres per second, a receiver's course is noise: the course test does
    /// not apply.
    static let minimumCourseSpeed = 2.0

    private func speedBound(_ start: Sample, _ end: Sample, elapsed: Double) -> Double {
      if elapsed <= fixLossSeconds, let v0 = start.speedMetersPerSecond,
        let v1 = end.speedMetersPerSecond
      {
        return max(v0, v1) + speedToleranceMetersPerSecond
      }
      return maximumSpeedMetersPerSecond
    }
  }

  /// The resolved detection parameters of one place.
  public struct Rules: Sendable, Hashable, Codable {
    /// Radius, metres, within which a fix counts as inside (the place radius).
    public var enterRadiusMeters: Double
    /// Radius, metres, that a fix's error circle must lie wholly outside of to count as gone.
    public var exitRadiusMeters: Double
    /// Worst accepted horizontal accuracy, metres.
    public var maximumAccuracyMeters: Double
    /// Consecutive fixes needed to confirm a change.
    public var confirmations: Int
    /// Seconds of fix time a change must hold to be confirmed.
    public var dwellSeconds: Double
    /// Longest gap between fixes, seconds, that is not a fix loss.
    public var fixLossSeconds: Double
    /// An inside fix confirms an arrival only when `distance + entryAccuracyFactor × accuracy`
    /// is within the enter radius.
    public var entryAccuracyFactor: Double = 0.5
  }
}

extension PlaceMonitor.Rules {
  private enum CodingKeys: String, CodingKey {
    case enterRadiusMeters, exitRadiusMeters, maximumAccuracyMeters, confirmations
    case dwellSeconds, fixLossSeconds, entryAccuracyFactor
  }

  /// Decodes rules; rules saved before `entryAccuracyFactor` existed get its default, 0.5.
  public init(from decoder: any Decoder) throws {
    let container = try decoder.container(keyedBy: CodingKeys.self)
    self.init(
      enterRadiusMeters: try container.decode(Double.self, forKey: .enterRadiusMeters),
      exitRadiusMeters: try container.decode(Double.self, forKey: .exitRadiusMeters),
      maximumAccuracyMeters: try container.decode(Double.self, forKey: .maximumAccuracyMeters),
      confirmations: try container.decode(Int.self, forKey: .confirmations),
      dwellSeconds: try container.decode(Double.self, forKey: .dwellSeconds),
      fixLossSeconds: try container.decode(Double.self, forKey: .fixLossSeconds),
      entryAccuracyFactor: try container.decodeIfPresent(Double.self, forKey: .entryAccuracyFactor)
        ?? 0.5)
  }
}
