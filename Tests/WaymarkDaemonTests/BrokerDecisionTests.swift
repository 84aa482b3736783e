import Foundation
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkIdentify
import WaymarkTesting

/// A decision authority that answers yes for the client ids in `allowed`, after the test lets
/// it (it blocks, as polkit's pkcheck may).
private final class HeldAuthority: DecisionAuthority, Sendable {
  let allowed: Set<String>
  private let gate = DispatchSemaphore(value: 0)
  private let asked = Locked<[String]>([])

  init(allowed: Set<String>) { self.allowed = allowed }

  func confirms(
    _ answer: DaemonRequest.AgentAnswer, by agent: PeerIdentity, about client: PeerIdentity
  ) -> Bool {
    asked.withLock { $0.append(client.clientID) }
    gate.wait()
    return allowed.contains(client.clientID)
  }

  var questions: [String] { asked.withLock { $0 } }
  func release(_ count: Int) { for _ in 0..<count { gate.signal() } }
}

/// A second program for the same user: Perl (its client id is `<user>:/usr/bin/perl`).
private let perlAsker = #"""
  use IO::Socket::UNIX;
  $| = 1;
  my $s = IO::Socket::UNIX->new(Type => SOCK_STREAM(), Peer => $ARGV[0]) or die "connect: $!";
  print $s "{\"class\":\"REQUEST\",\"level\":\"always\"}\n";
  while (my $line = <$s>) { print STDERR $line; }
  """#

/// The broker's path through a ``DecisionAuthority``, in process with real peers: an agent
/// neither root nor in group `waymark` answers `always` for two programs of its user; the
/// authority, asked on a thread of its own (the broker serves others while it blocks), says
/// yes for one (recorded) and no for the other (denied this time, and the agent is told). A
/// scripted agent (`waymark agent --answer`) of such a user is not accepted at all.
@Suite(
  .serialized,
  .enabled(if: isRoot, "needs root: runs the agent and the programs as a system user"),
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/perl"),
    "the programs are python3 and perl"))
struct BrokerDecisionTests {
  @Test func theAuthorityDecidesWhetherAnAgentsAnswerPersists() async throws {
    let directory = try TemporaryDirectory.socketDirectory()
    let socketPath = directory + "/waymark.sock"
    let waymark = String(cString: realpath(Products.executable("waymark"), nil))
    let perl = "wmtest-k:" + String(cString: realpath("/usr/bin/perl", nil))
    let authority = HeldAuthority(allowed: [pythonClient("wmtest-k")])
    let grants = InMemoryGrantStore()
    var configuration = BrokerServer.Configuration(path: socketPath)
    configuration.agents = [AgentRule(user: nil, executable: waymark)]
    configuration.agentTimeoutSeconds = 30
    let log = Locked<[String]>([])
    let broker = try BrokerServer(
      configuration: configuration, grants: grants, services: .enabled,
      decisionAuthority: authority
    ) { _, line in log.withLock { $0.append(line) } }
    defer { broker.stop() }
    let script = try attackerScript()
    let perlScript = directory + "/asker.pl"
    try Data(perlAsker.utf8).write(to: URL(fileURLWithPath: perlScript))
    chmod(perlScript, 0o644)

    let ids = try systemUser("wmtest-k")
    func asUser(_ arguments: [String]) throws -> DaemonProcess {
      try DaemonProcess(
        executable: "/usr/bin/setpriv",
        arguments: ["--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "--"]
          + arguments,
        environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    }
    // A person at the prompt (answers on standard input, not --answer: a scripted agent is
    // never worth asking the authority about).
    let person = try waymarkAgent(as: "wmtest-k", socket: socketPath, answers: "a\na\n")
    try await waitUntil { log.withLock { $0.contains { $0.contains("is an agent") } } }
    let python = try attack("wmtest-k", script, ["request", socketPath, "always", "600"])
    let perlAsking = try asUser(["/usr/bin/perl", perlScript, socketPath])
    try await waitUntil { authority.questions.count == 2 }
    // The authority blocks; the broker still answers (bounded: on failure the authority is let
    // go, so that the broker can stop).
    let status = try BrokerConnection(path: socketPath)
    let messages = status.messages()
    let answered = Locked(false)
    Task {
      for await message in messages where message.className == "STATUS" {
        answered.withLock { $0 = true }
        break
      }
    }
    try status.send(#"{"class":"STATUS"}"#)
    do {
      try await waitUntil { answered.withLock { $0 } }
    } catch {
      authority.release(2)
      throw error
    }
    authority.release(2)
    try await python.waitForLine { $0.contains(#""status":"authorizedAlways""#) }
    try await perlAsking.waitForLine { $0.contains(#""status":"denied""#) }
    #expect(!perlAsking.log.contains { $0.contains(#""status":"authorized"#) })
    try await person.waitForLine { $0.contains("did not count; the program is denied") }
    try await person.waitForLine { $0.contains(#""recorded":true"#) }
    let stored = try grants.allGrants().map(\.clientID)
    #expect(stored == [pythonClient("wmtest-k")])
    #expect(!stored.contains(perl))
    for process in [python, perlAsking, person] { process.signal(SIGTERM) }
  }

  /// `waymark agent --answer always` of a user neither root nor in group `waymark` is refused
  /// as an agent (exit 77, a clear error, a log line): the authority (which would say yes) is
  /// never asked, the program's request is told `denied` at the deadline and nothing is
  /// recorded. (The test above is the positive control: the same agent at its prompt asks it.)
  @Test func aScriptedAgentNeverAsksTheAuthority() async throws {
    let directory = try TemporaryDirectory.socketDirectory()
    let socketPath = directory + "/waymark.sock"
    let waymark = String(cString: realpath(Products.executable("waymark"), nil))
    let authority = HeldAuthority(allowed: [pythonClient("wmtest-k")])
    authority.release(4)  // it would answer at once
    let grants = InMemoryGrantStore()
    var configuration = BrokerServer.Configuration(path: socketPath)
    configuration.agents = [AgentRule(user: nil, executable: waymark)]
    configuration.agentTimeoutSeconds = 2
    let log = Locked<[String]>([])
    let broker = try BrokerServer(
      configuration: configuration, grants: grants, services: .enabled,
      decisionAuthority: authority
    ) { _, line in log.withLock { $0.append(line) } }
    defer { broker.stop() }
    let agent = try waymarkAgent(
      as: "wmtest-k", socket: socketPath, arguments: ["--answer", "always"])
    #expect(try await agent.waitForExit() == 77, "\(agent.logText)")
    #expect(agent.logText.contains("a scripted agent (--answer) must run as root or in group"))
    try await waitUntil {
      log.withLock { $0.contains { $0.contains("asked to be a scripted agent; refused") } }
    }
    #expect(!log.withLock { $0.contains { $0.contains("is an agent") } })
    let python = try attack(
      "wmtest-k", try attackerScript(), ["request", socketPath, "always", "600"])
    try await python.waitForLine { $0.contains(#""status":"denied""#) }
    #expect(authority.questions.isEmpty)
    #expect(try grants.allGrants().isEmpty)
    #expect(!agent.logText.contains(#""recorded":true"#))
    for process in [python, agent] { process.signal(SIGTERM) }
  }

  private func waitUntil(_ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(20)
    while clock.now < deadline {
      if condition() { return }
      try await clock.sleep(for: .milliseconds(20))
    }
    throw TestFailure(description: "condition not met within 20 s")
  }
}
