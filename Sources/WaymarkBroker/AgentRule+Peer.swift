import WaymarkIdentify

extension AgentRule {
  /// Whether `identity` is this agent.
  package func matches(_ identity: PeerIdentity) -> Bool {
    identity.executable == executable && (user == nil || user == identity.user)
  }
}
