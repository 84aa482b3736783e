import Foundation
import Testing
import WaymarkCore
import WaymarkDaemon
import WaymarkDaemonConfiguration
import WaymarkTesting

@testable import WaymarkBroker

private let polkitd = "/usr/lib/polkit-1/polkitd"
private let pkactionPath = "/usr/bin/pkaction"
private let setpriv = "/usr/bin/setpriv"
private let polkitInstalled = [
  polkitd, PolkitAuthority.defaultPKCheck, pkactionPath, dbusDaemon, setpriv,
]
.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }
/// Where polkitd reads actions and rules; the tests put Waymark's policy and their rules there
/// for their run and restore what was there afterwards.
private let installedPolicy = "/usr/share/polkit-1/actions/org.waymark.location.policy"
private let testRules = "/etc/polkit-1/rules.d/49-waymark-polkit-test.rules"

/// The rules the tests run under: yes for `wmpk-yes` (except about a program named
/// `/usr/bin/forbidden`: a rule can name the program, through the `client` detail), no for
/// `wmpk-no`, no for a check that lacks the `program`, `decision` or `accuracy` detail (the
/// question the person confirms); every other user gets the policy's defaults. A client id with a raw control
/// character in it is refused: the authority must hand polkit the escaped form.
private let rules = #"""
  polkit.addRule(function(action, subject) {
    if (action.id != "org.waymark.location.grant-own" &&
        action.id != "org.waymark.location.grant-other") return polkit.Result.NOT_HANDLED;
    var client = action.lookup("client") || "";
    if (/[\x00-\x1f\x7f]/.test(client)) return polkit.Result.NO;
    if (!action.lookup("program") || !action.lookup("decision") || !action.lookup("accuracy"))
      return polkit.Result.NO;
    if (subject.user == "wmpk-yes" && client.indexOf(":/usr/bin/forbidden") >= 0)
      return polkit.Result.NO;
    if (subject.user == "wmpk-yes") return polkit.Result.YES;
    if (subject.user == "wmpk-no") return polkit.Result.NO;
    return polkit.Result.NOT_HANDLED;
  });
  """#

/// Polls `condition` until it holds or `timeout` passes.
private func poll(timeout: Duration = .seconds(10), _ condition: () -> Bool) async throws -> Bool {
  let clock = ContinuousClock()
  let deadline = clock.now + timeout
  while clock.now < deadline {
    if condition() { return true }
    try await clock.sleep(for: .milliseconds(20))
  }
  return condition()
}

/// A real polkitd on a private system bus, with Waymark's shipped policy and the test rules
/// (yes for `wmpk-yes`, no for `wmpk-no`); an end-to-end broker test can use it as it is.
final class PolkitRig {
  let directory: TemporaryDirectory
  let bus: DaemonProcess
  let address: String
  let polkit: DaemonProcess
  private let savedPolicy: Data?

  init() async throws {
    directory = try TemporaryDirectory()
    savedPolicy = FileManager.default.contents(atPath: installedPolicy)
    let policy = try Data(
      contentsOf: URL(fileURLWithPath: packageFile("polkit/org.waymark.location.policy")))
    try policy.write(to: URL(fileURLWithPath: installedPolicy))
    try Data(rules.utf8).write(to: URL(fileURLWithPath: testRules))
    chmod(testRules, 0o644)
    (bus, address) = try startPrivateSystemBus(in: directory)
    polkit = try DaemonProcess(
      executable: polkitd, arguments: [],
      environment: ["PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": address])
    // Up when pkaction (a client on the same bus) finds our action.
    let address = self.address
    let ready = try await poll {
      (try? Self.pkaction(["--action-id", PolkitAuthority.ownAction], bus: address).status) == 0
    }
    guard ready else {
      stop()
      throw TestFailure(description: "polkitd did not come up; log:\n\(polkit.logText)")
    }
  }

  /// Stops polkitd and the bus and puts the files back.
  func stop() {
    polkit.signal(SIGCONT)
    polkit.signal(SIGTERM)
    bus.signal(SIGTERM)
    unlink(testRules)
    if let savedPolicy {
      try? savedPolicy.write(to: URL(fileURLWithPath: installedPolicy))
    } else {
      unlink(installedPolicy)
    }
  }

  static func pkaction(_ arguments: [String], bus: String) throws -> CommandRun {
    try CommandRun.run(
      pkactionPath, arguments,
      environment: ["PATH": "/usr/bin:/bin", "DBUS_SYSTEM_BUS_ADDRESS": bus, "LC_ALL": "C"])
  }

  /// The authority as the daemon makes it, on this bus.
  func authority(pkcheck: String = PolkitAuthority.defaultPKCheck, timeoutSeconds: Double = 20)
    -> PolkitAuthority
  {
    PolkitAuthority(
      pkcheck: pkcheck, timeoutSeconds: timeoutSeconds, log: DaemonLog(level: .error),
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": address, "HOME": "/nonexistent"])
  }
}

/// A process running as a system user: the agent polkit is asked about.
final class PolkitSubject {
  let process: DaemonProcess
  let identity: PeerIdentity

  init(user: String) async throws {
    let ids = try systemUser(user)
    process = try DaemonProcess(
      executable: setpriv,
      arguments: [
        "--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "--", "/bin/sleep", "300",
      ],
      environment: ["PATH": "/usr/bin:/bin"])
    let pid = process.processID
    // setpriv has changed user and exec'd sleep (the start time stays the same across exec).
    let switched = try await poll {
      PeerIdentity.executablePath(of: pid)?.hasSuffix("/sleep") == true
    }
    guard switched, let startTime = PeerIdentity.startTime(of: pid) else {
      throw TestFailure(description: "the subject process of \(user) did not start")
    }
    identity = PeerIdentity(
      uid: ids.uid, pid: pid, user: user, executable: "/usr/bin/sleep", startTime: startTime)
  }

  /// One of this user's programs (own) or another user's, as the client an answer is about.
  func client(_ executable: String = "/usr/bin/gnome-maps", uid: uid_t? = nil) -> PeerIdentity {
    let uid = uid ?? identity.uid
    return PeerIdentity(
      uid: uid, pid: 1, user: PeerIdentity.userName(uid), executable: executable, startTime: 1)
  }
}

@Suite(
  .serialized,
  .enabled(if: isRoot, "needs root (installs a policy and rules, runs processes as system users)"),
  .enabled(
    if: polkitInstalled,
    "needs polkitd, pkcheck, pkaction (Debian's polkitd), dbus-daemon and setpriv"))
struct PolkitAuthorityTests {
  /// The shipped policy is valid against polkit's DTD (xmllint, which install-deps.sh installs;
  /// skipped with the reason where it is absent, never passed silently).
  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: "/usr/bin/xmllint"),
      "xmllint is not installed (package libxml2-utils)"))
  func thePolicyIsValidAgainstPolkitsDTD() throws {
    let policy = packageFile("polkit/org.waymark.location.policy")
    let lint = try CommandRun.run(
      "/usr/bin/xmllint",
      ["--noout", "--dtdvalid", "/usr/share/polkit-1/policyconfig-1.dtd", policy])
    #expect(lint.status == 0, "\(lint.stderr)")
  }

  /// polkitd reads both actions of the shipped policy with the intended defaults and names
  /// waymarkd's user as their owner.
  @Test func thePolicyIsValidAndPolkitdReadsIt() async throws {
    let rig = try await PolkitRig()
    defer { rig.stop() }
    for (action, implicit) in [
      (PolkitAuthority.ownAction, "auth_self"), (PolkitAuthority.otherAction, "auth_admin"),
    ] {
      let run = try PolkitRig.pkaction(["--action-id", action, "--verbose"], bus: rig.address)
      #expect(run.status == 0, "\(run.stderr)")
      for kind in ["any", "inactive", "active"] {
        #expect(
          run.output.split(separator: "\n").contains {
            $0.hasPrefix("  implicit \(kind):") && $0.hasSuffix(" \(implicit)")
          }, "\(action): \(run.output)")
      }
      #expect(
        run.output.contains("org.freedesktop.policykit.owner -> unix-user:waymark"),
        "\(run.output)")
    }
    let unknown = try PolkitRig.pkaction(
      ["--action-id", "org.waymark.location.none", "--verbose"], bus: rig.address)
    #expect(unknown.status != 0, "a control: pkaction fails for an action that is not shipped")
  }

  /// polkit's answer decides: a rule's yes persists, a rule's no does not, and without a rule
  /// the defaults (`auth_self`, `auth_admin`) need a person to authenticate, which nobody
  /// can here, so no.
  @Test func aYesRuleAuthorizesAndANoRuleRefuses() async throws {
    let rig = try await PolkitRig()
    defer { rig.stop() }
    let yes = try await PolkitSubject(user: "wmpk-yes")
    let no = try await PolkitSubject(user: "wmpk-no")
    let nobody = try await PolkitSubject(user: "wmpk-none")
    let authority = rig.authority()

    #expect(authority.confirms(.once(.full), by: yes.identity, about: yes.client()))
    #expect(authority.verdict(answerBy: yes.identity, about: yes.client()) == .authorized)
    #expect(
      authority.verdict(answerBy: yes.identity, about: yes.client(uid: no.identity.uid))
        == .authorized)
    // The program reaches polkit escaped: no raw CR, LF or ESC, whatever its path holds.
    #expect(
      authority.verdict(answerBy: yes.identity, about: yes.client("/tmp/evil\r\n\u{1B}[2Jyes"))
        == .authorized)
    // The rule sees the program (the `client` detail) and refuses this one.
    #expect(
      authority.verdict(answerBy: yes.identity, about: yes.client("/usr/bin/forbidden"))
        == .notAuthorized)

    #expect(!authority.confirms(.once(.full), by: no.identity, about: no.client()))
    #expect(authority.verdict(answerBy: no.identity, about: no.client()) == .notAuthorized)
    #expect(
      authority.verdict(answerBy: no.identity, about: no.client(uid: yes.identity.uid))
        == .notAuthorized)

    #expect(!authority.confirms(.once(.full), by: nobody.identity, about: nobody.client()))
    #expect(
      authority.verdict(answerBy: nobody.identity, about: nobody.client())
        == .authenticationRequired)
    #expect(
      authority.verdict(answerBy: nobody.identity, about: nobody.client(uid: yes.identity.uid))
        == .authenticationRequired)
  }

  /// The subject is the agent's process itself: once it is gone, or when the start time names
  /// an earlier process with the same pid, polkit says no even for the yes-user.
  @Test func aDeadOrReplacedProcessIsNo() async throws {
    let rig = try await PolkitRig()
    defer { rig.stop() }
    let yes = try await PolkitSubject(user: "wmpk-yes")
    let authority = rig.authority()
    let agent = yes.identity
    #expect(authority.confirms(.once(.full), by: agent, about: yes.client()), "the control")

    var replaced = agent
    replaced.startTime = agent.startTime.map { $0 + 1 }
    #expect(!authority.confirms(.once(.full), by: replaced, about: yes.client()))
    #expect(authority.verdict(answerBy: replaced, about: yes.client()) == .failed(127))

    var unnamed = agent
    unnamed.startTime = nil
    #expect(!authority.confirms(.once(.full), by: unnamed, about: yes.client()))

    yes.process.signal(SIGKILL)
    _ = try await yes.process.waitForExit()
    #expect(!authority.confirms(.once(.full), by: agent, about: yes.client()))
    #expect(authority.verdict(answerBy: agent, about: yes.client()) == .failed(127))
  }

  /// No polkitd, no yes: a polkitd that does not answer is waited for only up to the timeout,
  /// one that is gone (or a bus that is gone) fails the check at once.
  @Test func withoutPolkitdTheAnswerIsNo() async throws {
    let rig = try await PolkitRig()
    defer { rig.stop() }
    let yes = try await PolkitSubject(user: "wmpk-yes")
    let authority = rig.authority(timeoutSeconds: 2)
    #expect(authority.confirms(.once(.full), by: yes.identity, about: yes.client()), "the control")

    rig.polkit.signal(SIGSTOP)
    #expect(authority.verdict(answerBy: yes.identity, about: yes.client()) == .timedOut)
    rig.polkit.signal(SIGCONT)
    #expect(
      authority.confirms(.once(.full), by: yes.identity, about: yes.client()),
      "the control: polkitd answers again once it runs")

    rig.polkit.signal(SIGTERM)
    _ = try await rig.polkit.waitForExit()
    #expect(!authority.confirms(.once(.full), by: yes.identity, about: yes.client()))
    #expect(authority.verdict(answerBy: yes.identity, about: yes.client()) == .failed(127))

    let noBus = PolkitAuthority(
      timeoutSeconds: 2, log: DaemonLog(level: .error),
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": "unix:path=\(rig.directory.file("none.sock"))"])
    #expect(!noBus.confirms(.once(.full), by: yes.identity, about: yes.client()))
    let missing = PolkitAuthority(
      pkcheck: rig.directory.file("pkcheck"), log: DaemonLog(level: .error),
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address])
    #expect(!missing.confirms(.once(.full), by: yes.identity, about: yes.client()))
  }

  /// Checks beyond the limit are a no without spawning pkcheck (a flood of answers cannot make
  /// the daemon fork without bound); the slot is free again once a check ends.
  @Test func checksBeyondTheLimitAreNoWithoutAsking() async throws {
    let rig = try await PolkitRig()
    defer { rig.stop() }
    let yes = try await PolkitSubject(user: "wmpk-yes")
    let agent = yes.identity
    let client = yes.client()
    let authority = PolkitAuthority(
      timeoutSeconds: 20, maximumConcurrentChecks: 1, log: DaemonLog(level: .error),
      environment: ["DBUS_SYSTEM_BUS_ADDRESS": rig.address])
    /// pkcheck processes this test process started.
    func pkchecks() -> Int {
      let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
      return entries.filter { entry in
        guard Int32(entry) != nil,
          let stat = try? String(contentsOfFile: "/proc/\(entry)/stat", encoding: .utf8),
          let close = stat.lastIndex(of: ")")
        else { return false }
        let fields = stat[stat.index(after: close)...].split(separator: " ")
        return stat.contains("(pkcheck)") && fields.count > 1 && fields[1] == "\(getpid())"
      }.count
    }

    rig.polkit.signal(SIGSTOP)
    let first = Task.detached { authority.verdict(answerBy: agent, about: client) }
    #expect(try await poll { pkchecks() == 1 }, "the first check runs (and waits for polkitd)")
    #expect(
      authority.verdict(answerBy: agent, about: client) == .notAsked("1 check(s) already running"))
    #expect(pkchecks() == 1)
    rig.polkit.signal(SIGCONT)
    #expect(await first.value == .authorized)
    #expect(authority.verdict(answerBy: agent, about: client) == .authorized)
  }

  /// waymarkd runs as `waymark`, not root: polkitd answers it about another user's agent only
  /// because the policy names `unix-user:waymark` as the actions' owner; another system user
  /// asking the same is refused.
  @Test func theDaemonsUserMayAskAboutAnotherUsersAgent() async throws {
    let rig = try await PolkitRig()
    defer { rig.stop() }
    _ = try daemonUser()
    _ = try systemUser("wmpk-caller")
    func pkcheck(as user: String) throws -> String {
      let wrapper = try rig.directory.write(
        "pkcheck-\(user)",
        "#!/bin/sh\nexec \(setpriv) --reuid=\(user) --regid=\(user) --clear-groups -- "
          + "\(PolkitAuthority.defaultPKCheck) \"$@\"\n")
      chmod(wrapper, 0o755)
      return wrapper
    }
    let yes = try await PolkitSubject(user: "wmpk-yes")
    let asDaemon = rig.authority(pkcheck: try pkcheck(as: "waymark"))
    #expect(asDaemon.verdict(answerBy: yes.identity, about: yes.client()) == .authorized)
    let asOther = rig.authority(pkcheck: try pkcheck(as: "wmpk-caller"))
    #expect(asOther.verdict(answerBy: yes.identity, about: yes.client()) == .failed(127))
  }
}

@Suite struct PolkitConfigurationTests {
  /// `polkit = yes|no`; the default is yes exactly when pkcheck is installed where Debian puts
  /// it (checked here on the file system, not through the code that sets the default).
  @Test func polkitKey() throws {
    let environment: [String: String] = [:]
    let installed = FileManager.default.isExecutableFile(atPath: "/usr/bin/pkcheck")
    #expect(PolkitAuthority.defaultPKCheck == "/usr/bin/pkcheck")
    #expect(DaemonConfiguration(environment: environment).usesPolkit == installed)
    for (value, expected) in [("yes", true), ("no", false), ("off", false), ("on", true)] {
      let parsed = try DaemonConfiguration.parse(
        "polkit = \(value)\n", path: "test.conf", environment: environment)
      #expect(parsed.usesPolkit == expected, "polkit = \(value)")
    }
    let error = #expect(throws: DaemonConfigurationError.self) {
      try DaemonConfiguration.parse("\npolkit = maybe\n", path: "t.conf", environment: environment)
    }
    #expect(error?.description == "t.conf:2: polkit: expected yes or no")
  }

  /// The action follows whose program the answer is about.
  @Test func actionFollowsTheClientsUser() {
    let agent = PeerIdentity(uid: 1000, pid: 10, user: "alice", executable: "/usr/bin/waymark")
    let own = PeerIdentity(uid: 1000, pid: 11, user: "alice", executable: "/usr/bin/gnome-maps")
    let other = PeerIdentity(uid: 1001, pid: 12, user: "bob", executable: "/usr/bin/gnome-maps")
    #expect(PolkitAuthority.action(answerBy: agent, about: own) == PolkitAuthority.ownAction)
    #expect(PolkitAuthority.action(answerBy: agent, about: other) == PolkitAuthority.otherAction)
  }
}

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct PolkitDaemonTests {
  /// waymarkd hands its broker the authority that `polkit =` names, says which at start, and
  /// keeps it across a reload (the broker holds it: changing it takes a restart). What the
  /// broker does, not only what it logs: after the reload (still `polkit = no`) an unprivileged
  /// agent's answer leaves its program denied without pkcheck being run; after the restart with
  /// `polkit = yes` the same answer is put to pkcheck (the control; no polkitd runs here, so it
  /// is still a no).
  @Test(.enabled(if: isRoot, "needs root: runs the agent and the program as a system user"))
  func theDaemonUsesTheConfiguredAuthority() async throws {
    let socket = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "socket = \(socket)\npolkit = no\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine {
      $0.contains("polkit = no: only agents running as root or in group waymark")
    }
    #expect(!daemon.logText.contains("polkit = yes"))
    // Signals are handled once the main loop runs.
    try await daemon.waitForLine { $0.contains("started: store ") }
    try Data("gpsd = 127.0.0.1:\(rig.gpsd.port)\nsocket = \(socket)\npolkit = yes\n".utf8)
      .write(to: URL(fileURLWithPath: rig.config))
    daemon.signal(SIGHUP)
    try await daemon.waitForLine {
      $0.contains("polkit changed; that takes a restart, keeping polkit = no")
    }
    let script = try attackerScript()
    // The agent is registered before the program asks: a request with no agent waits for the
    // agent timeout (30 s), longer than the wait for its answer below.
    func decide(
      _ daemon: DaemonProcess
    ) async throws -> (agent: DaemonProcess, asker: DaemonProcess) {
      let agent = try waymarkAgent(as: "wmtest-pk", socket: socket, answers: "a\n")
      try await daemon.waitForLine { $0.contains("wmtest-pk") && $0.contains("is an agent") }
      let asker = try attack("wmtest-pk", script, ["request", socket, "always", "60"])
      try await asker.waitForLine { $0.contains(#""status":"denied""#) }
      return (agent, asker)
    }
    let before = try await decide(daemon)
    #expect(!daemon.log.contains { $0.contains("polkit: org.waymark.location") })
    for process in [before.agent, before.asker] { process.signal(SIGTERM) }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)

    let restarted = try rig.launch()
    try await restarted.waitForLine {
      $0.contains("polkit = yes: other agents' answers count when polkit confirms")
    }
    try await restarted.waitForLine { $0.contains("started: store ") }
    let after = try await decide(restarted)
    try await restarted.waitForLine { $0.contains("polkit: org.waymark.location.grant-own") }
    for process in [after.agent, after.asker] { process.signal(SIGTERM) }
    restarted.signal(SIGTERM)
    #expect(try await restarted.waitForExit() == 0)
  }
}

@Suite(
  .serialized,
  .enabled(
    if: SystemdBootTests.impossibility == nil,
    "needs root, unshare, nsenter, systemd 252 and a writable cgroup2"),
  .enabled(if: polkitInstalled, "needs polkitd, pkcheck, pkaction, dbus-daemon and setpriv"))
struct PolkitSandboxTests {
  /// pkcheck under waymarkd.service's own sandbox (its user, ProtectSystem=strict,
  /// NoNewPrivileges, the address families and system-call filter, …): a unit made from the
  /// shipped one, with pkcheck as its ExecStart, booted by systemd as PID 1 in private
  /// namespaces, reaches a polkitd on the namespace's system bus (/run/dbus/system_bus_socket)
  /// and gets its yes for the yes-user's process and its no for the no-user's.
  @Test func pkcheckReachesPolkitdFromTheUnitsSandbox() async throws {
    for user in ["wmpk-yes", "wmpk-no"] { _ = try systemUser(user) }
    let boot = try await SystemdBootTests.Boot()
    defer { boot.stop() }
    _ = try await SystemdBootTests.waitFor(boot.systemdPID) { $0["ActiveState"] == "active" }
    // The policy's text, not its path: the checkout may be where the boot has a fresh /tmp.
    let policy = try String(
      contentsOfFile: packageFile("polkit/org.waymark.location.policy"), encoding: .utf8)
    // Runs inside the namespaces: /run and /etc are the boot's own; the policy goes on a tmpfs
    // over polkit's action directory, so nothing on the host changes.
    let script = #"""
      set -u
      mkdir -p /run/dbus /run/systemd/system
      mount -t tmpfs tmpfs /usr/share/polkit-1/actions
      cat > /usr/share/polkit-1/actions/org.waymark.location.policy <<'EOPOLICY'
      @POLICY@
      EOPOLICY
      cat > /etc/polkit-1/rules.d/49-waymark-sandbox-test.rules <<'EOT'
      polkit.addRule(function(action, subject) {
        if (action.id != "org.waymark.location.grant-own") return polkit.Result.NOT_HANDLED;
        if (subject.user == "wmpk-yes") return polkit.Result.YES;
        if (subject.user == "wmpk-no") return polkit.Result.NO;
      });
      EOT
      chmod 0644 /etc/polkit-1/rules.d/49-waymark-sandbox-test.rules
      cat > /run/bus.conf <<'EOT'
      <busconfig><type>system</type>
      <listen>unix:path=/run/dbus/system_bus_socket</listen><auth>EXTERNAL</auth>
      <policy context="default"><allow user="*"/><allow own="*"/>
      <allow send_destination="*"/><allow send_type="method_call"/>
      <allow send_type="method_return"/><allow send_type="error"/><allow send_type="signal"/>
      <allow receive_type="method_call"/><allow receive_type="method_return"/>
      <allow receive_type="error"/><allow receive_type="signal"/></policy></busconfig>
      EOT
      # The bus, polkitd and the subjects run as transient units of the namespace's systemd:
      # a child of this shell would keep the test's end of the nsenter call open.
      systemd-run --quiet --unit=wmpk-bus \
        /usr/bin/dbus-daemon --config-file=/run/bus.conf --nofork --nopidfile
      for _ in $(seq 100); do [ -S /run/dbus/system_bus_socket ] && break; sleep 0.05; done
      export DBUS_SYSTEM_BUS_ADDRESS=unix:path=/run/dbus/system_bus_socket
      systemd-run --quiet --unit=wmpk-polkitd -E DBUS_SYSTEM_BUS_ADDRESS \
        /usr/lib/polkit-1/polkitd
      for _ in $(seq 100); do
        pkaction --action-id org.waymark.location.grant-own >/dev/null 2>&1 && break
        sleep 0.1
      done
      for user in wmpk-yes wmpk-no; do
        systemd-run --quiet --unit="wmpk-agent-$user" -p User="$user" /usr/bin/sleep 300
        pid=$(systemctl show -p MainPID --value "wmpk-agent-$user.service")
        for _ in $(seq 100); do
          [ "$(stat -c %u /proc/$pid)" = "$(id -u "$user")" ] && break
          sleep 0.05
        done
        start=$(cut -d')' -f2 /proc/$pid/stat | awk '{print $20}')
        unit=/run/systemd/system/pkcheck-$user.service
        sed -e "s#^ExecStart=.*#ExecStart=/usr/bin/pkcheck --action-id org.waymark.location.grant-own --process $pid,$start,$(id -u "$user") --allow-user-interaction#" \
          -e 's#^Type=notify#Type=oneshot#' -e '/^WatchdogSec=/d' -e '/^ExecReload=/d' \
          -e '/^NotifyAccess=/d' -e '/^Restart/d' \
          -e "s#^\[Service\]#[Service]\nStandardOutput=file:/run/pkcheck-$user.log\nStandardError=file:/run/pkcheck-$user.log#" \
          /etc/systemd/system/waymarkd.service > "$unit"
        echo "UNIT $user $(grep -E '^User=' "$unit")"
      done
      systemctl daemon-reload
      for user in wmpk-yes wmpk-no; do
        systemctl start "pkcheck-$user.service" 2>/dev/null
        echo "RESULT $user $(systemctl show -p ExecMainStatus --value "pkcheck-$user.service")"
        echo "LOG $user $(cat /run/pkcheck-$user.log 2>/dev/null | tr '\n' ' ')"
      done
      """#
    let run = try boot.run(
      [
        "/usr/bin/timeout", "--kill-after=5", "90", "/bin/sh", "-c",
        script.replacingOccurrences(of: "@POLICY@", with: policy),
      ], timeout: .seconds(120))
    let lines = run.output.split(separator: "\n").map(String.init)
    let report = "\(run.output)\(run.stderr)"
    #expect(lines.contains("UNIT wmpk-yes User=waymark"), "\(report)")
    #expect(lines.contains("RESULT wmpk-yes 0"), "\(report)")
    #expect(lines.contains("RESULT wmpk-no 1"), "\(report)")
  }
}
