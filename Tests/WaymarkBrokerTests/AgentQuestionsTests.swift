import Foundation
import Testing
import Waymark
import WaymarkCore

@testable import WaymarkBroker

@Suite("Agent questions")
struct AgentQuestionsTests {
  private typealias Peer = AgentQuestions.Peer

  private static func peer(
    _ connection: Int32, uid: uid_t, pid: pid_t, _ executable: String, agent: Bool = false,
    persists: Bool = false
  ) -> Peer {
    let user = uid == 0 ? "root" : "u\(uid)"
    return Peer(
      connection: connection,
      identity: PeerIdentity(uid: uid, pid: pid, user: user, executable: executable),
      isAgent: agent, mayPersist: persists)
  }

  private let asker = peer(10, uid: 1000, pid: 100, "/usr/bin/app")
  private let deadline = ContinuousClock.now + .seconds(30)

  @Test("the asker is never asked: not its connection, process or program")
  func neverTheAsker() {
    let itself = Self.peer(10, uid: 1000, pid: 100, "/usr/bin/app", agent: true)
    let sameProcess = Self.peer(11, uid: 1000, pid: 100, "/usr/bin/waymark", agent: true)
    let sameProgram = Self.peer(12, uid: 1000, pid: 101, "/usr/bin/app", agent: true)
    let otherUser = Self.peer(13, uid: 1001, pid: 102, "/usr/bin/waymark", agent: true)
    let notAgent = Self.peer(14, uid: 1000, pid: 103, "/usr/bin/waymark")
    var questions = AgentQuestions()
    let asked = questions.ask(
      .always, for: asker, among: [itself, sameProcess, sameProgram, otherUser, notAgent],
      deadline: deadline)
    #expect(asked == .open(id: 1, agent: nil))
    for peer in [itself, sameProcess, sameProgram, otherUser, notAgent] {
      #expect(questions.answer(1, .grant(.always, .full), from: peer) == .rejected)
    }
    // Positive control: the user's own agent, and root's.
    let own = Self.peer(15, uid: 1000, pid: 104, "/usr/bin/waymark", agent: true)
    let root = Self.peer(16, uid: 0, pid: 1, "/usr/bin/waymark", agent: true, persists: true)
    var again = AgentQuestions()
    #expect(
      again.ask(.always, for: asker, among: [root, own], deadline: deadline)
        == .open(id: 1, agent: 15))
    var rootOnly = AgentQuestions()
    #expect(
      rootOnly.ask(.always, for: asker, among: [root], deadline: deadline)
        == .open(id: 1, agent: 16))
  }

  @Test("an answer stands from root; from others only with the authority's yes, else denied")
  func proof() {
    let root = Self.peer(16, uid: 0, pid: 1, "/usr/bin/waymark", agent: true, persists: true)
    let own = Self.peer(15, uid: 1000, pid: 104, "/usr/bin/waymark", agent: true)
    var questions = AgentQuestions()
    _ = questions.ask(.always, for: asker, among: [root], deadline: deadline)
    let outcome = AgentQuestions.Outcome(id: 1, asker: asker, agent: 16)
    #expect(
      questions.answer(1, .grant(.always, .reduced), from: root)
        == .persist(outcome, level: .always, accuracy: .reduced))
    _ = questions.ask(.whenInUse, for: asker, among: [own], deadline: deadline)
    #expect(
      questions.answer(2, .grant(.whenInUse, .full), from: own)
        == .consult(
          id: 2, agent: own.identity, asker: asker.identity, answer: .grant(.whenInUse, .full)))
    // While the authority thinks, nobody else answers.
    #expect(questions.answer(2, .once(.full), from: root) == .rejected)
    // Its no: the asking connection is denied (not "allowed once", as before).
    #expect(
      questions.decide(2, allowed: false)
        == .once(
          AgentQuestions.Outcome(id: 2, asker: asker, agent: 15),
          state: AuthorizationState(status: .denied), downgraded: true))
    _ = questions.ask(.whenInUse, for: asker, among: [own], deadline: deadline)
    _ = questions.answer(3, .grant(.never, .full), from: own)
    #expect(
      questions.decide(3, allowed: true)
        == .persist(
          AgentQuestions.Outcome(id: 3, asker: asker, agent: 15), level: .never,
          accuracy: .full))
    #expect(questions.open.isEmpty)
  }

  @Test("'once' is a decision too: from others it needs the authority's yes; from root it holds")
  func onceNeedsProof() {
    let root = Self.peer(16, uid: 0, pid: 1, "/usr/bin/waymark", agent: true, persists: true)
    let own = Self.peer(15, uid: 1000, pid: 104, "/usr/bin/waymark", agent: true)
    var questions = AgentQuestions()
    _ = questions.ask(.whenInUse, for: asker, among: [own], deadline: deadline)
    #expect(
      questions.answer(1, .once(.reduced), from: own)
        == .consult(id: 1, agent: own.identity, asker: asker.identity, answer: .once(.reduced)))
    #expect(
      questions.decide(1, allowed: false)
        == .once(
          AgentQuestions.Outcome(id: 1, asker: asker, agent: 15),
          state: AuthorizationState(status: .denied), downgraded: true))
    _ = questions.ask(.whenInUse, for: asker, among: [own], deadline: deadline)
    _ = questions.answer(2, .once(.full), from: own)
    #expect(
      questions.decide(2, allowed: true)
        == .once(
          AgentQuestions.Outcome(id: 2, asker: asker, agent: 15),
          state: AuthorizationState(status: .authorizedWhenInUse, accuracy: .full),
          downgraded: false))
    // Positive control: root's "once" needs nobody's confirmation.
    _ = questions.ask(.whenInUse, for: asker, among: [root], deadline: deadline)
    #expect(
      questions.answer(3, .once(.full), from: root)
        == .once(
          AgentQuestions.Outcome(id: 3, asker: asker, agent: 16),
          state: AuthorizationState(status: .authorizedWhenInUse, accuracy: .full),
          downgraded: false))
  }

  @Test("a scripted agent's answer never asks the authority: denied, unless root's")
  func scriptedAgentsNeedRootOrTheGroup() {
    var script = Self.peer(17, uid: 1000, pid: 105, "/usr/bin/waymark", agent: true)
    script.isScripted = true
    var questions = AgentQuestions()
    _ = questions.ask(.always, for: asker, among: [script], deadline: deadline)
    #expect(
      questions.answer(1, .grant(.always, .full), from: script)
        == .once(
          AgentQuestions.Outcome(id: 1, asker: asker, agent: 17),
          state: AuthorizationState(status: .denied), downgraded: true))
    _ = questions.ask(.always, for: asker, among: [script], deadline: deadline)
    #expect(
      questions.answer(2, .once(.full), from: script)
        == .once(
          AgentQuestions.Outcome(id: 2, asker: asker, agent: 17),
          state: AuthorizationState(status: .denied), downgraded: true))
    // Positive control: the same script as root (or group waymark) persists.
    var rootScript = Self.peer(18, uid: 0, pid: 106, "/usr/bin/waymark", agent: true)
    rootScript.isScripted = true
    rootScript.mayPersist = true
    _ = questions.ask(.always, for: asker, among: [rootScript], deadline: deadline)
    #expect(
      questions.answer(3, .grant(.always, .full), from: rootScript)
        == .persist(
          AgentQuestions.Outcome(id: 3, asker: asker, agent: 18), level: .always,
          accuracy: .full))
  }

  @Test("one question per connection, a few per uid; deadlines and departures close them")
  func limits() {
    var questions = AgentQuestions(maximumPerUser: 2)
    let now = ContinuousClock.now
    #expect(questions.ask(.whenInUse, for: asker, among: [], deadline: now) != .alreadyOpen)
    #expect(questions.ask(.whenInUse, for: asker, among: [], deadline: now) == .alreadyOpen)
    let second = Self.peer(20, uid: 1000, pid: 200, "/usr/bin/other")
    let third = Self.peer(21, uid: 1000, pid: 201, "/usr/bin/third")
    let bob = Self.peer(22, uid: 1001, pid: 202, "/usr/bin/third")
    #expect(
      questions.ask(.whenInUse, for: second, among: [], deadline: now + .seconds(9)) != .overLimit)
    #expect(questions.ask(.whenInUse, for: third, among: [], deadline: now) == .overLimit)
    #expect(questions.ask(.whenInUse, for: bob, among: [], deadline: now) != .overLimit)
    #expect(questions.expire(now: now).map(\.connection) == [10, 22])
    questions.drop(connection: 20)
    #expect(questions.open.isEmpty)
    #expect(questions.nextDeadline == nil)
  }
}
