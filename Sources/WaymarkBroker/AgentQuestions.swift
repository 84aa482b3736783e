import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore

/// The agents' side of the broker as a value with no I/O: the open questions, who is asked,
/// who may answer, and what an answer does. The broker's loop owns one and acts on its
/// verdicts; `Fuzz/AgentQuestionsFuzz.swift` drives it with arbitrary sequences of messages.
///
/// The rules:
/// - A question is never put to, nor answered by, the connection, the process or the client id
///   that asked. An agent answers for peers of its own uid; root's agent for every uid.
/// - Every answer, `once` as much as a lasting one, needs proof that a person decided: an agent
///   that ``Peer/mayPersist`` (root, group `waymark`), or a yes from the ``DecisionAuthority``
///   for that very question (``Verdict/consult(id:agent:asker:answer:)``; never asked for a
///   scripted agent, ``Peer/isScripted``, whose word proves nothing). Without it the asking
///   connection is denied, once: an answer nobody proved authorizes nothing.
/// - A uid has at most ``maximumPerUser`` questions open; a connection at most one.
///
/// ```
///            ask                 answer (root, group waymark)
///   (none) ───────▶ open ─────────────────────────────▶ (none): persist, or once
///                    │  answer (scripted, not root)      ▲
///                    ├──────────────────────▶ (none): denied once
///                    │  answer (anyone else)             │ decide(allowed)
///                    └──────────────────────▶ consulting ─┘  (no: denied once)
///   open, consulting ── deadline, asker gone ──▶ (none)
/// ```
package struct AgentQuestions: Sendable {
  /// A connected peer, as the rules see it.
  package struct Peer: Sendable, Hashable {
    /// The connection (its descriptor in the broker).
    package var connection: Int32
    /// Who the peer is.
    package var identity: PeerIdentity
    /// A configured agent that sent `AGENT`.
    package var isAgent: Bool
    /// Root or a member of group `waymark`: its answers persist without asking anyone.
    package var mayPersist: Bool
    /// An agent that answers from a script (`waymark agent --answer`), not a person at a prompt:
    /// the authority is not asked for it, so its lasting answers persist only when it
    /// ``mayPersist``.
    package var isScripted: Bool

    /// Creates a peer.
    package init(
      connection: Int32, identity: PeerIdentity, isAgent: Bool, mayPersist: Bool,
      isScripted: Bool = false
    ) {
      self.connection = connection
      self.identity = identity
      self.isAgent = isAgent
      self.mayPersist = mayPersist
      self.isScripted = isScripted
    }
  }

  /// An open question.
  package struct Question: Sendable, Hashable {
    /// Its id, as in `ASK` and `ANSWER`.
    package var id: Int
    /// The peer that asked.
    package var asker: Peer
    /// The level asked for.
    package var level: GrantLevel
    /// When it is answered `denied` (not recorded) if nobody answered.
    package var deadline: ContinuousClock.Instant
    /// A lasting answer waiting for the authority's verdict.
    package var pending: Pending?
  }

  /// An answer from an agent whose word alone proves nothing, waiting for the authority.
  package struct Pending: Sendable, Hashable {
    /// The agent that answered.
    package var agent: Peer
    /// What it answered.
    package var answer: DaemonRequest.AgentAnswer
  }

  /// What `ask` did.
  package enum Asked: Sendable, Hashable {
    /// A question `id` is open; `agent` is the connection to send the `ASK` to (`nil`: none
    /// may answer now; it waits for its deadline).
    case open(id: Int, agent: Int32?)
    /// The connection already has a question open.
    case alreadyOpen
    /// The asker's uid has ``maximumPerUser`` questions open.
    case overLimit
  }

  /// What an answer (or the authority's verdict) means.
  package enum Verdict: Sendable, Hashable {
    /// Record `level`/`accuracy` for `asker`'s client id.
    case persist(Outcome, level: GrantLevel, accuracy: AccuracyAuthorization)
    /// For the asking connection only: `state` (authorized, or denied).
    case once(Outcome, state: AuthorizationState, downgraded: Bool)
    /// Ask the authority whether `agent`'s `answer` about `asker` stands, then call
    /// ``decide(_:allowed:)`` with question `id`.
    case consult(
      id: Int, agent: PeerIdentity, asker: PeerIdentity, answer: DaemonRequest.AgentAnswer)
    /// Not an open question this peer may answer.
    case rejected
  }

  /// Which question was settled, for whom, by whom.
  package struct Outcome: Sendable, Hashable {
    /// The question's id.
    package var id: Int
    /// The asking peer.
    package var asker: Peer
    /// The connection of the agent that answered.
    package var agent: Int32
  }

  /// Questions a uid may have open at once.
  package let maximumPerUser: Int
  /// The open questions by id.
  package private(set) var open: [Int: Question] = [:]
  private var nextID = 1

  /// No question open; at most `maximumPerUser` per uid.
  package init(maximumPerUser: Int = 8) {
    self.maximumPerUser = maximumPerUser
  }

  /// Whether `agent` may be asked about, and answer for, `asker`: a registered agent that is
  /// not the asker's connection, process or program, of the asker's uid or root.
  package static func mayAnswer(_ agent: Peer, for asker: Peer) -> Bool {
    agent.isAgent && agent.connection != asker.connection
      && agent.identity.pid != asker.identity.pid
      && agent.identity.clientID != asker.identity.clientID
      && (agent.identity.uid == 0 || agent.identity.uid == asker.identity.uid)
  }

  /// Opens a question for `asker` about `level`, choosing among `peers` the agent to ask: one
  /// of the asker's uid first, else root's (the lowest connection number among equals).
  package mutating func ask(
    _ level: GrantLevel, for asker: Peer, among peers: [Peer],
    deadline: ContinuousClock.Instant
  ) -> Asked {
    guard !open.values.contains(where: { $0.asker.connection == asker.connection }) else {
      return .alreadyOpen
    }
    guard openCount(uid: asker.identity.uid) < maximumPerUser else { return .overLimit }
    let id = nextID
    nextID += 1
    open[id] = Question(id: id, asker: asker, level: level, deadline: deadline)
    let candidates = peers.filter { Self.mayAnswer($0, for: asker) }
      .sorted { $0.connection < $1.connection }
    let agent =
      candidates.first { $0.identity.uid == asker.identity.uid } ?? candidates.first
    return .open(id: id, agent: agent?.connection)
  }

  /// `agent`'s answer to question `id`.
  package mutating func answer(
    _ id: Int, _ answer: DaemonRequest.AgentAnswer, from agent: Peer
  ) -> Verdict {
    guard let question = open[id], question.pending == nil,
      Self.mayAnswer(agent, for: question.asker)
    else { return .rejected }
    let outcome = Outcome(id: id, asker: question.asker, agent: agent.connection)
    if agent.mayPersist {
      open[id] = nil
      return Self.verdict(of: answer, outcome)
    }
    // A script is no proof that a person decided; polkit would only see its process.
    if agent.isScripted {
      open[id] = nil
      return .once(outcome, state: AuthorizationState(status: .denied), downgraded: true)
    }
    open[id]?.pending = Pending(agent: agent, answer: answer)
    return .consult(id: id, agent: agent.identity, asker: question.asker.identity, answer: answer)
  }

  /// What a proven `answer` does: a lasting one persists, `once` holds for the connection.
  private static func verdict(of answer: DaemonRequest.AgentAnswer, _ outcome: Outcome) -> Verdict {
    switch answer {
    case .once(let accuracy):
      .once(
        outcome, state: AuthorizationState(status: .authorizedWhenInUse, accuracy: accuracy),
        downgraded: false)
    case .grant(let level, let accuracy):
      .persist(outcome, level: level, accuracy: accuracy)
    }
  }

  /// The authority's verdict on the answer to question `id`: the answer stands when
  /// `allowed`, else the asking connection is denied once. `nil` when the question is gone
  /// (asker left, deadline).
  package mutating func decide(_ id: Int, allowed: Bool) -> Verdict? {
    guard let question = open[id], let pending = question.pending else { return nil }
    open[id] = nil
    let outcome = Outcome(id: id, asker: question.asker, agent: pending.agent.connection)
    if allowed { return Self.verdict(of: pending.answer, outcome) }
    return .once(outcome, state: AuthorizationState(status: .denied), downgraded: true)
  }

  /// A lasting answer counted once: `never` denies this connection, the others allow it
  /// while in use.
  package static func once(_ level: GrantLevel, _ accuracy: AccuracyAuthorization)
    -> AuthorizationState
  {
    level == .never
      ? AuthorizationState(status: .denied)
      : AuthorizationState(status: .authorizedWhenInUse, accuracy: accuracy)
  }

  /// Closes the questions whose deadline passed; returns their askers (told `denied`, not
  /// recorded).
  package mutating func expire(now: ContinuousClock.Instant) -> [Peer] {
    let expired = open.values.filter { $0.deadline <= now }.sorted { $0.id < $1.id }
    for question in expired { open[question.id] = nil }
    return expired.map(\.asker)
  }

  /// Forgets the questions of a connection that closed; an answer it gave that waits for the
  /// authority stays, with no connection to tell (descriptors are reused).
  package mutating func drop(connection: Int32) {
    open = open.filter { $0.value.asker.connection != connection }
    for (id, question) in open where question.pending?.agent.connection == connection {
      open[id]?.pending?.agent.connection = -1
    }
  }

  /// The earliest deadline of an open question.
  package var nextDeadline: ContinuousClock.Instant? { open.values.map(\.deadline).min() }

  /// Questions open for peers of `uid`.
  package func openCount(uid: uid_t) -> Int {
    open.values.filter { $0.asker.identity.uid == uid }.count
  }
}
