import FoundationEssentials
import WaymarkCore

// The client's authorization: its status, the requests for a grant and who waits for one.
extension LocationManager {
  /// The current authorization status.
  public var authorizationStatus: AuthorizationStatus { withState { $0.effective.status } }

  /// The accuracy granted.
  public var accuracyAuthorization: AccuracyAuthorization {
    withState { $0.effective.accuracy }
  }

  /// Authorization states: the current one first, then every change. Never ends while the
  /// manager lives.
  public var authorizationUpdates: Broadcast<AuthorizationState>.Updates {
    authorizationBroadcast.subscription
  }

  /// Asks for when-in-use authorization when undecided, and resolves with the first decided
  /// status (at once when already decided).
  @discardableResult
  public func requestWhenInUseAuthorization() async -> AuthorizationStatus {
    await requestAuthorization(.whenInUse)
  }

  /// Asks for always authorization (also as an upgrade from when-in-use, once), and resolves
  /// with the first decided status.
  @discardableResult
  public func requestAlwaysAuthorization() async -> AuthorizationStatus {
    await requestAuthorization(.always)
  }

  /// Reads the grant again (after `waymark auth` changed it in another process, or the system
  /// switch changed) and emits the change, if any.
  public func refreshAuthorization() {
    let grant = authorization.state(for: clientID)
    let waiters = withState { state in
      state.grant = grant
      return applyAuthorization(&state)
    }
    for (continuation, status) in waiters { continuation.resume(returning: status) }
  }

  func requestAuthorization(_ level: GrantLevel) async -> AuthorizationStatus {
    refreshAuthorization()
    let current = authorizationStatus
    if current == .authorizedWhenInUse && level == .always {
      _ = await authorization.request(level, for: clientID, purpose: purpose)
      refreshAuthorization()
      return authorizationStatus
    }
    if current.isDecided { return current }
    let id = makeID()
    return await withCheckedContinuation { continuation in
      let decided = withState { state -> AuthorizationStatus? in
        if state.effective.status.isDecided { return state.effective.status }
        state.authorizationWaiters[id] = continuation
        return nil
      }
      if let decided {
        continuation.resume(returning: decided)
        return
      }
      let authorization = authorization
      let clientID = clientID
      let purpose = purpose
      Task {
        _ = await authorization.request(level, for: clientID, purpose: purpose)
        self.refreshAuthorization()
        // The answer may leave the status where it was; waiters never hang.
        let waiter = self.withState { state in
          (state.authorizationWaiters.removeValue(forKey: id), state.effective.status)
        }
        waiter.0?.resume(returning: waiter.1)
      }
    }
  }

  /// Emits an authorization change if the effective state changed; returns waiters to resume.
  func applyAuthorization(
    _ state: inout State
  ) -> [(CheckedContinuation<AuthorizationStatus, Never>, AuthorizationStatus)] {
    let effective = state.effective
    if authorizationBroadcast.latest != effective {
      authorizationBroadcast.send(effective)
      eventBroadcast.send(.authorization(effective))
    }
    reconcile(&state)
    guard effective.status.isDecided else { return [] }
    defer { state.authorizationWaiters.removeAll() }
    return state.authorizationWaiters.values.map { ($0, effective.status) }
  }
}
