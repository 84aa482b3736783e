import WaymarkIdentify

extension AgentRule {
  /// Whether `identity` is this agent.
  public func matches(_ identity: PeerIdentity) -> Bool {
    identity.executable == executable && (user == nil || user == identity.user)
  }
}
