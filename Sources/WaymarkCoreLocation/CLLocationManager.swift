import Foundation
import Waymark

/// CoreLocation's `CLLocationManager`: the delegate API of iOS over a Waymark
/// `LocationManager` on the live source (waymarkd, else gpsd; `WAYMARK_SIMULATED_LOG` replays
/// a log), under this program's grant.
///
/// ```swift
/// final class Tracker: NSObject, CLLocationManagerDelegate {
///   let manager = CLLocationManager()
///   func locationManagerDidChangeAuthorization(_ manager: CLLocationManager) {
///     switch manager.authorizationStatus {
///     case .notDetermined: manager.requestWhenInUseAuthorization()
///     case .authorizedWhenInUse, .authorizedAlways: manager.startUpdatingLocation()
///     default: break
///     }
///   }
///   func locationManager(_ manager: CLLocationManager, didUpdateLocations locations: [CLLocation]) {
///     print(locations.last!.coordinate)
///   }
/// }
/// ```
///
/// Delegate calls come on the main queue, in the order of ``CLLocationManagerDelegate``.
/// What Linux lacks behaves as on an iOS device without it: no heading
/// (``headingAvailable()`` is `false`), no beacon ranging (``isRangingAvailable()``), no
/// pause (a program runs in the foreground while it runs), no relaunch in the background
/// (waymarkd follows the receiver while no program runs). A source that ends (a log at its
/// end) is `CLError.locationUnknown`.
open class CLLocationManager: NSObject {
  /// The delegate, held weakly.
  open weak var delegate: (any CLLocationManagerDelegate)?

  /// The accuracy wanted, metres (`kCLLocationAccuracy…`): a one-shot ``requestLocation()``
  /// waits for a location this good (or the best when the source ends);
  /// ``kCLLocationAccuracyReduced`` asks for approximate locations. Default
  /// ``kCLLocationAccuracyBest``.
  open var desiredAccuracy: CLLocationAccuracy = kCLLocationAccuracyBest {
    didSet { configure() }
  }
  /// Metres the device must move from the last delivered location before the next update;
  /// ``kCLDistanceFilterNone`` (default) for every one.
  open var distanceFilter: CLLocationDistance = kCLDistanceFilterNone {
    didSet { configure() }
  }
  /// The activity (kept; gpsd's dynamic model is not changed by one program).
  open var activityType = CLActivityType.other
  /// Kept; updates never pause on Linux (a running program is in use).
  open var pausesLocationUpdatesAutomatically = true
  /// Kept; a Linux program gets locations for as long as it runs.
  open var allowsBackgroundLocationUpdates = false
  /// Kept; there is no status bar indicator.
  open var showsBackgroundLocationIndicator = false
  /// Degrees of heading change between updates (kept; no heading is delivered).
  open var headingFilter: CLLocationDegrees = 1
  /// The orientation headings are relative to (kept; no heading is delivered).
  open var headingOrientation = CLDeviceOrientation.portrait

  private let engine: CLLocationManagerEngine
  private let regions = Locked([String: CLRegion]())
  private let deliveries = WeakManager()

  /// A manager on the live source (the environment's choice; see the type's overview).
  public override convenience init() {
    self.init(source: .automatic)
  }

  /// A manager on `source` (a log, gpsd, the daemon).
  public init(source: LiveSource) {
    let box = deliveries
    engine = CLLocationManagerEngine(source: source) { callback in
      DispatchQueue.main.async { box.value?.dispatch(callback) }
    }
    super.init()
    box.value = self
  }

  /// Makes `callback`'s delegate call on the main queue, after the caller has returned.
  func post(_ callback: CLLocationManagerEngine.Callback) {
    let box = deliveries
    DispatchQueue.main.async { box.value?.dispatch(callback) }
  }

  // MARK: Authorization

