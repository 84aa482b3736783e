import Foundation
import Testing
import WaymarkIdentify
import WaymarkTesting

let systemdAnalyze = "/usr/bin/systemd-analyze"
let hasSystemdAnalyze = FileManager.default.isExecutableFile(atPath: systemdAnalyze)

func packageFile(_ path: String) -> String {
  Products.packageRoot.appendingPathComponent(path).path
}

/// Runs a program and returns (status, stdout, stderr).
func runTool(_ executable: String, _ arguments: [String]) throws -> CommandRun {
  try CommandRun.run(executable, arguments)
}

@Suite struct SystemdUnitTests {
  static let unitPath = packageFile("systemd/waymarkd.service")

  static func unitSettings(_ path: String = unitPath) throws -> [(String, String)] {
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: "\n").compactMap { line in
      guard !line.hasPrefix("#"), !line.hasPrefix("["), let equals = line.firstIndex(of: "=")
      else { return nil }
      return (String(line[..<equals]), String(line[line.index(after: equals)...]))
    }
  }

  static func values(_ key: String) throws -> [String] {
    try unitSettings().filter { $0.0 == key }.map(\.1)
  }

  /// `path` as one word of a unit's command line (systemd.service(5), "Command lines"): in
  /// double quotes, with `\` and `"` escaped, `%` (specifiers) and `$` (variables) doubled, so
  /// that a checkout path with spaces or such characters stays one word.
  static func commandWord(_ path: String) -> String {
    let escaped =
      path
      .replacingOccurrences(of: "\\", with: "\\\\")
      .replacingOccurrences(of: "\"", with: "\\\"")
      .replacingOccurrences(of: "%", with: "%%")
      .replacingOccurrences(of: "$", with: "$$")
    return "\"\(escaped)\""
  }

  @Test func theUnitHasTheRequiredSettings() throws {
    #expect(try Self.values("Type") == ["notify"])
    #expect(try Self.values("WatchdogSec").count == 1)
    #expect(try Self.values("Wants") == ["gpsd.socket", "waymark-identify.socket"])
    #expect(try Self.values("After").first?.contains("gpsd.socket") == true)
    #expect(try Self.values("After").first?.contains("waymark-identify.socket") == true)
    #expect(try Self.values("Requires").isEmpty)
    #expect(try Self.values("BindsTo").isEmpty)
    #expect(try Self.values("Restart") == ["on-failure"])
    #expect(try Self.values("RestartPreventExitStatus") == ["64 78"])
    #expect(try Self.values("StateDirectory") == ["waymark"])
    #expect(try Self.values("ConfigurationDirectory") == ["waymark"])
    #expect(try Self.values("RuntimeDirectory") == ["waymark"])
    // The location socket in /run/waymark is reachable by every user; peers are identified by
    // their real uid (no private user namespace) and their executable, which waymark-identify
    // reads for other users' processes: waymarkd itself holds no capability at all.
    #expect(try Self.values("RuntimeDirectoryMode") == ["0755"])
    #expect(try Self.values("PrivateUsers").isEmpty)
    #expect(try Self.values("CapabilityBoundingSet") == [""])
    #expect(try Self.values("AmbientCapabilities").isEmpty)
    #expect(
      try Self.values("Environment") == [
        "SWIFT_BACKTRACE=enable=no", "WAYMARK_IDENTIFY=/run/waymark-identify.sock",
      ])
    #expect(try Self.values("User") == ["waymark"])
    #expect(try Self.values("DynamicUser").isEmpty)
    // What outside input can make it use is bounded.
    #expect(try Self.values("MemoryMax") == ["512M"])
    #expect(try Self.values("TasksMax") == ["128"])
    // The sysusers.d file creates that user.
    let sysusers = try String(
      contentsOfFile: packageFile("systemd/waymark.sysusers"), encoding: .utf8)
    #expect(sysusers.contains("\nu waymark "))
  }

  /// The helper's socket is waymarkd's alone (user waymark, mode 0600, one helper process per
  /// connection) at the path waymarkd's environment names; the helper holds CAP_SYS_PTRACE and
  /// nothing else, has no network and reads its connection on standard input.
  @Test func theHelperUnitsHoldTheOnePrivilegeAndServeWaymarkdAlone() throws {
    let socket = try Self.unitSettings(packageFile("systemd/waymark-identify.socket"))
    func socketValues(_ key: String) -> [String] { socket.filter { $0.0 == key }.map(\.1) }
    #expect(socketValues("ListenSequentialPacket") == ["/run/waymark-identify.sock"])
    #expect(socketValues("SocketUser") == ["waymark"])
    #expect(socketValues("SocketMode") == ["0600"])
    #expect(socketValues("Accept") == ["yes"])
    let service = try Self.unitSettings(packageFile("systemd/waymark-identify@.service"))
    func serviceValues(_ key: String) -> [String] { service.filter { $0.0 == key }.map(\.1) }
    #expect(serviceValues("CapabilityBoundingSet") == ["CAP_SYS_PTRACE"])
    #expect(serviceValues("AmbientCapabilities") == ["CAP_SYS_PTRACE"])
    #expect(
      serviceValues("ExecStart").first?.hasSuffix("waymark-identify --client waymark") == true)
    #expect(serviceValues("StandardInput") == ["socket"])
    #expect(serviceValues("DynamicUser") == ["yes"])
    #expect(serviceValues("PrivateNetwork") == ["yes"])
    #expect(serviceValues("RestrictAddressFamilies") == ["AF_UNIX"])
    #expect(serviceValues("NoNewPrivileges") == ["yes"])
    #expect(serviceValues("PrivateUsers").isEmpty)
  }

  /// `systemd-analyze verify` exits 0 even on warnings: require empty output. ExecStart must
  /// exist for verify, so a copy pointing at the built binary is checked.
  @Test(.enabled(if: hasSystemdAnalyze, "systemd-analyze is not installed"))
  func verifyPrintsNothing() throws {
    let directory = try TemporaryDirectory()
    let text = try String(contentsOfFile: Self.unitPath, encoding: .utf8)
      .replacingOccurrences(
        of: "/usr/local/bin/waymarkd", with: Self.commandWord(Products.executable("waymarkd")))
    let copy = try directory.write("waymarkd.service", text)
    let run = try runTool(systemdAnalyze, ["verify", "--man=no", copy])
    #expect(run.status == 0)
    #expect(run.stderr.isEmpty, "\(run.stderr)")
    #expect(run.output.isEmpty, "\(run.output)")
  }

  /// The helper's socket and template verify without a word too (an instance of the template,
  /// with ExecStart pointing at the built helper).
  @Test(.enabled(if: hasSystemdAnalyze, "systemd-analyze is not installed"))
  func theHelperUnitsVerifyCleanly() throws {
    let directory = try TemporaryDirectory()
    let service = try String(
      contentsOfFile: packageFile("systemd/waymark-identify@.service"), encoding: .utf8
    )
    .replacingOccurrences(
      of: "/usr/local/libexec/waymark/waymark-identify",
      with: Self.commandWord(Products.executable("waymark-identify")))
    _ = try directory.write("waymark-identify@.service", service)
    let socket = try directory.write(
      "waymark-identify.socket",
      try String(contentsOfFile: packageFile("systemd/waymark-identify.socket"), encoding: .utf8))
    let run = try runTool(systemdAnalyze, ["verify", "--man=no", socket])
    #expect(run.status == 0)
    #expect(run.stderr.isEmpty, "\(run.stderr)")
    #expect(run.output.isEmpty, "\(run.output)")
  }

  @Test(
    .enabled(if: hasSystemdAnalyze, "systemd-analyze is not installed"),
    arguments: ["systemd/waymarkd.service", "systemd/waymark-identify@.service"])
  func securityExposureIsAtMostOnePointFive(_ unit: String) throws {
    let run = try runTool(systemdAnalyze, ["security", "--offline=yes", packageFile(unit)])
    let line = try #require(
      run.output.split(separator: "\n").first { $0.contains("Overall exposure level") })
    // "→ Overall exposure level for waymarkd.service: 0.9 SAFE 😀", or with TERM=dumb (a CI
    // runner, the fresh-root rehearsal) "… 0.9 SAFE :-)": the first number after the unit.
    let after = line.split(separator: ".service:", maxSplits: 1).last ?? ""
    let exposure = try #require(
      after.split(separator: " ").lazy.compactMap { Double($0) }.first, "\(line)")
    #expect(exposure <= 1.5, "\(line)")
  }
}

