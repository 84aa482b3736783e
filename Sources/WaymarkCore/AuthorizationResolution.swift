/// The one rule that decides which authorization is in force for a client, wherever it is
/// asked: the library's `AuthorizationCenter`, the broker's session of a connected program and
/// the daemon's check of its own grant all call ``resolve(servicesEnabled:stored:session:)``.
///
/// In order: the system-wide switch (off: restricted), the stored grant (a store that cannot be
/// read gives nothing: restricted), then what this process or connection was told once (an
/// "allow once" answer), else not determined. Asking an agent or polkit when nothing is decided
/// is the caller's next step; its answer becomes a stored grant or a session answer, which this
/// rule then finds.
public enum AuthorizationResolution {
  /// Location services are disabled system-wide.
  case servicesDisabled
  /// The grant store could not be read: the error.
  case grantsUnreadable(any Error)
  /// A stored grant decides.
  case stored(AuthorizationState)
  /// No stored grant; an answer valid for this process or connection only decides.
  case session(AuthorizationState)
  /// Nothing is decided yet.
  case notDetermined

  /// Resolves a client's authorization.
  ///
  /// - Parameters:
  ///   - servicesEnabled: whether location services are enabled system-wide.
  ///   - stored: reads the client's stored state (`nil` without a grant); called only when the
  ///     services are enabled.
  ///   - session: the client's answer for this process or connection; called only when there
  ///     is no stored grant.
  /// - Returns: what decides, and with it ``state``.
  public static func resolve(
    servicesEnabled: Bool, stored: () throws -> AuthorizationState?,
    session: () -> AuthorizationState?
  ) -> AuthorizationResolution {
    guard servicesEnabled else { return .servicesDisabled }
    let grant: AuthorizationState?
    do {
      grant = try stored()
    } catch {
      return .grantsUnreadable(error)
    }
    if let grant, grant.status != .notDetermined { return .stored(grant) }
    if let answer = session() { return .session(answer) }
    return .notDetermined
  }

  /// The state in force: ``AuthorizationStatus/restricted`` when the services are disabled or
  /// the grants unreadable (without the record, nothing is given).
  public var state: AuthorizationState {
    switch self {
    case .servicesDisabled, .grantsUnreadable: AuthorizationState(status: .restricted)
    case .stored(let state), .session(let state): state
    case .notDetermined: AuthorizationState(status: .notDetermined)
    }
  }

  /// Whether a stored grant decides.
  public var isStored: Bool {
    if case .stored = self { return true }
    return false
  }
}