  /// The program's status; `.notDetermined` until the manager has read it (the first
  /// ``CLLocationManagerDelegate/locationManagerDidChangeAuthorization(_:)``).
  open var authorizationStatus: CLAuthorizationStatus { engine.snapshot.withLock { $0.status } }
  /// The accuracy the grant allows.
  open var accuracyAuthorization: CLAccuracyAuthorization {
    engine.snapshot.withLock { $0.accuracy }
  }
  /// The program's status from its grant in this user's store (deprecated on iOS: use the
  /// ``authorizationStatus`` of a manager, which also knows waymarkd's answer).
  open class func authorizationStatus() -> CLAuthorizationStatus {
    AuthorizationCenter.shared.state(for: LiveSource.defaultClientID).status
  }
  /// `false`: Linux has no widgets.
  open var isAuthorizedForWidgetUpdates: Bool { false }
  /// Whether location services are on for every program (`/etc/waymark/disabled` absent).
  open class func locationServicesEnabled() -> Bool {
    AuthorizationCenter.shared.services.isEnabled
  }
  /// `false`: a GNSS receiver has no magnetometer.
  open class func headingAvailable() -> Bool { false }
  /// `true`: significant changes are computed from the receiver's locations.
  open class func significantLocationChangeMonitoringAvailable() -> Bool { true }
  /// `true` for ``CLCircularRegion``; `false` for any other class (beacon regions).
  open class func isMonitoringAvailable(for regionClass: AnyClass) -> Bool {
    regionClass is CLCircularRegion.Type
  }
  /// `false`: no Bluetooth beacons.
  open class func isRangingAvailable() -> Bool { false }