/// Boots systemd 252 as PID 1 in private namespaces with the real unit and the real binary,
/// through `Scripts/systemd-namespace-boot.sh`.
@Suite(.serialized) struct SystemdBootTests {
  static let systemd = "/lib/systemd/systemd"
  /// The CLI inside the boot: the boot script copies the built one there, since the checkout
  /// may be out of the boot's reach (under the /tmp it replaces, or below a 0700 directory).
  static let waymark = "/usr/local/bin/waymark"

  /// Why the boot test cannot run here, or `nil`.
  static var impossibility: String? {
    if getuid() != 0 { return "needs root (unshare of mount, pid and cgroup namespaces)" }
    for tool in [systemd, "/usr/bin/unshare", "/usr/bin/nsenter", "/usr/bin/systemd-sysusers"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
      return "\(tool) is missing"
    }
    if cgroup2Mount == nil { return "no cgroup2 file system is mounted" }
    return nil
  }

  /// Where cgroup2 is mounted (`/sys/fs/cgroup` or the hybrid `/sys/fs/cgroup/unified`).
  static var cgroup2Mount: String? {
    guard let text = try? String(contentsOfFile: "/proc/self/mountinfo", encoding: .utf8) else {
      return nil
    }
    for line in text.split(separator: "\n") {
      let halves = line.split(separator: " - ")
      guard halves.count == 2, halves[1].hasPrefix("cgroup2 ") else { continue }
      let fields = halves[0].split(separator: " ")
      if fields.count > 4 { return String(fields[4]) }
    }
    return nil
  }

