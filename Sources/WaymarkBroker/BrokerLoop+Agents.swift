import FoundationEssentials
import Waymark
import WaymarkCore

extension BrokerLoop {
  // MARK: Agents

  /// `AGENT`: only a program the operator lists in `agents` may be one, and a scripted one
  /// (answers from a script, not from a person at a prompt) only as root or group `waymark`:
  /// anyone else's script could make any program's decision.
  func registerAgent(_ client: BrokerClient, enable: Bool, scripted: Bool) {
    let identity = client.session.identity
    if enable, !configuration.agents.contains(where: { $0.matches(identity) }) {
      fail(client, "not an agent: only the programs in 'agents' of waymark.conf may answer")
      writeThrottled(
        .notice, uid: identity.uid,
        "\(client.logName) asked to be an agent; refused (not in agents)")
      return
    }
    if enable, scripted, !client.mayPersist {
      fail(
        client,
        "a scripted agent (--answer) must run as root or in group "
          + "'\(configuration.deciderGroup)': a script is no person's decision")
      writeThrottled(
        .notice, uid: identity.uid,
        "\(client.logName) asked to be a scripted agent; refused (not root, not in group "
          + "\(configuration.deciderGroup))")
      return
    }
    client.session.isAgent = enable
    client.session.isScriptedAgent = enable && scripted
    send(DaemonMessage.agent(enabled: enable).line, to: client)
    server.write(
      .info, "\(client.logName) " + (enable ? "is an agent" : "is no longer an agent"))
  }

  /// `REQUEST` (or a `SESSION` that needs a grant): announces the state when no question is
  /// needed, else puts one to an agent, with the session's `purpose` (at most 200 scalars,
  /// JSON-escaped in `ASK`; the agent escapes it again for its terminal).
  ///
  /// - Returns: whether a question is open for the client now (nothing was announced).
  @discardableResult
  func ask(_ level: GrantLevel, for client: BrokerClient, purpose: String? = nil) -> Bool {
    update(&client.session)
    let state = client.session.effective
    let needsQuestion: Bool
    switch state.status {
    case .notDetermined: needsQuestion = true
    case .authorizedWhenInUse:
      needsQuestion = level == .always && client.session.stored.status == .authorizedWhenInUse
    case .restricted, .denied, .authorizedAlways: needsQuestion = false
    }
    guard needsQuestion else {
      client.session.announced = state
      announce(state, to: client)
      return false
    }
    let peers = clients.values.filter { !$0.isClosing && $0.session.isAgent }.map(\.peer)
    let deadline =
      clock.now + .milliseconds(Int64(saturating: configuration.agentTimeoutSeconds * 1000))
    switch questions.ask(level, for: client.peer, among: peers, deadline: deadline) {
    case .alreadyOpen:
      return true
    case .overLimit:
      fail(
        client,
        "too many requests waiting: \(configuration.maximumQuestionsPerUser) of this user")
      announce(AuthorizationState(status: .denied), to: client)
      return false
    case .open(let id, let agent):
      guard let agent = agent.flatMap({ clients[$0] }) else {
        server.write(
          .info, "\(client.logName) asks for \(level.rawValue); no agent")
        return true
      }
      let identity = client.session.identity
      let question = DaemonMessage.Ask(
        id: id, clientID: identity.clientID, processID: Int(identity.pid), level: level,
        purpose: purpose)
      send(DaemonMessage.ask(question).line, to: agent)
      return true
    }
  }

  func answerQuestion(
    _ id: Int, _ answer: DaemonRequest.AgentAnswer, from agent: BrokerClient
  ) {
    let verdict = questions.answer(id, answer, from: agent.peer)
    switch verdict {
    case .rejected:
      fail(agent, "no open question \(id) for this agent")
    case .consult(let id, let agentIdentity, let askerIdentity, let answer):
      // The authority may block (polkit): asked on a thread of its own, its verdict comes back
      // through the inbox.
      let server = self.server
      let authority = server.decisionAuthority
      if asksAuthorityInline {
        let allowed = authority.confirms(answer, by: agentIdentity, about: askerIdentity)
        server.enqueue(.decision(id: id, allowed: allowed))
        return
      }
      DetachedThread.start(name: "waymark-decide") {
        let allowed = authority.confirms(answer, by: agentIdentity, about: askerIdentity)
        server.enqueue(.decision(id: id, allowed: allowed))
      }
    case .persist, .once:
      settle(verdict)
    }
  }

