import FoundationEssentials
import WaymarkCore

extension LocationUpdate {
  /// What a live session is for: CoreLocation's `CLLocationUpdate.LiveConfiguration`. Each
  /// activity sets the manager's filters, the stationarity thresholds and whether updates pause
  /// while the device stands still.
  ///
  /// **What it changes on gpsd: nothing.** Waymark never reconfigures the receiver: its rate
  /// and dynamic model are shared by every program on the machine (and by waymarkd's
  /// recording), and are set once with gpsd's own tools (`gpsctl`, `ubxtool -p MODEL,…`). An
  /// activity works on the fixes as they come, in this process.
  ///
  /// | Activity | Max accuracy | Distance filter | Stop / move speed | Radius | Settle / move | Pauses |
  /// |---|---|---|---|---|---|---|
  /// | ``default`` | any | none | 0.5 / 1.5 m/s | 25 m | 30 / 5 s | yes |
  /// | ``automotiveNavigation`` | 50 m | none | 1.0 / 2.5 m/s | 30 m | 20 / 3 s | no |
  /// | ``otherNavigation`` | 50 m | none | 0.5 / 1.2 m/s | 20 m | 20 / 3 s | no |
  /// | ``fitness`` | 30 m | none | 0.4 / 1.0 m/s | 15 m | 30 / 5 s | yes |
  /// | ``airborne`` | 100 m | none | 2.0 / 5.0 m/s | 50 m | 60 / 3 s | no |
  public struct LiveConfiguration: Sendable, Hashable {
    /// The activity's name (`default`, `automotiveNavigation`, …).
    public var name: String
    /// Locations with a known horizontal accuracy worse than this many metres are not
    /// delivered (nor used for stationarity); `nil` accepts every location. A location of
    /// unknown accuracy (a receiver that reports none) is accepted.
    public var maximumHorizontalAccuracy: Double?
    /// Minimum distance in metres from the last delivered location; `nil` delivers every one.
    public var distanceFilter: Double?
    /// When the device counts as stationary.
    public var stationary: StationaryDetector.Thresholds
    /// Whether locations stop while the device is stationary: the update that raises
    /// ``LocationUpdate/isStationary`` goes out, then none with a location until it moves.
    public var pausesWhileStationary: Bool
    /// After this long without a usable fix (on the session's clock) an update with
    /// ``LocationUpdate/locationUnavailable`` goes out; `nil` never.
    public var staleAfter: Duration?

    /// Creates a configuration.
    public init(
      name: String, maximumHorizontalAccuracy: Double? = nil, distanceFilter: Double? = nil,
      stationary: StationaryDetector.Thresholds = StationaryDetector.Thresholds(),
      pausesWhileStationary: Bool = true, staleAfter: Duration? = .seconds(10)
    ) {
      self.name = name
      self.maximumHorizontalAccuracy = maximumHorizontalAccuracy
      self.distanceFilter = distanceFilter
      self.stationary = stationary
      self.pausesWhileStationary = pausesWhileStationary
      self.staleAfter = staleAfter
    }

    /// Any activity: every location, stationary after 30 s within 25 m below 0.5 m/s; pauses.
    public static let `default` = LiveConfiguration(name: "default")

    /// Driving with turn-by-turn directions: locations within 50 m; a car at a red light is not
    /// paused (stationary after 20 s below 1 m/s within 30 m, moving again after 3 s).
    public static let automotiveNavigation = LiveConfiguration(
      name: "automotiveNavigation", maximumHorizontalAccuracy: 50,
      stationary: .init(
        stopSpeed: 1.0, moveSpeed: 2.5, radiusMeters: 30, settleSeconds: 20, moveSeconds: 3),
      pausesWhileStationary: false)

    /// Navigation on foot, by bicycle or by boat: locations within 50 m; not paused.
    public static let otherNavigation = LiveConfiguration(
      name: "otherNavigation", maximumHorizontalAccuracy: 50,
      stationary: .init(
        stopSpeed: 0.5, moveSpeed: 1.2, radiusMeters: 20, settleSeconds: 20, moveSeconds: 3),
      pausesWhileStationary: false)

    /// Walking, running, cycling for exercise: locations within 30 m; pauses at a stop.
    public static let fitness = LiveConfiguration(
      name: "fitness", maximumHorizontalAccuracy: 30,
      stationary: .init(
        stopSpeed: 0.4, moveSpeed: 1.0, radiusMeters: 15, settleSeconds: 30, moveSeconds: 5),
      pausesWhileStationary: true)

    /// Flight: locations within 100 m; stationary only on the ground (below 2 m/s for 60 s);
    /// not paused.
    public static let airborne = LiveConfiguration(
      name: "airborne", maximumHorizontalAccuracy: 100,
      stationary: .init(
        stopSpeed: 2.0, moveSpeed: 5.0, radiusMeters: 50, settleSeconds: 60, moveSeconds: 3),
      pausesWhileStationary: false)
  }
}
