import FoundationEssentials
import WaymarkClient
import WaymarkCore

extension DaemonLocationService {
  /// The authorization center for managers of this process: its store is the daemon's answer,
  /// its agent the daemon's `REQUEST`. Made once per connection.
  public var authorization: AuthorizationCenter {
    let (center, made) = attachment.withLock { slot -> (AuthorizationCenter, Bool) in
      if let center = slot as? AuthorizationCenter { return (center, false) }
      let center = AuthorizationCenter(
        store: DaemonGrantStore(service: self), agent: DaemonRequestAgent(service: self),
        services: .enabled)
      slot = center
      return (center, true)
    }
    if made {
      let clientID = clientID
      authorizationChanged.withLock { $0 = { center.notify(clientID) } }
    }
    return center
  }

  /// A manager named after this process, on the daemon's fixes and answers.
  public func makeManager(clock: any Clock<Duration> = ContinuousClock()) -> LocationManager {
    LocationManager(
      clientID: clientID, source: fixSource, authorization: authorization, clock: clock)
  }
}

/// The daemon's answer for this process, as a read-only grant store.
struct DaemonGrantStore: GrantStore {
  let service: DaemonLocationService

  func grant(for clientID: String) throws -> Grant? {
    let state = service.authorizationState
    let level: GrantLevel
    switch state.status {
    case .notDetermined: return nil
    case .restricted:
      throw GrantStoreError.unreadable(path: service.socketPath, reason: "waymarkd restricts")
    case .denied: level = .never
    case .authorizedWhenInUse: level = .whenInUse
    case .authorizedAlways: level = .always
    }
    return Grant(
      clientID: service.clientID, level: level, accuracy: state.accuracy,
      grantedAt: Date(timeIntervalSince1970: 0))
  }

  func allGrants() throws -> [Grant] { try grant(for: service.clientID).map { [$0] } ?? [] }
  // The daemon records decisions itself; changes go through `waymark auth` or an agent.
  func save(_ grant: Grant) throws {}
  @discardableResult func removeGrant(for clientID: String) throws -> Bool { false }
  func removeAll() throws {}
}

/// Asks the daemon (which asks an agent of this user) and reports its answer.
struct DaemonRequestAgent: AuthorizationAgent {
  let service: DaemonLocationService

  func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer {
    let state = await service.request(request.level)
    switch state.status {
    case .authorizedAlways: return .allow(.always, state.accuracy)
    case .authorizedWhenInUse: return .allow(.whenInUse, state.accuracy)
    case .notDetermined, .restricted, .denied: return .deny
    }
  }
}