  /// Reads `systemctl show` properties of `unit` inside the namespace.
  static func show(
    _ systemdPID: pid_t, unit: String = "waymarkd.service"
  ) throws -> [String: String] {
    let run = try CommandRun.run(
      "/usr/bin/nsenter",
      [
        "-t", String(systemdPID), "-m", "-p", "systemctl", "show",
        "-p", "ActiveState,SubState,StatusText,MainPID,NRestarts,Type,WatchdogUSec,Result",
        unit,
      ], timeout: .seconds(60))
    var properties: [String: String] = [:]
    for line in run.output.split(separator: "\n") {
      guard let equals = line.firstIndex(of: "=") else { continue }
      properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return properties
  }

  static func waitFor(
    _ systemdPID: pid_t, unit: String = "waymarkd.service", timeout: Duration = .seconds(40),
    _ condition: ([String: String]) -> Bool
  ) async throws -> [String: String] {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var last: [String: String] = [:]
    while clock.now < deadline {
      last = try show(systemdPID, unit: unit)
      if condition(last) { return last }
      try await clock.sleep(for: .milliseconds(200))
    }
    throw TestFailure(description: "systemd state of \(unit) not reached; last: \(last)")
  }

  /// systemd as PID 1 in private namespaces (Scripts/systemd-namespace-boot.sh), in a cgroup of
  /// its own; ``stop()`` kills it and removes the cgroups.
  final class Boot {
    let process: DaemonProcess
    let systemdPID: pid_t
    private let group: String
    private let work: TemporaryDirectory

    /// Boots the real unit; `extra` arguments go to the boot script (the exclusive profile).
    convenience init(extra: [String] = []) async throws {
      try await self.init(
        script: packageFile("Scripts/systemd-namespace-boot.sh"),
        arguments: [
          Products.executable("waymarkd"), packageFile("systemd/waymarkd.service"),
          packageFile("systemd/waymark.sysusers"),
        ] + extra)
    }

    /// Runs the boot `script` (which execs systemd) in the namespaces, with a fresh work
    /// directory and then `arguments` as its arguments.
    init(script: String, arguments: [String]) async throws {
      let cgroupRoot = try #require(SystemdBootTests.cgroup2Mount)
      group = "\(cgroupRoot)/waymark-test-\(getpid())-\(UInt16.random(in: 0...UInt16.max))"
      try FileManager.default.createDirectory(atPath: group, withIntermediateDirectories: false)
      work = try TemporaryDirectory()
      let command = """
        echo $$ > '\(group)/cgroup.procs' || exit 90
        exec /usr/bin/unshare --fork --pid --mount --mount-proc --net --uts --ipc --cgroup \\
          --propagation private '\(script)' '\(work.path)' \\
          \(arguments.map { "'\($0)'" }.joined(separator: " "))
        """
      process = try DaemonProcess(
        executable: "/bin/sh", arguments: ["-c", command], environment: ["PATH": "/usr/bin:/bin"])
      do {
        systemdPID = try await SystemdBootTests.waitForNamespaceInit(
          of: process.processID, log: process)
      } catch {
        Self.end(process, group: group)
        throw error
      }
    }

    /// Runs `arguments` inside the namespace (mount and pid; `network` adds the network's),
    /// killed after `timeout`.
    func run(
      _ arguments: [String], network: Bool = false, timeout: Duration = .seconds(300)
    ) throws -> CommandRun {
      try CommandRun.run(
        "/usr/bin/nsenter",
        ["-t", String(systemdPID), "-m", "-p"] + (network ? ["-n"] : []) + arguments,
        timeout: timeout)
    }

    func stop() { Self.end(process, group: group) }

    private static func end(_ process: DaemonProcess, group: String) {
      // Killing the namespace's PID 1 ends everything in it; then remove the cgroups.
      if let pid = try? SystemdBootTests.namespaceInit(of: process.processID) { kill(pid, SIGKILL) }
      kill(process.processID, SIGKILL)
      var status: Int32 = 0
      waitpid(process.processID, &status, 0)
      SystemdBootTests.removeCgroups(group)
    }
  }

  @Test(
    .enabled(
      if: Self.impossibility == nil,
      "needs root, unshare, nsenter, systemd 252 and a writable cgroup2 (see impossibility)"))
  func theRealUnitReachesReadySetsStatusAndIsRestartedAfterAWatchdogStall() async throws {
    let boot = try await Boot()
    defer { boot.stop() }
    let systemdPID = boot.systemdPID

    let ready = try await Self.waitFor(systemdPID) {
      $0["ActiveState"] == "active" && $0["SubState"] == "running"
        && !($0["StatusText"] ?? "").isEmpty
    }
    #expect(ready["Type"] == "notify")
    #expect(ready["WatchdogUSec"] == "2s")
    #expect(
      ready["StatusText"]?.hasPrefix("not authorized: client 'waymarkd' has no grant") == true,
      "\(ready)")
    let firstPID = try #require(ready["MainPID"])
    #expect(ready["NRestarts"] == "0")

    // waymarkd holds no capability: none permitted, effective, ambient or in its bounding set.
    let capabilities = try Self.capabilities(of: firstPID, in: boot)
    for set in ["CapPrm", "CapEff", "CapBnd", "CapAmb"] {
      #expect(capabilities[set] == "0000000000000000", "\(set): \(capabilities)")
    }

    // The location socket under the real sandbox: /run/waymark/waymark.sock, reachable by another
    // user (nobody), who is identified as <user>:<exe> (waymark-identify, which holds
    // CAP_SYS_PTRACE, reads its /proc/<pid>/exe, hidden from waymarkd by ProtectProc=invisible)
    // and gets no grant.
    let waymark = Self.waymark
    let client = try CommandRun.run(
      "/usr/bin/nsenter",
      [
        "-t", String(systemdPID), "-m", "-p", "/usr/bin/setpriv", "--reuid=nobody",
        "--regid=nogroup", "--clear-groups", "/usr/bin/timeout", "3", waymark,
        "watch", "--daemon", "--socket", "/run/waymark/waymark.sock", "--json",
      ])
    #expect(
      client.output.contains(
        #""class":"AUTHORIZATION","client":"nobody:\#(waymark)","status":"notDetermined""#
      ),
      "\(client.output)\(client.stderr)")
    #expect(!client.output.contains(#""class":"TPV""#))
    // The helper that did it: one process for waymarkd's connection, which holds
    // CAP_SYS_PTRACE (bit 19) and nothing else.
    let helpers = try boot.run([
      "/bin/sh", "-c",
      "for p in /proc/[0-9]*; do [ \"$(readlink $p/exe)\" = /usr/local/bin/waymark-identify ] "
        + "&& echo ${p#/proc/}; done; true",
    ]).output.split(separator: "\n").map(String.init)
    #expect(helpers.count == 1, "\(helpers)")
    if let helper = helpers.first {
      let held = try Self.capabilities(of: helper, in: boot)
      #expect(held["CapEff"] == "0000000000080000", "\(held)")
      #expect(held["CapBnd"] == "0000000000080000", "\(held)")
    }
    // The helper's socket answers user waymark alone: root, who may open it, gets no answer
    // (the helper checks SO_PEERCRED and exits); nobody may not even connect (mode 0600).
    let helperSocket = "/proc/\(systemdPID)/root/run/waymark-identify.sock"
    var status = stat()
    #expect(stat(helperSocket, &status) == 0)
    #expect(status.st_mode & 0o777 == 0o600)
    // User waymark as the boot's own /etc copy has it (systemd-sysusers made it there).
    let daemonUID = try boot.run(["/usr/bin/id", "-u", "waymark"])
    #expect(daemonUID.status == 0, "\(daemonUID.stderr)")
    #expect(
      String(status.st_uid) == daemonUID.output.trimmingCharacters(in: .whitespacesAndNewlines)
        && status.st_uid != 0,
      "owner \(status.st_uid), user waymark \(daemonUID.output)")
    #expect(try Self.askHelper(at: helperSocket) == [])
    let asNobody = try boot.run([
      "/usr/bin/setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups",
      "/usr/bin/python3", "-c",
      "import socket; socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)"
        + ".connect('/run/waymark-identify.sock')",
    ])
    #expect(asNobody.status != 0 && asNobody.stderr.contains("PermissionError"), "\(asNobody)")

    // ExecReload (SIGHUP) works inside the sandbox and keeps the same process.
    let reload = try CommandRun.run(
      "/usr/bin/nsenter",
      ["-t", String(systemdPID), "-m", "-p", "systemctl", "reload", "waymarkd.service"])
    #expect(reload.status == 0, "\(reload.stderr)")
    let reloaded = try await Self.waitFor(systemdPID) {
      $0["ActiveState"] == "active" && $0["SubState"] == "running"
    }
    #expect(reloaded["MainPID"] == firstPID)
    #expect(reloaded["NRestarts"] == "0")

    // Stall the main loop: SIGSTOP. No WATCHDOG=1 comes; systemd aborts and restarts it.
    _ = try CommandRun.run(
      "/usr/bin/nsenter", ["-t", String(systemdPID), "-m", "-p", "kill", "-STOP", firstPID])
    let restarted = try await Self.waitFor(systemdPID) {
      $0["NRestarts"] == "1" && $0["ActiveState"] == "active" && $0["SubState"] == "running"
        && $0["MainPID"] != firstPID
    }
    #expect(restarted["StatusText"]?.hasPrefix("not authorized") == true)
  }

  /// The `Cap*` lines of `/proc/<pid>/status` inside the boot, as hex text.
  static func capabilities(of pid: String, in boot: Boot) throws -> [String: String] {
    let status = try boot.run(["/bin/cat", "/proc/\(pid)/status"]).output
    var sets: [String: String] = [:]
    for line in status.split(separator: "\n") where line.hasPrefix("Cap") {
      let parts = line.split(whereSeparator: { $0 == ":" || $0 == "\t" || $0 == " " })
      if parts.count == 2 { sets[String(parts[0])] = String(parts[1]) }
    }
    return sets
  }

  /// Asks waymark-identify at `path` about this process, as root: the answer's bytes (empty:
  /// the helper closed the connection without one).
  static func askHelper(at path: String) throws -> [UInt8] {
    let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
    let connection = socket(AF_UNIX, type, 0)
    defer { close(connection) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8)) }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        connect(connection, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    try #require(connected == 0, "connect: \(String(cString: strerror(errno)))")
    var timeout = timeval(tv_sec: 10, tv_usec: 0)
    _ = setsockopt(
      connection, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let pidfd = ProcFS.openPIDFD(getpid())
    defer { close(pidfd) }
    guard
      DescriptorMessage.send([IdentifyRequest.pidfd.rawValue], descriptor: pidfd, on: connection)
    else { return [] }
    // End of stream, or a reset (the helper exited with our question unread): no answer.
    guard let answer = DescriptorMessage.receive(on: connection, capacity: 8192) else {
      try #require(errno == ECONNRESET, "\(String(cString: strerror(errno)))")
      return []
    }
    return answer.bytes
  }

  /// `nmea-tcp` under the shipped unit, whose `ProcSubset=pid` hides `/proc/net` from waymarkd:
  /// peers of other users on 127.0.0.1 are identified through waymark-identify (which reads
  /// waymarkd's `/proc/<pid>/net/tcp` and the peer's user's `/proc/<pid>/fd`). A granted peer
  /// (nobody's Python, reading the socket it connected) reads the sentences of a drive; an
  /// ungranted one (user daemon's, the same script) is closed at once and logged as refused
  /// with its identity.
  @Test(
    .enabled(
      if: Self.impossibility == nil,
      "needs root, unshare, nsenter, systemd 252 and a writable cgroup2 (see impossibility)"),
    .enabled(
      if: ["/usr/sbin/gpsd", "/usr/sbin/ip"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: $0)
      }, "needs gpsd and ip (Scripts/install-deps.sh)"))
  func nmeaTCPPeersOfOtherUsersAreIdentifiedUnderTheShippedUnit() async throws {
    let boot = try await Boot()
    defer { boot.stop() }
    _ = try await Self.waitFor(boot.systemdPID) {
      $0["StatusText"]?.hasPrefix("not authorized") == true
    }
    let waymark = Self.waymark
    let store = "/var/lib/waymark/waymark.db"
    let python = String(cString: realpath("/usr/bin/python3", nil))
    for (client, level) in [("waymarkd", "always"), ("nobody:\(python)", "whenInUse")] {
      let grant = try boot.run([
        "/usr/bin/setpriv", "--reuid=waymark", "--regid=waymark", "--clear-groups",
        waymark, "auth", "grant", client, level, "--store", store,
      ])
      #expect(grant.status == 0, "\(grant.output)\(grant.stderr)")
    }
    // The daemon's log into a file (after test.conf, which sends it to systemd's console),
    // loopback up, nmea-tcp on.
    let configure = try boot.run(
      [
        "/bin/sh", "-c",
        "ip link set lo up && printf '[Service]\\nStandardError=append:/run/waymarkd-test.log\\n' "
          + "> /etc/systemd/system/waymarkd.service.d/zz-log.conf "
          + "&& printf 'gpsd = 127.0.0.1:2947\\nauthorization-check = 1\\n"
          + "nmea-tcp = 127.0.0.1:10110\\n' > /etc/waymark/waymark.conf "
          + "&& systemctl daemon-reload && systemctl restart waymarkd.service",
      ], network: true)
    #expect(configure.status == 0, "\(configure.stderr)")
    let logPath = "/proc/\(boot.systemdPID)/root/run/waymarkd-test.log"
    func waitForLog(_ predicate: (Substring) -> Bool) async throws {
      let clock = ContinuousClock()
      let deadline = clock.now + .seconds(30)
      var text = ""
      while clock.now < deadline {
        text = (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? ""
        if text.split(separator: "\n").contains(where: predicate) { return }
        try await clock.sleep(for: .milliseconds(100))
      }
      throw TestFailure(description: "no such line in waymarkd's log:\n\(text)")
    }
    // A receiver and its gpsd in the boot's network: the demo drive, five epochs a second,
    // from the boot's /run (the checkout may be out of its reach).
    let driveLog = "/run/drive.nmea"
    try FileManager.default.copyItem(
      atPath: packageFile("Demo/drive.nmea"), toPath: "/proc/\(boot.systemdPID)/root\(driveLog)")
    let drive = try DaemonProcess(
      executable: "/usr/bin/nsenter",
      arguments: [
        "-t", String(boot.systemdPID), "-m", "-p", "-n", waymark, "simulate",
        driveLog, "--gpsd", "--port", "2947", "--rate", "5",
      ], environment: ["PATH": "/usr/sbin:/usr/bin:/sbin:/bin"])
    defer { drive.signal(SIGTERM) }
    try await waitForLog { $0.contains("NMEA on TCP 127.0.0.1:10110") }
    // (DaemonProcess, not CommandRun: a child of CommandRun inherits this test thread's
    // blocked signals, so `timeout` could not end a reader.)
    func reader(_ user: String) throws -> DaemonProcess {
      try DaemonProcess(
        executable: "/bin/sh",
        arguments: [
          "-c",
          "exec /usr/bin/nsenter -t \(boot.systemdPID) -m -p -n /usr/bin/setpriv --reuid=\(user) "
            + "--regid=nogroup --clear-groups /usr/bin/python3 -c 'import itertools, socket, sys; "
            + "s = socket.create_connection((\"127.0.0.1\", 10110)); "
            + "[sys.stdout.write(l.decode()) for l in itertools.islice(s.makefile(\"rb\"), 40)]' "
            + "1>&2",
        ], environment: ["PATH": "/usr/bin:/bin"])
    }
    let refused = try reader("daemon")
    #expect(try await refused.waitForExit() == 0)
    #expect(!refused.log.contains { $0.hasPrefix("$GPGGA") }, "\(refused.logText)")
    try await waitForLog {
      $0.contains("refused NMEA client daemon:\(python)") && $0.contains("notDetermined")
    }
    let granted = try reader("nobody")
    _ = try await granted.waitForLine { $0.hasPrefix("$GPGGA") }
    try await waitForLog { $0.contains("NMEA client nobody:\(python)") }
  }

  /// The exclusive profile in the same harness: systemd loads the nftables rule through
  /// waymark-exclusive.service before gpsd.service starts; then the real waymarkd.service (user
  /// waymark, fully sandboxed) reaches gpsd, while a process of another user gets nothing from
  /// gpsd's port (IPv4 or IPv6), and gets it again once the rule is gone. gpsd's shared-memory
  /// export cannot be attached by a dialout user (and can once `PrivateIPC=` is off); with a
  /// broken rule file gpsd does not run (and starts again once it is repaired).
  @Test(
    .enabled(
      if: Self.impossibility == nil,
      "needs root, unshare, nsenter, systemd 252 and a writable cgroup2 (see impossibility)"),
    .enabled(
      if: ["/usr/sbin/nft", "/usr/sbin/gpsd", "/usr/bin/gpspipe", "/usr/sbin/ip"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: $0)
      }, "needs nft, ip, gpsd and gpspipe (Scripts/install-deps.sh)"))
  func theExclusiveProfileLeavesGPSDToWaymarkdAlone() async throws {
    let boot = try await Boot(extra: [
      packageFile("systemd/waymark-exclusive.service"),
      packageFile("systemd/waymark-exclusive.nft"),
    ])
    defer { boot.stop() }
    let profile = try await Self.waitFor(boot.systemdPID, unit: "waymark-exclusive.service") {
      $0["ActiveState"] == "active" || $0["Result"] == "exit-code"
    }
    #expect(profile["ActiveState"] == "active", "\(profile)\n\(boot.process.logText)")
    _ = try await Self.waitFor(boot.systemdPID, unit: "gpsd.service") {
      $0["ActiveState"] == "active" && $0["SubState"] == "running"
    }
    _ = try await Self.waitFor(boot.systemdPID) {
      $0["StatusText"]?.hasPrefix("not authorized") == true
    }

    // The daemon's own grant, written by user waymark (the store's owner), as an operator would.
    let waymark = Self.waymark
    let grant = try boot.run([
      "/usr/bin/setpriv", "--reuid=waymark", "--regid=waymark", "--clear-groups",
      waymark, "auth", "grant", "waymarkd", "always", "--store",
      "/var/lib/waymark/waymark.db",
    ])
    #expect(grant.status == 0, "\(grant.output)\(grant.stderr)")
    // The status says gpsd answered (and has no device): the daemon got through as user waymark.
    let running = try await Self.waitFor(boot.systemdPID) {
      $0["StatusText"] == "waiting for a receiver (gpsd has no device)"
    }
    #expect(running["NRestarts"] == "0")

    func firstLine(as user: String, _ endpoint: String) throws -> String {
      var arguments = ["/usr/bin/timeout", "5", "/usr/bin/gpspipe", "-w", "-n", "1", endpoint]
      if user != "root" {
        arguments =
          ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=nogroup", "--clear-groups"]
          + arguments
      }
      let run = try boot.run(arguments, network: true)
      return run.output.split(separator: "\n").first.map(String.init) ?? ""
    }
    // Nothing over IPv4 or IPv6 for another user, while root (the positive control) reads
    // gpsd's greeting on both: gpsd.socket does listen on ::1.
    #expect(try firstLine(as: "nobody", "127.0.0.1:2947") == "")
    #expect(try firstLine(as: "nobody", "[::1]:2947") == "")
    #expect(try firstLine(as: "root", "127.0.0.1:2947").hasPrefix(#"{"class":"VERSION""#))
    #expect(try firstLine(as: "root", "[::1]:2947").hasPrefix(#"{"class":"VERSION""#))

    // gpsd's shared-memory export (key 0x47505344, mode 0666, every fix) is in an IPC
    // namespace of gpsd's own: a process of a dialout user cannot attach it.
    let gpsd = try #require(Self.show(boot.systemdPID, unit: "gpsd.service")["MainPID"])
    let namespaces = try boot.run([
      "/bin/sh", "-c", "readlink /proc/\(gpsd)/ns/ipc /proc/1/ns/ipc",
    ]).output.split(separator: "\n")
    #expect(namespaces.count == 2 && namespaces[0] != namespaces[1], "\(namespaces)")
    let privateExport = try Self.attachGPSDExport(boot)
    #expect(privateExport == "refused", "\(privateExport)")

    // Without the rules gpsd does not run: a broken rule file fails the profile, which stops
    // gpsd and keeps it from starting again.
    let broken = try boot.run([
      "/bin/sh", "-c",
      "cp /etc/waymark/exclusive.nft /run/exclusive.nft && echo 'table inet {' "
        + "> /etc/waymark/exclusive.nft; systemctl restart waymark-exclusive.service; "
        + "systemctl start gpsd.service",
    ])
    #expect(broken.status != 0, "\(broken.output)\(broken.stderr)")
    let down = try Self.show(boot.systemdPID, unit: "gpsd.service")
    #expect(down["ActiveState"] != "active", "\(down)")
    #expect(try firstLine(as: "root", "127.0.0.1:2947") == "")
    // The positive control: the rules repaired, starting gpsd brings the profile up first.
    let repaired = try boot.run([
      "/bin/sh", "-c",
      "cp /run/exclusive.nft /etc/waymark/exclusive.nft && systemctl start gpsd.service",
    ])
    #expect(repaired.status == 0, "\(repaired.stderr)")
    _ = try await Self.waitFor(boot.systemdPID, unit: "gpsd.service") {
      $0["ActiveState"] == "active" && $0["SubState"] == "running"
    }
    #expect(
      try Self.show(boot.systemdPID, unit: "waymark-exclusive.service")["ActiveState"]
        == "active")
    #expect(try firstLine(as: "nobody", "127.0.0.1:2947") == "")

    // Without the rule, the same process of the same user reads gpsd: the rule was the wall.
    let flush = try boot.run(
      ["/usr/sbin/nft", "delete", "table", "inet", "waymark_exclusive"], network: true)
    #expect(flush.status == 0, "\(flush.stderr)")
    #expect(try firstLine(as: "nobody", "127.0.0.1:2947").hasPrefix(#"{"class":"VERSION""#))
    #expect(try firstLine(as: "nobody", "[::1]:2947").hasPrefix(#"{"class":"VERSION""#))
    // And without PrivateIPC= the same dialout process attaches gpsd's export: the private
    // namespace was the wall.
    let shared = try boot.run([
      "/bin/sh", "-c",
      "printf '[Service]\\nPrivateIPC=no\\n' > /etc/systemd/system/gpsd.service.d/zz-test.conf"
        + " && systemctl daemon-reload && systemctl restart gpsd.service",
    ])
    #expect(shared.status == 0, "\(shared.stderr)")
    _ = try await Self.waitFor(boot.systemdPID, unit: "gpsd.service") {
      $0["ActiveState"] == "active" && $0["SubState"] == "running"
    }
    _ = try firstLine(as: "root", "127.0.0.1:2947")  // gpsd up and serving
    let sharedExport = try Self.attachGPSDExport(boot)
    #expect(sharedExport == "attached", "\(sharedExport)")
  }

  /// Tries to attach gpsd's shared-memory export (`shmget(0x47505344)`, `shmat` read-only) as
  /// a process of user nobody and group dialout in the boot's IPC namespace: "attached" or
  /// "refused" (and any error text).
  static func attachGPSDExport(_ boot: Boot) throws -> String {
    let script = """
      import ctypes
      libc = ctypes.CDLL(None, use_errno=True)
      libc.shmat.restype = ctypes.c_void_p
      segment = libc.shmget(0x47505344, 0, 0)
      address = libc.shmat(segment, None, 0o10000) if segment >= 0 else None
      print("attached" if address not in (None, ctypes.c_void_p(-1).value) else "refused")
      """
    // (-i: the boot's IPC namespace, not this test's, where other gpsds may have exports.)
    let run = try CommandRun.run(
      "/usr/bin/nsenter",
      [
        "-t", String(boot.systemdPID), "-m", "-p", "-i", "/usr/bin/setpriv", "--reuid=nobody",
        "--regid=dialout", "--clear-groups", "/usr/bin/python3", "-c", script,
      ])
    return run.output.trimmingCharacters(in: .whitespacesAndNewlines) + run.stderr
  }

  /// The PID (in our namespace) of the first child of `unshare`, which is PID 1 inside.
  static func namespaceInit(of shellPID: pid_t) throws -> pid_t? {
    // The shell exec'd unshare, so shellPID is unshare; its only child is the namespace init.
    let path = "/proc/\(shellPID)/task/\(shellPID)/children"
    let text = try String(contentsOfFile: path, encoding: .utf8)
    return text.split(separator: " ").first.flatMap { pid_t($0) }
  }

  static func waitForNamespaceInit(of shellPID: pid_t, log: DaemonProcess) async throws -> pid_t {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(30)
    while clock.now < deadline {
      if let pid = try? namespaceInit(of: shellPID),
        let command = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
        command.hasPrefix(systemd)
      {
        return pid
      }
      try await clock.sleep(for: .milliseconds(50))
    }
    throw TestFailure(description: "systemd did not start in the namespace:\n\(log.logText)")
  }

  static func removeCgroups(_ group: String) {
    guard let walker = FileManager.default.enumerator(atPath: group) else { return }
    var directories: [String] = []
    for case let entry as String in walker {
      var isDirectory: ObjCBool = false
      let path = group + "/" + entry
      if FileManager.default.fileExists(atPath: path, isDirectory: &isDirectory),
        isDirectory.boolValue
      {
        directories.append(path)
      }
    }
    // Deepest first; a cgroup can be removed once its processes are gone.
    for path in directories.sorted(by: { $0.count > $1.count }) + [group] {
      for _ in 0..<50 {
        if rmdir(path) == 0 || errno == ENOENT { break }
        usleep(20_000)
      }
    }
  }
}
