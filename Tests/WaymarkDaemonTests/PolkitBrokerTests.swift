import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// The whole path of an answer through polkit: the real waymarkd (`polkit = yes`) with a real
/// polkitd on a private system bus (``PolkitRig``: a rule that says yes for `wmpk-yes`, one that
/// says no for `wmpk-no`, and no for a check without the program and decision details). Each
/// user runs `waymark agent` at its prompt (answers on standard input) and another of its
/// programs (Python) asks for `always`: neither root nor in group `waymark`, the agent's answer
/// counts only on polkit's yes: `always` is recorded on it, and `once` (a decision too) on
/// polkit's no gives the program nothing (before: allowed once, on no one's proof).
@Suite(
  .serialized,
  .enabled(if: isRoot, "needs root: polkitd, system users"),
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: ["/usr/lib/polkit-1/polkitd", "/usr/bin/pkcheck", "/usr/bin/python3"].allSatisfy {
      FileManager.default.isExecutableFile(atPath: $0)
    }, "needs polkitd, pkcheck (package polkitd) and python3"))
struct PolkitBrokerTests {
  @Test func anAgentsAnswerCountsOnlyOnPolkitsYes() async throws {
    let polkit = try await PolkitRig()
    defer { polkit.stop() }
    let socket = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "socket = \(socket)\npolkit = yes\nagent-timeout = 30\n")
    defer { rig.stop() }
    let daemon = try DaemonProcess(
      arguments: ["--config", rig.config],
      environment: daemonEnvironment(
        state: rig.directory.path, extra: ["DBUS_SYSTEM_BUS_ADDRESS": polkit.address]))
    try await daemon.waitForLine { $0.contains("location socket ") }
    let waymark = String(cString: realpath(Products.executable("waymark"), nil))
    let script = try attackerScript()

    func decide(as user: String, answer: String) async throws
      -> (agent: DaemonProcess, asker: DaemonProcess)
    {
      let agent = try waymarkAgent(as: user, socket: socket, answers: answer + "\n")
      try await daemon.waitForLine {
        $0.contains("\(user):\(waymark)") && $0.contains("is an agent")
      }
      let asker = try attack(user, script, ["request", socket, "always", "60"])
      try await agent.waitForLine { $0.contains(#""class":"DECIDED""#) }
      return (agent, asker)
    }
    func stored() throws -> [String] {
      try DatabaseGrantStore(database: Database(path: rig.store)).allGrants().map(\.clientID)
    }

    let yes = try await decide(as: "wmpk-yes", answer: "a")
    try await yes.asker.waitForLine { $0.contains(#""status":"authorizedAlways""#) }
    #expect(yes.agent.logText.contains(#""recorded":true"#))
    #expect(try stored().contains(pythonClient("wmpk-yes")))
    try await daemon.waitForLine {
      $0.contains("polkit: org.waymark.location.grant-own") && $0.contains("wmpk-yes")
        && $0.hasSuffix(": authorized")
    }

    let no = try await decide(as: "wmpk-no", answer: "o")
    try await no.agent.waitForLine { $0.contains("did not count; the program is denied") }
    try await no.asker.waitForLine { $0.contains(#""status":"denied""#) }
    #expect(!no.asker.log.contains { $0.contains(#""status":"authorized"#) })
    try await daemon.waitForLine {
      $0.contains("polkit: org.waymark.location.grant-own (once, while it runs)")
        && $0.contains("wmpk-no") && $0.hasSuffix(": not authorized (pkcheck exit 1)")
    }
    #expect(!no.agent.logText.contains(#""recorded":true"#))
    #expect(!(try stored().contains(pythonClient("wmpk-no"))))
    for process in [yes.agent, yes.asker, no.agent, no.asker] { process.signal(SIGTERM) }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
