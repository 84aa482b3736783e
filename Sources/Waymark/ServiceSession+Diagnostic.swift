import WaymarkCore

extension ServiceSession {
  /// Why a session's program does not get what it asked for: CoreLocation 18's
  /// `CLServiceSession.Diagnostic`. Every flag `false`: the session has what it states.
  ///
  /// What each one means on Linux:
  ///
  /// | Flag | Raised when |
  /// |---|---|
  /// | ``authorizationDenied`` | the program's grant is `never` (`waymark auth`, or an agent said no) |
  /// | ``authorizationDeniedGlobally`` | location services are off for everyone (`/etc/waymark/disabled`) |
  /// | ``authorizationRestricted`` | services are on but the grants cannot be read (waymarkd's store, or this process's), so nothing is given |
  /// | ``insufficientlyInUse`` | the session needs `always` and the grant is `whenInUse` |
  /// | ``alwaysAuthorizationDenied`` | the same, once the question for `always` was settled without it (the agent refused the upgrade, or nobody answered) |
  /// | ``fullAccuracyDenied`` | the session gave a purpose and the grant is reduced, once no question is open |
  /// | ``serviceSessionRequired`` | never in a session's own diagnoses (holding one meets the rule); see ``LocationUpdate/serviceSessionRequired`` |
  /// | ``authorizationRequestInProgress`` | an agent (waymarkd's, or the terminal's) is asking a person now |
  public struct Diagnostic: Sendable, Hashable {
    /// The program's grant is `never`.
    public var authorizationDenied: Bool
    /// Location services are off for every program.
    public var authorizationDeniedGlobally: Bool
    /// Nothing can be given: the grants cannot be read.
    public var authorizationRestricted: Bool
    /// The session needs `always`; the grant is `whenInUse`.
    public var insufficientlyInUse: Bool
    /// The question for `always` was settled, and not with `always`.
    public var alwaysAuthorizationDenied: Bool
    /// Full accuracy was asked for (a purpose) and the grant is reduced.
    public var fullAccuracyDenied: Bool
    /// No session is held where one is required (never raised in a session's own diagnoses).
    public var serviceSessionRequired: Bool
    /// A person is being asked.
    public var authorizationRequestInProgress: Bool

    /// Creates a diagnosis (all flags `false` by default).
    public init(
      authorizationDenied: Bool = false, authorizationDeniedGlobally: Bool = false,
      authorizationRestricted: Bool = false, insufficientlyInUse: Bool = false,
      alwaysAuthorizationDenied: Bool = false, fullAccuracyDenied: Bool = false,
      serviceSessionRequired: Bool = false, authorizationRequestInProgress: Bool = false
    ) {
      self.authorizationDenied = authorizationDenied
      self.authorizationDeniedGlobally = authorizationDeniedGlobally
      self.authorizationRestricted = authorizationRestricted
      self.insufficientlyInUse = insufficientlyInUse
      self.alwaysAuthorizationDenied = alwaysAuthorizationDenied
      self.fullAccuracyDenied = fullAccuracyDenied
      self.serviceSessionRequired = serviceSessionRequired
      self.authorizationRequestInProgress = authorizationRequestInProgress
    }

    /// The diagnosis of a session needing `requirement` (and full accuracy when
    /// `wantsFullAccuracy`) under `state`: a pure function, the same in this process and for
    /// the daemon's answers.
    init(
      requirement: AuthorizationRequirement, wantsFullAccuracy: Bool, state: AuthorizationState,
      servicesEnabled: Bool, requestInProgress: Bool
    ) {
      self.init()
      authorizationDeniedGlobally = !servicesEnabled
      authorizationRestricted = servicesEnabled && state.status == .restricted
      authorizationDenied = state.status == .denied
      authorizationRequestInProgress = requestInProgress
      insufficientlyInUse = requirement == .always && state.status == .authorizedWhenInUse
      alwaysAuthorizationDenied = insufficientlyInUse && !requestInProgress
      fullAccuracyDenied =
        wantsFullAccuracy && state.status.isAuthorized && state.accuracy == .reduced
        && !requestInProgress
    }
  }
}
