import FoundationEssentials
import Glibc
import Synchronization
import WaymarkBroker
import WaymarkCore
import WaymarkDaemonConfiguration

/// The broker's proof that a person decided, from polkit: an agent's answer persists when
/// polkitd authorizes the agent's process for one of Waymark's actions.
///
/// Each check runs `pkcheck --action-id <action> --process <pid>,<start-time>,<uid>
/// --allow-user-interaction --detail client <client id>` through the daemon's spawner
/// (``HookProcess``), in its own process group, with only `PATH`, `LC_ALL=C` and, when set,
/// `DBUS_SYSTEM_BUS_ADDRESS` in its environment. The actions (shipped in
/// `polkit/org.waymark.location.policy`):
///
/// - ``ownAction`` (`org.waymark.location.grant-own`): the agent decides about a program of its
///   own user; default `auth_self_keep` (the person proves they are that user).
/// - ``otherAction`` (`org.waymark.location.grant-other`): about another user's program;
///   default `auth_admin`.
///
/// The subject is the agent's process, named by pid, start time and uid as the kernel gave them
/// at connect time: polkitd refuses a pid whose start time changed (the agent exited and the
/// pid was reused). `--allow-user-interaction` lets an authentication agent registered for the
/// agent's session (a desktop's password dialog) ask the person; where none is registered,
/// pkcheck answers at once without asking, so the flag needs no terminal, and pkcheck's own
/// textual agent stays off (it needs `--enable-internal-agent`). Only exit status 0 is a yes.
/// pkcheck's statuses, as its manual gives them:
///
/// | status | meaning | here |
/// |---|---|---|
/// | 0 | authorized | yes |
/// | 1 | not authorized | no |
/// | 2 | authentication needed, and no agent could ask the person | no |
/// | 3 | the person dismissed the dialog | no |
/// | 126 | malformed options | no |
/// | 127 | the check failed (polkitd unreachable, the process gone or replaced, the caller not trusted) | no |
///
/// Anything else (a signal, no answer within ``timeoutSeconds``, pkcheck missing, more than
/// ``maximumConcurrentChecks`` checks at once) is a no as well. waymarkd runs as user
/// `waymark`, not root: polkitd answers a caller about another user's process only when the
/// action names the caller as its owner (annotation `org.freedesktop.policykit.owner` =
/// `unix-user:waymark`, in the shipped policy).
///
/// Blocks for as long as pkcheck runs (bounded by ``timeoutSeconds`` plus one second for the
/// kill); the broker calls it off its thread.
package final class PolkitAuthority: DecisionAuthority {
  /// The action for an answer about one of the agent user's own programs.
  package static let ownAction = "org.waymark.location.grant-own"
  /// The action for an answer about another user's program.
  package static let otherAction = "org.waymark.location.grant-other"
  /// Where Debian's polkitd package installs pkcheck.
  package static let defaultPKCheck = DaemonConfiguration.pkcheckPath

  /// What polkit (or the attempt to ask it) said.
  package enum Verdict: Sendable, Hashable, CustomStringConvertible {
    /// pkcheck exited 0: authorized.
    case authorized
    /// pkcheck exited 1: not authorized.
    case notAuthorized
    /// pkcheck exited 2: authentication was needed and no authentication agent could ask.
    case authenticationRequired
    /// pkcheck exited 3: the person dismissed the authentication dialog.
    case dismissed
    /// pkcheck exited with another status (126: bad options; 127: the check failed).
    case failed(Int32)
    /// A signal ended pkcheck.
    case signaled(Int32)
    /// pkcheck gave no answer within the timeout and was killed.
    case timedOut
    /// polkit was not asked, for the reason given.
    case notAsked(String)

    /// Whether the verdict lets the answer persist: only ``authorized``.
    package var isYes: Bool { self == .authorized }

    package var description: String {
      switch self {
      case .authorized: "authorized"
      case .notAuthorized: "not authorized (pkcheck exit 1)"
      case .authenticationRequired:
        "authentication required and no authentication agent to ask (pkcheck exit 2)"
      case .dismissed: "dismissed by the person (pkcheck exit 3)"
      case .failed(let status): "the check failed (pkcheck exit \(status))"
      case .signaled(let signal): "pkcheck killed by signal \(signal)"
      case .timedOut: "no answer in time; pkcheck killed"
      case .notAsked(let reason): "not asked: \(reason)"
      }
    }
  }

  /// The pkcheck executable.
  package let pkcheck: String
  /// Seconds pkcheck may run (a person may be typing a password) before it is killed.
  package let timeoutSeconds: Double
  /// Checks that may run at once; further ones are a no without asking, so that a flood of
  /// answers cannot make the daemon spawn without bound.
  package let maximumConcurrentChecks: Int
  private let environment: [String: String]
  private let log: DaemonLog
  private let running = Atomic<Int>(0)
  private let time: TimeSource

  /// Creates the authority.
  ///
  /// - Parameters:
  ///   - pkcheck: the pkcheck executable (absolute path).
  ///   - timeoutSeconds: seconds before pkcheck is terminated (SIGKILL one second later).
  ///   - maximumConcurrentChecks: checks running at once, at least 1.
  ///   - log: where each verdict (info) and pkcheck's output (debug) go; DaemonLog escapes
  ///     them.
  ///   - environment: the daemon's environment; only `DBUS_SYSTEM_BUS_ADDRESS` is taken from it.
  ///   - time: what the timeout is measured on.
  package init(
    pkcheck: String = PolkitAuthority.defaultPKCheck, timeoutSeconds: Double = 30,
    maximumConcurrentChecks: Int = 4, log: DaemonLog,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    time: TimeSource = .system
  ) {
    self.time = time
    self.pkcheck = pkcheck
    self.timeoutSeconds = timeoutSeconds
    self.maximumConcurrentChecks = max(1, maximumConcurrentChecks)
    self.log = log
    var childEnvironment = ["PATH": "/usr/bin:/bin", "LC_ALL": "C"]
    if let bus = environment["DBUS_SYSTEM_BUS_ADDRESS"], !bus.isEmpty {
      childEnvironment["DBUS_SYSTEM_BUS_ADDRESS"] = bus
    }
    self.environment = childEnvironment
  }

  /// Whether pkcheck is installed where Debian puts it (the default of `polkit =`).
  package static var isInstalled: Bool { DaemonConfiguration.pkcheckIsInstalled }

  /// The action an answer by `agent` about `client` needs.
  package static func action(answerBy agent: PeerIdentity, about client: PeerIdentity) -> String {
    agent.uid == client.uid ? ownAction : otherAction
  }

  /// The words of `answer` for the person confirming it: its decision and its accuracy.
  static func words(_ answer: DaemonRequest.AgentAnswer) -> (decision: String, accuracy: String) {
    switch answer {
    case .once(let accuracy): ("once, while it runs", accuracy.rawValue)
    case .grant(.never, let accuracy): ("never", accuracy.rawValue)
    case .grant(.whenInUse, let accuracy): ("while in use, from now on", accuracy.rawValue)
    case .grant(.always, let accuracy): ("always, from now on", accuracy.rawValue)
    }
  }

  /// The arguments of pkcheck for a check (after the executable). The details name the
  /// program, the decision and the accuracy: the action's message shows them
  /// (`$(program)`, `$(decision)`, `$(accuracy)`), so the person confirms this very question.
  static func arguments(
    _ answer: DaemonRequest.AgentAnswer = .once(.full), answerBy agent: PeerIdentity,
    about client: PeerIdentity, startTime: UInt64
  ) -> [String] {
    let words = words(answer)
    return [
      "--action-id", action(answerBy: agent, about: client),
      "--process", "\(agent.pid),\(startTime),\(agent.uid)",
      "--allow-user-interaction",
      // Rules may look at them (`action.lookup("client")`); an authentication dialog shows
      // them, so they are escaped like any outside text.
      "--detail", "client", LogText.escaped(client.clientID),
      "--detail", "program", LogText.escaped(client.executable),
      "--detail", "user", LogText.escaped(client.user),
      "--detail", "decision", words.decision,
      "--detail", "accuracy", words.accuracy,
    ]
  }

  package func confirms(
    _ answer: DaemonRequest.AgentAnswer, by agent: PeerIdentity, about client: PeerIdentity
  ) -> Bool {
    verdict(answer, answerBy: agent, about: client).isYes
  }

  /// Asks polkitd whether `agent`'s `answer` about `client` stands, and logs the verdict.
  package func verdict(
    _ answer: DaemonRequest.AgentAnswer = .once(.full), answerBy agent: PeerIdentity,
    about client: PeerIdentity
  ) -> Verdict {
    let action = Self.action(answerBy: agent, about: client)
    let verdict = ask(answer, agent: agent, client: client)
    log.info(
      "polkit: \(action) (\(Self.words(answer).decision)) for agent \(agent.clientID) "
        + "(pid \(agent.pid)) about \(client.clientID): \(verdict)")
    return verdict
  }

  private func ask(
    _ answer: DaemonRequest.AgentAnswer, agent: PeerIdentity, client: PeerIdentity
  ) -> Verdict {
    guard let startTime = agent.startTime else {
      return .notAsked("the agent's start time is unknown, so its pid cannot name it")
    }
    guard agent.pid > 0 else { return .notAsked("no process id") }
    let before = running.wrappingAdd(1, ordering: .acquiringAndReleasing).oldValue
    defer { running.wrappingSubtract(1, ordering: .acquiringAndReleasing) }
    guard before < maximumConcurrentChecks else {
      return .notAsked("\(maximumConcurrentChecks) check(s) already running")
    }
    let process: HookProcess
    do {
      process = try HookProcess.spawn(
        [pkcheck]
          + Self.arguments(answer, answerBy: agent, about: client, startTime: startTime),
        environment: environment, input: [])
    } catch {
      return .notAsked("pkcheck could not start: \(error)")
    }
    let outcome = process.wait(timeoutSeconds: timeoutSeconds, time: time) { line in
      self.log.debug("pkcheck: \(line)")
    }
    switch outcome {
    case .exited(0): return .authorized
    case .exited(1): return .notAuthorized
    case .exited(2): return .authenticationRequired
    case .exited(3): return .dismissed
    case .exited(let status): return .failed(status)
    case .signaled(let signal): return .signaled(signal)
    case .timedOut: return .timedOut
    }
  }
}
