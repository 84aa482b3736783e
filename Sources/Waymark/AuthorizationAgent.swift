import WaymarkCore

/// A question put to an ``AuthorizationAgent``: may this client have locations?
public struct AuthorizationRequest: Sendable, Hashable {
  /// The client asking.
  public var clientID: String
  /// What it asks for: `GrantLevel.whenInUse` or `GrantLevel.always`.
  public var level: GrantLevel
  /// Why the client wants locations, shown to the person (like `NSLocationUsageDescription`).
  public var purpose: String?
  /// The grant it already has (an upgrade from when-in-use to always), if any.
  public var currentGrant: Grant?

  /// Creates a request.
  public init(
    clientID: String, level: GrantLevel, purpose: String? = nil, currentGrant: Grant? = nil
  ) {
    self.clientID = clientID
    self.level = level
    self.purpose = purpose
    self.currentGrant = currentGrant
  }
}

/// What an agent answered.
public enum AuthorizationAnswer: Sendable, Hashable {
  /// Don't allow. Recorded as a `never` grant (an upgrade refusal keeps the earlier grant).
  case deny
  /// Allow while in use for the life of this process only; nothing is recorded.
  case allowOnce(AccuracyAuthorization)
  /// Allow at `level` with `accuracy`, recorded in the grant store.
  case allow(GrantLevel, AccuracyAuthorization)
}

/// Decides authorization requests that have no recorded answer: a person at a terminal, a
/// policy, or (later) a desktop agent.
public protocol AuthorizationAgent: Sendable {
  /// Answers `request`. May take as long as the person needs.
  func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer
}

/// An agent for non-interactive processes: answers every request with a fixed answer.
///
/// The default answer is ``AuthorizationAnswer/deny``: a process nobody can ask gets nothing
/// until someone runs `waymark auth grant`.
public struct PolicyAuthorizationAgent: AuthorizationAgent {
  /// The answer given to every request.
  public var answer: AuthorizationAnswer

  /// Creates a policy agent answering `answer` (deny by default).
  public init(answer: AuthorizationAnswer = .deny) { self.answer = answer }

  public func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer { answer }
}
