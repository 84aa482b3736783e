// libFuzzer entry point for the broker's agent rules (AGENT / REQUEST / ASK / ANSWER and the
// authority's verdicts), driven as sequences of messages from seven simulated peers through
// AgentQuestions and BrokerSession, with fixes delivered in between. Built by
// Fuzz/run-agents.sh; not part of the package.
//
// Invariants checked after every step:
// - an ASK never goes to the asking connection, process or client id, nor to a non-agent, nor
//   across users (except root's agent);
// - an answer is never taken from the asker's connection, process or client id;
// - a grant is recorded only from an agent that may persist, or after the authority said yes
//   (never asked for a scripted agent);
// - an answer authorizes ("once" included) only from an agent that may persist, or after the
//   authority said yes;
// - no location goes to a session that is not authorized;
// - a reduced client id never gets two locations less than the interval apart.
import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore
import WaymarkIdentify

@testable import WaymarkBroker

private struct SimulatedPeer {
  var identity: PeerIdentity
  var mayPersist: Bool
  var connection: Int32
  var session: BrokerSession
  var isAgent = false
  var isScripted = false
}

private let agentRule = AgentRule(user: nil, executable: "/usr/bin/waymark")
private let interval = ReducedAccuracy.standard.minimumInterval

private func makePeers() -> [SimulatedPeer] {
  let identities: [(uid_t, pid_t, String, String, Bool)] = [
    (1000, 100, "alice", "/usr/bin/app", false),
    (1000, 101, "alice", "/usr/bin/waymark", false),
    (1000, 102, "alice", "/usr/bin/app", false),  // the same program, another process
    (1001, 103, "bob", "/usr/bin/waymark", false),
    (0, 104, "root", "/usr/bin/waymark", true),
    (1000, 100, "alice", "/usr/bin/app", false),  // the same process, another connection
    (1000, 106, "alice", "/usr/bin/waymark", true),  // in group waymark
  ]
  return identities.enumerated().map { index, entry in
    let identity = PeerIdentity(uid: entry.0, pid: entry.1, user: entry.2, executable: entry.3)
    return SimulatedPeer(
      identity: identity, mayPersist: entry.4, connection: Int32(index + 10),
      session: BrokerSession(identity: identity))
  }
}

private func peer(_ p: SimulatedPeer) -> AgentQuestions.Peer {
  AgentQuestions.Peer(
    connection: p.connection, identity: p.identity, isAgent: p.isAgent, mayPersist: p.mayPersist,
    isScripted: p.isScripted)
}

