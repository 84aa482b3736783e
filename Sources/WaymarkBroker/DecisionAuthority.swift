/// Decides whether an agent's answer may be stored as a grant: proof that a person, not a
/// program, decided.
///
/// The broker asks it only for answers that would persist (`whenInUse`, `always`, `never`) from
/// an agent that is neither root nor in the `waymark` group; without its yes the answer counts as
/// "allow once" (or "deny once"), for that connection only. Implementations may block (polkit is
/// asked over D-Bus): the broker calls them off its own thread.
public protocol DecisionAuthority: Sendable {
  /// Whether `agent`'s answer about `client` may persist.
  ///
  /// - Parameters:
  ///   - agent: the process that answered (its pid and start time name it to polkit).
  ///   - client: the program the answer is about: one of the agent user's own programs, or
  ///     another user's (only root's agent answers for other users).
  /// - Returns: `true` only on a definite yes; any failure to ask is a no.
  func mayPersist(answerBy agent: PeerIdentity, about client: PeerIdentity) -> Bool
}

/// The authority that never says yes: only root and the `waymark` group make lasting grants.
public struct NoDecisionAuthority: DecisionAuthority {
  /// Creates the authority.
  public init() {}

  public func mayPersist(answerBy agent: PeerIdentity, about client: PeerIdentity) -> Bool {
    false
  }
}
