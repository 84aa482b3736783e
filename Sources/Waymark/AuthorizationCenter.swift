import FoundationEssentials
import WaymarkCore

/// Decides and remembers which clients may have locations: the grant store, the agent that asks
/// when there is no grant, the system-wide switch, and this process's session grants ("allow
/// once", and grants that could not be saved).
///
/// Several ``LocationManager``s in one process share a center (``shared`` by default), so a
/// decision made through one is seen by all: "allow once" lasts for the life of the process,
/// not of one manager.
///
/// In-process authorization records consent and makes the library honour it; it cannot stop a
/// hostile process from opening gpsd's port itself. Enforcement comes from the daemon, which
/// will check the same `Grant` records for the peer of its socket.
public final class AuthorizationCenter: Sendable {
  /// The grant store.
  public let store: any GrantStore
  /// The agent asked when a client has no grant.
  public let agent: any AuthorizationAgent
  /// The system-wide switch.
  public let services: LocationServicesSwitch
  private let clock: @Sendable () -> Date

  private struct State {
    var sessionGrants: [String: AuthorizationState] = [:]
    var inFlight: [String: Task<AuthorizationState, Never>] = [:]
    var observers: [Int: @Sendable (String) -> Void] = [:]
    var nextObserver = 0
  }

  private let state = Locked(State())

  /// Creates a center.
  ///
  /// - Parameters:
  ///   - store: where grants persist.
  ///   - agent: who answers requests without a grant.
  ///   - services: the system-wide switch (`/etc/waymark/disabled` by default).
  ///   - now: the wall clock used only to stamp `grantedAt`.
  public init(
    store: any GrantStore,
    agent: any AuthorizationAgent = PolicyAuthorizationAgent(),
    services: LocationServicesSwitch = .file(),
    now: @escaping @Sendable () -> Date = { Date() }
  ) {
    self.store = store
    self.agent = agent
    self.services = services
    self.clock = now
  }

  /// The process-wide center: grants under the `StateDirectory`, the terminal agent when
  /// attached to a terminal (else deny), and the `/etc/waymark/disabled` switch.
  public static let shared = AuthorizationCenter(
    store: FileGrantStore.standard(), agent: DefaultAuthorizationAgent.make())

  /// The current state of `clientID`, from the switch, this process's once-grants and the store.
  ///
  /// A grant store that cannot be read yields `AuthorizationStatus.restricted`: without the
  /// record, nothing is given.
  public func state(for clientID: String) -> AuthorizationState {
    resolve(clientID).state
  }

  /// The state of `clientID` and whether it comes from a stored grant
  /// (``AuthorizationResolution``, with this process's once-grants as the session).
  private func resolve(_ clientID: String) -> (state: AuthorizationState, isStored: Bool) {
    let resolution = AuthorizationResolution.resolve(
      servicesEnabled: services.isEnabled,
      stored: { try store.grant(for: clientID)?.state },
      session: { state.withLock { $0.sessionGrants[clientID] } })
    return (resolution.state, resolution.isStored)
  }

  /// Asks for `level` for `clientID` when that needs asking, and returns the resulting state.
  ///
  /// No question is asked when location services are disabled, when the client was denied,
  /// already has what it asks for, or holds an "allow once" grant (as on iOS). A when-in-use
  /// client asking for always is asked once more; a refusal keeps when-in-use. Concurrent
  /// requests for one client share one question. A grant that cannot be saved still holds for
  /// this process.
  public func request(
    _ level: GrantLevel, for clientID: String, purpose: String? = nil
  ) async -> AuthorizationState {
    let (current, isStored) = resolve(clientID)
    switch current.status {
    case .restricted, .denied, .authorizedAlways: return current
    case .authorizedWhenInUse:
      if level != .always || !isStored { return current }
    case .notDetermined: break
    }
    let task = state.withLock { state -> Task<AuthorizationState, Never> in
      if let task = state.inFlight[clientID] { return task }
      let task = Task { await self.ask(level, for: clientID, purpose: purpose) }
      state.inFlight[clientID] = task
      return task
    }
    let result = await task.value
    state.withLock { state in
      if state.inFlight[clientID] == task { state.inFlight[clientID] = nil }
    }
    return result
  }

  private func ask(_ level: GrantLevel, for clientID: String, purpose: String?) async
    -> AuthorizationState
  {
    let existing = try? store.grant(for: clientID)
    let request = AuthorizationRequest(
      clientID: clientID, level: level, purpose: purpose, currentGrant: existing)
    let answer = await agent.decide(request)
    switch answer {
    case .deny:
      if existing?.level == .whenInUse { break }
      record(Grant(clientID: clientID, level: .never, grantedAt: clock()))
    case .allowOnce(let accuracy):
      state.withLock {
        $0.sessionGrants[clientID] = AuthorizationState(
          status: .authorizedWhenInUse, accuracy: accuracy)
      }
    case .allow(let level, let accuracy):
      record(Grant(clientID: clientID, level: level, accuracy: accuracy, grantedAt: clock()))
    }
    notify(clientID)
    return state(for: clientID)
  }

  private func record(_ grant: Grant) {
    do {
      try store.save(grant)
    } catch {
      // Honour the decision for this process even if it cannot be persisted.
      state.withLock { $0.sessionGrants[grant.clientID] = grant.state }
    }
  }

  /// Records `grant` directly (what `waymark auth grant` does) and tells the observers.
  public func setGrant(_ grant: Grant) throws {
    try store.save(grant)
    state.withLock { _ = $0.sessionGrants.removeValue(forKey: grant.clientID) }
    notify(grant.clientID)
  }

  /// Removes the grant and any once-grant of `clientID` and tells the observers.
  public func revoke(_ clientID: String) throws {
    state.withLock { _ = $0.sessionGrants.removeValue(forKey: clientID) }
    try store.removeGrant(for: clientID)
    notify(clientID)
  }

  /// Tells the observers that `clientID`'s state may have changed outside this center (for
  /// example after `waymark auth grant` in another process, or a change of the switch).
  public func notify(_ clientID: String) {
    let observers = state.withLock { Array($0.observers.values) }
    for observer in observers { observer(clientID) }
  }

  func addObserver(_ observer: @escaping @Sendable (String) -> Void) -> Int {
    state.withLock { state in
      defer { state.nextObserver += 1 }
      state.observers[state.nextObserver] = observer
      return state.nextObserver
    }
  }

  func removeObserver(_ token: Int) {
    _ = state.withLock { $0.observers.removeValue(forKey: token) }
  }
}
