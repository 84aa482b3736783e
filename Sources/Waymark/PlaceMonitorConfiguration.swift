import FoundationEssentials
import WaymarkCore

extension PlaceMonitor {
  /// The detection defaults; each place may override some of them (`Place.detection`).
  ///
  /// The README's `### Detection` section explains every default and the reasoning behind it.
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

    /// Creates a configuration; every parameter has the documented default.
    public init(
      maximumAccuracyMeters: Double = 50,
      assumedAccuracyMeters: Double = 25,
      exitRadiusFactor: Double = 1.2,
      exitMarginMeters: Double = 30,
      confirmations: Int = 3,
      dwellSeconds: Double = 0,
      fixLossSeconds: Double = 30
    ) {
      self.maximumAccuracyMeters = maximumAccuracyMeters
      self.assumedAccuracyMeters = assumedAccuracyMeters
      self.exitRadiusFactor = exitRadiusFactor
      self.exitMarginMeters = exitMarginMeters
      self.confirmations = confirmations
      self.dwellSeconds = dwellSeconds
      self.fixLossSeconds = fixLossSeconds
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
        fixLossSeconds: fixLossSeconds
      )
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
  }
}
