import FoundationEssentials
import WaymarkCore

/// The decisions of a live session: what a manager event, a request or a location makes of the
/// next ``LocationUpdate``. A value with no clock and no I/O (stationarity on fix time);
/// ``LocationUpdate/liveUpdates(_:source:)`` feeds it and yields what it returns.
struct LiveDiagnosis: Sendable {
  /// What happened.
  enum Input: Sendable {
    /// The grant now (and whether location services are on system-wide).
    case authorization(AuthorizationState, servicesEnabled: Bool)
    /// A request for authorization began (`true`) or ended (`false`).
    case request(inProgress: Bool)
    /// The source's health.
    case health(SourceHealth)
    /// No usable fix for the stale time.
    case stale
    /// A delivered location.
    case location(Location)
    /// What the service sessions held by this process need now.
    case sessions(ServiceSessionRegistry.Need)
  }

  private let configuration: LocationUpdate.LiveConfiguration
  private var detector: StationaryDetector
  private var status: AuthorizationStatus = .notDetermined
  private var servicesEnabled = true
  private var sourceUnreachable = false
  /// The `restricted` status comes from the source having been unreachable (the manager's
  /// rule), not from the system: until a grant other than `restricted` is read again.
  private var restrictedBySource = false
  private var isStale = false
  private var sessions = ServiceSessionRegistry.Need()
  /// The flags (no location) last sent or now in force.
  private(set) var flags = LocationUpdate()

  init(configuration: LocationUpdate.LiveConfiguration) {
    self.configuration = configuration
    detector = StationaryDetector(thresholds: configuration.stationary)
  }

  /// Takes one input and returns the update to yield, if any.
  ///
  /// A location goes out with the flags, unless its accuracy is known and worse than the
  /// configuration's maximum (it is then ignored) or the configuration pauses and the device
  /// was already stationary before it. Any other input yields an update without a location when
  /// the flags change and at least one is raised (the next location carries cleared flags).
  mutating func apply(_ input: Input) -> LocationUpdate? {
    var next = flags
    switch input {
    case .authorization(let state, let enabled):
      status = state.status
      servicesEnabled = enabled
      if state.status != .restricted { restrictedBySource = false }
      next.authorizationDenied = state.status == .denied
      next.accuracyLimited = state.status.isAuthorized && state.accuracy == .reduced
    case .request(let inProgress):
      next.authorizationRequestInProgress = inProgress
    case .health(let health):
      sourceUnreachable = health.service == .unreachable || health.devicePresent == false
      if health.service == .unreachable { restrictedBySource = true }
    case .stale:
      isStale = true
    case .sessions(let need):
      sessions = need
    case .location(let location):
      if let maximum = configuration.maximumHorizontalAccuracy,
        let accuracy = location.horizontalAccuracy, accuracy > maximum
      {
        return nil
      }
      isStale = false
      sourceUnreachable = false
      // Required and not held: nothing goes out (a raised flag was sent when it changed).
      if sessions.isRequired && !sessions.isHeld { return nil }
      let wasStationary = detector.isStationary
      next.isStationary = detector.update(with: location)
      derive(&next)
      flags = next
      if configuration.pausesWhileStationary && wasStationary && next.isStationary {
        return nil
      }
      next.location = location
      return next
    }
    derive(&next)
    guard next != flags else { return nil }
    flags = next
    let raised =
      next.isStationary || next.authorizationDenied || next.authorizationDeniedGlobally
      || next.authorizationRequestInProgress || next.locationUnavailable || next.accuracyLimited
      || next.insufficientlyInUse || next.serviceSessionRequired
    return raised ? next : nil
  }

  /// The flags that follow from the source and the grant.
  private func derive(_ update: inout LocationUpdate) {
    update.locationUnavailable = sourceUnreachable || isStale
    update.authorizationDeniedGlobally =
      !servicesEnabled || (status == .restricted && !restrictedBySource)
    update.insufficientlyInUse =
      sessions.requirement == .always && status == .authorizedWhenInUse
    update.serviceSessionRequired = sessions.isRequired && !sessions.isHeld
  }
}
