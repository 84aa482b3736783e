import Foundation
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// Whether a line of `text` holds a scalar a terminal would act on (an escape, CR, LF inside
/// a line, U+2028 …); the CR a terminal puts before each line's LF aside.
private func hasRawControls(_ text: String) -> Bool {
  text.split(separator: "\n").contains { line in
    let body = line.hasSuffix("\r") ? line.dropLast() : Substring(line)
    return body.unicodeScalars.contains { $0 != "\\" && LogText.needsEscape($0) }
  }
}

/// Outside strings reach a terminal escaped (issue 20, point 5): a program installed under a
/// path with ESC, CR LF and U+2028 cannot draw its own line into root's `waymark agent` prompt
/// (it used to: the prompt could be made to read `geoclue:/usr/libexec/geoclue`), nor into
/// `waymark auth status`.
@Suite(
  .serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "runs the asking program as a system user (setpriv)"))
struct TerminalEscapeTests {
  /// The directory name: clear the line, return, a forged prompt on a new line (which, in the
  /// daemon's log, would also be a forged record of priority 2), a line separator.
  static let hostile = "\u{1B}[2K\r\n<2>waymark agent: geoclue:/usr/libexec/geoclue\u{2028}x"

  @Test func aProgramPathIsEscapedInTheAgentsPromptAndInAuthStatus() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "agent-timeout = 3\nsocket = \(socketPath)\n")
    defer { rig.stop() }
    // The attacker's program: a copy of waymark under the hostile directory name.
    let folder = rig.directory.file(Self.hostile)
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
    let program = folder + "/waymark"
    try FileManager.default.copyItem(atPath: Products.executable("waymark"), toPath: program)
    var path = program
    while path.count >= rig.directory.path.count {
      chmod(path, 0o755)
      path = (path as NSString).deletingLastPathComponent
    }
    let ids = try systemUser("wmtest-esc")
    let resolved = try #require(realpath(program, nil))
    defer { free(resolved) }
    let client = "wmtest-esc:" + String(cString: resolved)

    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    // Root's agent on a terminal (a pseudo-terminal made by script(1)): what it writes there is
    // what the operator sees.
    let command = "'\(Products.executable("waymark"))' agent --socket '\(socketPath)'"
    let agent = try DaemonProcess(
      executable: "/bin/sh",
      arguments: ["-c", "exec /usr/bin/script -qfec \"\(command)\" /dev/null </dev/null 1>&2"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/", "TERM": "dumb"])
    try await daemon.waitForLine { $0.contains("is an agent") }
    let asking = try DaemonProcess(
      executable: "/usr/bin/setpriv",
      arguments: [
        "--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "--", program, "watch",
        "--daemon", "--socket", socketPath, "--json", "--request", "whenInUse",
      ],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    let prompt = try await agent.waitForLine { $0.contains("asks for whenInUse") }
      .trimmingCharacters(in: ["\r"])
    #expect(!agent.log.contains(where: hasRawControls), "\(agent.log)")
    #expect(prompt.hasPrefix("waymark agent: \(LogText.escaped(client)) (pid "), "\(prompt)")
    #expect(prompt.contains(#"\x1B[2K\x0D\x0A<2>waymark agent: geoclue:"#), "\(prompt)")
    #expect(prompt.contains(#"\u{2028}x/waymark"#), "\(prompt)")
    // The control: the NDJSON question names the program exactly.
    let ask = try #require(agent.log.first { $0.hasPrefix(#"{"class":"ASK""#) })
      .trimmingCharacters(in: ["\r"])
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(ask.utf8)) as? [String: Any])
    #expect(object["client"] as? String == client)
    // The daemon's log (the journal reads a `<N>` at the start of a line as its priority): the
    // program's connection is logged with the path escaped, and no record of priority 2 was
    // forged (waymarkd logs nothing at 2; a "\r\n" Character used to pass as one).
    try await daemon.waitForLine { $0.contains(LogText.escaped(client)) }
    #expect(!daemon.log.contains { $0.hasPrefix("<2>") }, "\(daemon.logText)")
    #expect(!daemon.log.contains(where: hasRawControls), "\(daemon.logText)")
    asking.signal(SIGTERM)
    agent.signal(SIGTERM)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)

    // The same client id in the grants, listed by `waymark auth status`.
    let granted = try CommandRun.waymark(
      ["auth", "grant", client, "whenInUse", "--store", rig.store])
    #expect(granted.status == 0, "\(granted.stderr)")
    let listed = try CommandRun.waymark(["auth", "status", "--store", rig.store])
    #expect(listed.status == 0, "\(listed.stderr)")
    #expect(!hasRawControls(listed.output), "\(listed.output)")
    #expect(!hasRawControls(granted.output), "\(granted.output)")
    let grants = listed.output.split(separator: "\n").compactMap {
      try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
    }
    #expect(grants.contains { $0["client"] as? String == client }, "\(listed.output)")
  }
}