  /// Applies a settled answer: records the grant or sets the connection's "once", tells the
  /// agent what was done (`DECIDED`) and the asker its state.
  func settle(_ verdict: AgentQuestions.Verdict) {
    let outcome: AgentQuestions.Outcome
    var recorded: (level: GrantLevel, accuracy: AccuracyAuthorization)?
    var once: AuthorizationState?
    var reason: String?
    var keptWhenInUse = false
    switch verdict {
    case .rejected, .consult: return
    case .persist(let settled, let level, let accuracy):
      outcome = settled
      if let client = clients[settled.asker.connection], grantsFull(for: client) {
        once = AgentQuestions.once(level, accuracy)
        reason = "this user has \(configuration.maximumAgentGrantsPerUser) grants already"
      } else {
        recorded = (level, accuracy)
      }
    case .once(let settled, let state, let downgraded):
      outcome = settled
      once = state
      if downgraded {
        reason =
          "an answer counts only from root, group '\(configuration.deciderGroup)' or with "
          + "polkit's yes; denied for this connection"
      }
    }
    guard let client = clients[outcome.asker.connection] else { return }
    let clientID = client.session.identity.clientID
    let agentName = clients[outcome.agent]?.session.identity.clientID ?? "a gone agent"
    if let once {
      client.session.once = once
      let what = once.status == .denied ? "denied once" : "allowed once"
      server.write(
        .notice,
        "\(LogText.escaped(clientID)): \(what) (\(once.accuracy.rawValue)) by agent "
          + LogText.escaped(agentName) + (reason.map { "; \($0)" } ?? ""))
    } else if let recording = recorded {
      if recording.level == .never, client.session.stored.status == .authorizedWhenInUse {
        // A refused upgrade keeps when-in-use: nothing is written, and the agent is told so.
        recorded = nil
        keptWhenInUse = true
        reason = "a refused upgrade keeps whenInUse"
      } else {
        do {
          try server.grantStore.save(
            Grant(
              clientID: clientID, level: recording.level, accuracy: recording.accuracy,
              grantedAt: clock.date()))
          server.write(
            .notice,
            "\(LogText.escaped(clientID)): \(recording.level.rawValue) "
              + "(\(recording.accuracy.rawValue)) granted by agent \(LogText.escaped(agentName))")
        } catch {
          if let agent = clients[outcome.agent] {
            fail(agent, "cannot record the grant: \(error)")
          }
          recorded = nil
        }
      }
    }
    if let agent = clients[outcome.agent] {
      let refused = once?.status == .denied || keptWhenInUse
      let grant: DaemonMessage.Decided.Outcome =
        switch recorded?.level {
        case .whenInUse?: .whenInUse
        case .always?: .always
        case .never?: .never
        case nil: refused ? .never : .once
        }
      let decided = DaemonMessage.Decided(
        id: outcome.id, clientID: clientID, grant: grant, recorded: recorded != nil,
        reason: reason)
      send(DaemonMessage.decided(decided).line, to: agent)
    }
    let told = client.session.announced
    refreshGrants(force: true)
    // The asking client always hears an answer, once: from the refresh when its state changed,
    // else here.
    if client.session.announced == told {
      announce(client.session.effective, to: client)
    }
  }

  /// Whether the agents have recorded as many grants for `client`'s user as they may.
  private func grantsFull(for client: BrokerClient) -> Bool {
    let identity = client.session.identity
    guard identity.uid != 0, grants[identity.clientID] == nil else { return false }
    let prefix = identity.user + ":"
    return grants.keys.filter { $0.hasPrefix(prefix) }.count
      >= configuration.maximumAgentGrantsPerUser
  }

  func expireQuestions(now: ContinuousClock.Instant) {
    for asker in questions.expire(now: now) {
      guard let client = clients[asker.connection] else { continue }
      // Answered `denied`, not recorded: the client may ask again later. A client whose state
      // was settled meanwhile (`waymark auth grant`) hears that state instead.
      update(&client.session)
      let state = client.session.effective
      announce(
        state.status == .notDetermined ? AuthorizationState(status: .denied) : state, to: client)
      writeThrottled(
        .info, uid: asker.identity.uid, "\(client.logName): no answer to its request; told denied")
    }
  }
}