/// `agent` (an agent when it answered: it may have stopped being one while the authority
/// decided, `isAgent` false) is not the asker and may speak for its user.
private func checkNotSelf(
  _ agent: AgentQuestions.Peer, _ asker: AgentQuestions.Peer, whenAnswered: Bool = false
) {
  precondition(agent.connection != asker.connection, "the asking connection answers")
  precondition(agent.identity.pid != asker.identity.pid, "the asking process answers")
  precondition(agent.identity.clientID != asker.identity.clientID, "the asking program answers")
  precondition(agent.isAgent || whenAnswered, "a non-agent answers")
  precondition(
    agent.identity.uid == 0 || agent.identity.uid == asker.identity.uid, "another user answers")
}

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzAgentQuestions(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  var peers = makePeers()
  var questions = AgentQuestions(maximumPerUser: 3)
  var store: [String: Grant] = [:]
  var consulted: Set<Int> = []
  var releases: [String: ReducedRelease] = [:]
  var delivered: [String: Date] = [:]
  let base = ContinuousClock.now
  var now = base
  var fixTime = Date(timeIntervalSince1970: 1_800_000_000)
  var nextConnection: Int32 = 100
  var index = 0
  func next() -> Int {
    defer { index += 1 }
    return index < bytes.count ? Int(bytes[index]) : 0
  }
  func refresh() {
    for i in peers.indices {
      peers[i].session.stored =
        store[peers[i].identity.clientID]?.state ?? AuthorizationState(status: .notDetermined)
    }
  }
  func apply(_ verdict: AgentQuestions.Verdict, authorityYes: Bool) {
    switch verdict {
    case .rejected, .consult: break
    case .persist(let outcome, let level, let accuracy):
      let agent = peers.first { $0.connection == outcome.agent }
      precondition(
        authorityYes || agent?.mayPersist == true, "a grant persisted without proof")
      if let agent { checkNotSelf(peer(agent), outcome.asker, whenAnswered: authorityYes) }
      store[outcome.asker.identity.clientID] = Grant(
        clientID: outcome.asker.identity.clientID, level: level, accuracy: accuracy,
        grantedAt: fixTime)
    case .once(let outcome, let state, _):
      // "Once" is a decision too: it authorizes only on root's, group waymark's or the
      // authority's word.
      let agent = peers.first { $0.connection == outcome.agent }
      precondition(
        state.status == .denied || authorityYes || agent?.mayPersist == true,
        "an answer authorized without proof")
      if let i = peers.firstIndex(where: { $0.connection == outcome.asker.connection }) {
        peers[i].session.once = state
      }
    }
    refresh()
  }
  while index < bytes.count {
    let op = next() % 9
    let who = next() % peers.count
    switch op {
    case 0:  // AGENT enable: only a configured agent becomes one; scripted or at a prompt
      peers[who].isAgent = agentRule.matches(peers[who].identity)
      peers[who].isScripted = peers[who].isAgent && next() % 2 == 0
      peers[who].session.isAgent = peers[who].isAgent
    case 1:
      peers[who].isAgent = false
      peers[who].session.isAgent = false
    case 2:  // REQUEST
      let level: GrantLevel = next() % 2 == 0 ? .whenInUse : .always
      let asker = peer(peers[who])
      let asked = questions.ask(
        level, for: asker, among: peers.map(peer), deadline: now + .seconds(next() % 40))
      if case .open(_, let agent?) = asked,
        let target = peers.first(where: { $0.connection == agent })
      {
        checkNotSelf(peer(target), asker)
      }
    case 3:  // ANSWER
      let ids = questions.open.keys.sorted()
      let id = ids.isEmpty ? next() : ids[next() % ids.count]
      let answer = fuzzAnswer(next())
      let question = questions.open[id]
      let agent = peer(peers[who])
      let verdict = questions.answer(id, answer, from: agent)
      if verdict != .rejected, let question { checkNotSelf(agent, question.asker) }
      if case .consult(let id, _, _, _) = verdict {
        precondition(!agent.mayPersist, "an agent that may persist was sent to the authority")
        precondition(!agent.isScripted, "a scripted agent was sent to the authority")
        consulted.insert(id)
      }
      apply(verdict, authorityYes: false)
    case 4:  // the authority's verdict
      let ids = consulted.sorted()
      guard !ids.isEmpty else { break }
      let id = ids[next() % ids.count]
      consulted.remove(id)
      let allowed = next() % 2 == 0
      if let verdict = questions.decide(id, allowed: allowed) {
        apply(verdict, authorityYes: allowed)
      }
    case 5:  // time passes
      now = now + .seconds(next() % 20)
      for asker in questions.expire(now: now) {
        precondition(asker.connection >= 10)
      }
    case 6:  // reconnect: the old connection's questions go; a new connection, no "once"
      questions.drop(connection: peers[who].connection)
      peers[who].connection = nextConnection
      nextConnection += 1
      peers[who].isAgent = false
      peers[who].session = BrokerSession(identity: peers[who].identity)
      refresh()
    case 7:  // WATCH, maybe reduced, maybe with a distance filter
      let flags = next()
      peers[who].session.watch = DaemonRequest.Watch(
        reduced: flags & 1 != 0, distanceMeters: flags & 2 != 0 ? Double(flags) : nil)
    default:  // a fix
      fixTime = fixTime.addingTimeInterval(Double(1 + next() % 120))
      let location = Location(
        coordinate: Coordinate(
          latitude: 52 + Double(next()) / 1000, longitude: 13 + Double(next()) / 1000),
        horizontalAccuracy: 5, timestamp: fixTime)
      for i in peers.indices {
        let clientID = peers[i].identity.clientID
        var release = releases[clientID] ?? ReducedRelease()
        guard
          peers[i].session.shouldDeliver(
            location, reduced: .standard, release: release)
        else { continue }
        precondition(
          peers[i].session.effective.status.isAuthorized, "a location to an unauthorized client")
        if peers[i].session.isReduced {
          if let last = delivered[clientID], last != fixTime {
            precondition(
              fixTime.timeIntervalSince(last) >= interval, "reduced locations too close")
          }
          delivered[clientID] = fixTime
          release.release(Fix(time: fixTime))
          releases[clientID] = release
        }
      }
    }
  }
  return 0
}
