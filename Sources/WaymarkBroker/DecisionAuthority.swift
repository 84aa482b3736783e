/// Decides whether an agent's answer stands: proof that a person, not a program, decided.
///
/// The broker asks it about every answer (`once` as much as `whenInUse`, `always`, `never`) from
/// an agent that is neither root nor in the `waymark` group; without its yes the asking
/// connection is denied, once. Implementations may block (polkit is asked over D-Bus): the
/// broker calls them off its own thread.
package protocol DecisionAuthority: Sendable {
  /// Whether `agent`'s `answer` about `client` stands.
  ///
  /// - Parameters:
  ///   - answer: what the agent answered (level and accuracy), for the person to confirm.
  ///   - agent: the process that answered (its pid and start time name it to polkit).
  ///   - client: the program the answer is about: one of the agent user's own programs, or
  ///     another user's (only root's agent answers for other users).
  /// - Returns: `true` only on a definite yes; any failure to ask is a no.
  func confirms(
    _ answer: DaemonRequest.AgentAnswer, by agent: PeerIdentity, about client: PeerIdentity
  ) -> Bool
}

/// The authority that never says yes: only root and the `waymark` group decide.
package struct NoDecisionAuthority: DecisionAuthority {
  /// Creates the authority.
  package init() {}

  package func confirms(
    _ answer: DaemonRequest.AgentAnswer, by agent: PeerIdentity, about client: PeerIdentity
  ) -> Bool {
    false
  }
}
