import Waymark
import WaymarkCore

/// The daemon's own grant: checked at start, on a change of the store (or on a timer when it
/// cannot be watched) and at a reload; gpsd is read only while it holds.
extension DaemonRuntime {
  /// Checks the grant now: starts reading gpsd when it holds, stops when it does not.
  func checkAuthorization() {
    nextAuthorizationCheck = clock.now + .seconds(configuration.authorizationCheckSeconds)
    let problem = authorizationProblemNow()
    let before = authorizationProblem
    authorizationProblem = problem
    if let problem {
      if problem != before {
        log.warning("not authorized, waiting: \(problem)")
      }
      stopSource()
    } else {
      if before != nil { log.notice("client '\(configuration.clientID)' is authorized (always)") }
      source?.manager.refreshAuthorization()
      startSource()
    }
  }

  func authorizationProblemNow() -> String? {
    let client = configuration.clientID
    let grantCommand =
      "waymark auth grant \(client) always --store \(configuration.storePath)"
    // The daemon never asks an agent, so it has no session grants: the stored grant decides.
    let resolution = AuthorizationResolution.resolve(
      servicesEnabled: authorization.services.isEnabled,
      stored: { try authorization.store.grant(for: client)?.state }, session: { nil })
    switch resolution {
    case .servicesDisabled:
      return "location services are disabled (\(LocationServicesSwitch.defaultPath) exists)"
    case .grantsUnreadable(let error):
      return "cannot read the grants: \(error)"
    case .stored, .session, .notDetermined:
      break
    }
    let state = resolution.state
    switch state.status {
    case .authorizedAlways:
      if state.accuracy == .reduced {
        return "client '\(client)' has reduced accuracy; monitoring needs full: \(grantCommand)"
      }
      return nil
    case .authorizedWhenInUse:
      return "client '\(client)' is authorized only when in use; the daemon needs always: "
        + grantCommand
    case .denied:
      return "client '\(client)' is denied; to allow it: \(grantCommand)"
    case .restricted:
      return "location services are restricted for client '\(client)'"
    case .notDetermined:
      return "client '\(client)' has no grant; run: \(grantCommand)"
    }
  }
}