  /// Asks for when-in-use authorization when the status is not determined (through
  /// waymarkd's agent or the terminal); the answer comes to
  /// ``CLLocationManagerDelegate/locationManagerDidChangeAuthorization(_:)``.
  open func requestWhenInUseAuthorization() {
    engine.send(.requestAuthorization(.whenInUse))
  }
  /// Asks for always authorization when not determined, or once as an upgrade from
  /// when-in-use.
  open func requestAlwaysAuthorization() { engine.send(.requestAuthorization(.always)) }
  /// No temporary upgrade exists on Linux: nothing changes (the delegate hears no new status).
  open func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String) {}
  /// No temporary upgrade exists on Linux: returns when the grant is for full accuracy, else
  /// throws `CLError.denied`.
  open func requestTemporaryFullAccuracyAuthorization(withPurposeKey purposeKey: String)
    async throws
  {
    if accuracyAuthorization != .fullAccuracy { throw CLError(.denied) }
  }
  /// No temporary upgrade exists on Linux: `completion` gets `nil` when the grant is for full
  /// accuracy, else `CLError.denied`.
  open func requestTemporaryFullAccuracyAuthorization(
    withPurposeKey purposeKey: String, completion: ((any Error)?) -> Void
  ) {
    completion(accuracyAuthorization == .fullAccuracy ? nil : CLError(.denied))
  }

  // MARK: Locations

  /// The latest location delivered by the source.
  open var location: CLLocation? { engine.snapshot.withLock { $0.location } }
  /// Starts updates to `didUpdateLocations` (at once when authorized, else once a grant
  /// comes); `CLError.denied` when the program may not have locations.
  open func startUpdatingLocation() { engine.send(.updating(true)) }
  /// Stops updates.
  open func stopUpdatingLocation() { engine.send(.updating(false)) }
  /// One location to `didUpdateLocations`: the first at ``desiredAccuracy``; when the source
  /// ends first, the best seen, or `CLError.locationUnknown`.
  open func requestLocation() { engine.send(.requestLocation) }
  /// Locations to `didUpdateLocations` when the device moved 500 m or more, or after 5 minutes
  /// of fix time without one (Waymark's `SignificantChangeFilter`).
  open func startMonitoringSignificantLocationChanges() {
    engine.send(.significantChanges(true))
  }
  /// Stops significant changes.
  open func stopMonitoringSignificantLocationChanges() {
    engine.send(.significantChanges(false))
  }
  /// Visits to `didVisit`: each when it begins (departure `distantFuture`) and when it ends
  /// (Waymark's stays: two minutes or more in one place).
  open func startMonitoringVisits() { engine.send(.visits(true)) }
  /// Stops visits.
  open func stopMonitoringVisits() { engine.send(.visits(false)) }

  // MARK: Regions

  /// The regions being monitored.
  open var monitoredRegions: Set<CLRegion> { Set(regions.withLock { $0.values }) }
  /// No limit below the Earth's: a Waymark circle may be of any size.
  open var maximumRegionMonitoringDistance: CLLocationDistance { CLLocationDistanceMax }
  /// Regions being ranged: always empty (no beacons).
  open var rangedRegions: Set<CLRegion> { [] }

  /// Monitors `region` (a ``CLCircularRegion``): `didStartMonitoringFor`, then
  /// `didEnterRegion` / `didExitRegion` and `didDetermineState` on each crossing. Another
  /// kind of region, a radius of 0 or less or a reduced grant go to `monitoringDidFailFor`.
  open func startMonitoring(for region: CLRegion) {
    guard let circle = region as? CLCircularRegion else {
      regions.withLock { $0[region.identifier] = region }
      engine.send(.rejectRegion(region.identifier))
      return
    }
    regions.withLock { $0[region.identifier] = region }
    engine.send(
      .startMonitoring(
        .init(
          identifier: circle.identifier, center: circle.center, radius: circle.radius,
          notifyOnEntry: circle.notifyOnEntry, notifyOnExit: circle.notifyOnExit)))
  }
  /// Stops monitoring `region`.
  open func stopMonitoring(for region: CLRegion) {
    regions.withLock { $0[region.identifier] = nil }
    engine.send(.stopMonitoring(region.identifier))
  }
  /// Asks for `region`'s state: `didDetermineState` with `.unknown` until a location came.
  open func requestState(for region: CLRegion) { engine.send(.requestState(region.identifier)) }

  // MARK: Heading

  /// Always `nil`: no magnetometer.
  open var heading: CLHeading? { nil }
  /// Does nothing, as on an iOS device without a magnetometer (``headingAvailable()``).
  open func startUpdatingHeading() {}
  /// Does nothing.
  open func stopUpdatingHeading() {}
  /// Does nothing.
  open func dismissHeadingCalibrationDisplay() {}

  // MARK: Delivery

  private func configure() {
    engine.send(.configure(desiredAccuracy: desiredAccuracy, distanceFilter: distanceFilter))
  }

  /// Makes one delegate call (on the main queue).
  fileprivate func dispatch(_ callback: CLLocationManagerEngine.Callback) {
    guard let delegate else { return }
    func region(_ identifier: String) -> CLRegion? { regions.withLock { $0[identifier] } }
    switch callback {
    case .authorization(let status):
      delegate.locationManagerDidChangeAuthorization(self)
      delegate.locationManager(self, didChangeAuthorization: status)
    case .locations(let locations):
      delegate.locationManager(self, didUpdateLocations: locations)
    case .failure(let error):
      delegate.locationManager(self, didFailWithError: error)
    case .visit(let visit):
      delegate.locationManager(self, didVisit: visit)
    case .enter(let identifier):
      if let region = region(identifier) { delegate.locationManager(self, didEnterRegion: region) }
    case .exit(let identifier):
      if let region = region(identifier) { delegate.locationManager(self, didExitRegion: region) }
    case .state(let state, let identifier):
      if let region = region(identifier) {
        delegate.locationManager(self, didDetermineState: state, for: region)
      }
    case .didStartMonitoring(let identifier):
      if let region = region(identifier) {
        delegate.locationManager(self, didStartMonitoringFor: region)
      }
    case .rangingFailed(let constraint):
      delegate.locationManager(
        self, didFailRangingFor: constraint, error: CLError(.rangingUnavailable))
    case .regionRangingFailed(let region):
      delegate.locationManager(
        self, rangingBeaconsDidFailFor: region, withError: CLError(.rangingUnavailable))
    case .deferredFailed:
      delegate.locationManager(self, didFinishDeferredUpdatesWithError: CLError(.deferredFailed))
    case .monitoringFailed(let identifier, let error):
      let failed = regions.withLock { $0.removeValue(forKey: identifier) }
      delegate.locationManager(self, monitoringDidFailFor: failed, withError: error)
    }
  }
}

/// The manager for the engine's deliveries, held weakly: the engine never keeps its manager
/// alive.
private final class WeakManager: @unchecked Sendable {
  // @unchecked: set once in the manager's initializer, before any delivery; read on the main
  // queue.
  weak var value: CLLocationManager?
}
