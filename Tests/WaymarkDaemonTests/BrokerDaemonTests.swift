import Foundation
import NMEA
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// The id of system group `name` (created when missing; group `waymark` with its user, by
/// ``daemonUser()``).
private func ensureGroup(_ name: String) throws -> gid_t {
  if name == daemonUserName { return try daemonUser().gid }
  if getgrnam(name) == nil {
    let run = try CommandRun.run("/usr/sbin/groupadd", ["--system", name])
    guard run.status == 0 else { throw TestFailure(description: "groupadd \(name): \(run.stderr)") }
  }
  guard let entry = getgrnam(name) else { throw TestFailure(description: "no group \(name)") }
  return entry.pointee.gr_gid
}

/// The real path of an executable, as the daemon's peer identity writes it.
private func realPath(_ path: String) -> String {
  guard let resolved = realpath(path, nil) else { return path }
  defer { free(resolved) }
  return String(cString: resolved)
}

/// `waymark <arguments>` run as `user` (through setpriv), with no supplementary group or with
/// group `group`, its standard output and error collected as lines.
func runAs(_ user: String, group: String? = nil, _ arguments: [String]) throws
  -> DaemonProcess
{
  let ids = try systemUser(user)
  let waymark = Products.executable("waymark")
  let quoted = ([waymark] + arguments).map { "'\($0)'" }.joined(separator: " ")
  let groups = try group.map { "--groups=\(try ensureGroup($0))" } ?? "--clear-groups"
  return try DaemonProcess(
    executable: "/bin/sh",
    arguments: [
      "-c",
      "exec /usr/bin/setpriv --reuid=\(ids.uid) --regid=\(ids.gid) \(groups) -- "
        + "\(quoted) 1>&2",
    ],
    environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
}

/// The TPV objects among `lines`, as fixes.
private func fixes(_ lines: [String]) -> [Fix] {
  lines.compactMap { BrokerMessage(line: $0).fix }
}

/// The first way `received` differs from `sent`, or `nil` when it is the same fixes: the same
/// times in the same order, none missing and none extra, each at its sent position to 1e-6
/// degree (the TPV's precision).
private func difference(_ received: [Fix], from sent: [Fix]) -> String? {
  for (index, (got, expected)) in zip(received, sent).enumerated() {
    let stamp = Timestamp.format(expected.time!)
    guard got.time == expected.time else {
      return "fix \(index) is of \(got.time.map(Timestamp.format) ?? "no time"), not \(stamp)"
    }
    guard let coordinate = got.coordinate, let position = expected.coordinate,
      abs(coordinate.latitude - position.latitude) < 1e-6,
      abs(coordinate.longitude - position.longitude) < 1e-6
    else {
      return "the fix of \(stamp) is at \(String(describing: got.coordinate)), not \(expected)"
    }
  }
  guard received.count == sent.count else {
    let missing = sent.dropFirst(received.count).first?.time.map(Timestamp.format) ?? "none"
    return "\(received.count) fixes of \(sent.count) (the first one missing: \(missing))"
  }
  return nil
}

/// An in-process client of a socket of the daemon (location or NMEA) that keeps every line it
/// receives.
final class Listener: Sendable {
  let connection: BrokerConnection
  private let lines = Locked<[String]>([])
  private let ended = Locked(false)

  init(path: String, watch: String? = #"{"class":"WATCH","enable":true}"#) throws {
    connection = try BrokerConnection(path: path)
    let messages = connection.messages()
    Task { [lines, ended] in
      for await message in messages { lines.withLock { $0.append(message.line) } }
      ended.withLock { $0 = true }
    }
    if let watch { try connection.send(watch) }
  }

  var received: [String] { lines.withLock { $0 } }
  var tpvCount: Int { received.filter { $0.hasPrefix(#"{"class":"TPV""#) }.count }
  var fixes: [Fix] { received.compactMap { BrokerMessage(line: $0).fix } }
  var hasEnded: Bool { ended.withLock { $0 } }

  func wait(timeout: Duration = .seconds(20), _ predicate: ([String]) -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if predicate(received) { return }
      try await clock.sleep(for: .milliseconds(20))
    }
    throw TestFailure(
      description: "condition not met within \(timeout); last lines:\n"
        + received.suffix(3).joined(separator: "\n"))
  }

  /// The daemon's count of watching clients, from a STATUS asked now (this client does not
  /// watch, so it is not among them).
  func watchers() async throws -> Int {
    let isStatus = { (line: String) in line.hasPrefix(#"{"class":"STATUS""#) }
    let asked = received.filter(isStatus).count
    try connection.send(#"{"class":"STATUS"}"#)
    try await wait(timeout: .seconds(5)) { $0.filter(isStatus).count > asked }
    let reply = received.last(where: isStatus).map { BrokerMessage(line: $0) }
    return Int(reply?.number("watchers") ?? -1)
  }

  /// Asks STATUS until the daemon counts `count` watchers: then a WATCH sent on another
  /// connection has reached it.
  func waitForWatchers(_ count: Int, timeout: Duration = .seconds(10)) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    var counted = try await watchers()
    while counted != count {
      guard clock.now < deadline else {
        throw TestFailure(description: "the daemon counts \(counted) watchers, not \(count)")
      }
      try await clock.sleep(for: .milliseconds(20))
      counted = try await watchers()
    }
  }
}

extension DaemonProcess {
  fileprivate func waitForTPV(at time: Date) async throws {
    let stamp = Timestamp.format(time)
    try await waitForLine { $0.hasPrefix(#"{"class":"TPV""#) && $0.contains(stamp) }
  }
}

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "needs root: the tests create system users and run clients as them"))
struct BrokerDaemonTests {
  /// Three users' processes and in-process clients on one drive through a real gpsd: grants
  /// decide what each receives; revocation cuts a stream; hostile and silent clients, and 200
  /// watchers, leave the others undisturbed.
  @Test func grantsDecideWhatEachPeerReceives() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home)],
      extraConfig: "socket-buffer = 4096\nagent-timeout = 2\nsocket = \(socketPath)\n")
    defer { rig.stop() }
    let waymark = realPath(Products.executable("waymark"))
    let ourselves = "root:" + realPath("/proc/self/exe")
    try grant("wmtest-a:\(waymark)", "whenInUse", store: rig.store)
    try grant("wmtest-c:\(waymark)", "whenInUse", store: rig.store, reduced: true)
    try grant("wmtest-d:\(waymark)", "whenInUse", store: rig.store)
    try grant(ourselves, "always", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    var mode = stat()
    #expect(stat(socketPath, &mode) == 0 && mode.st_mode & 0o777 == 0o666)

    let watch = ["watch", "--daemon", "--socket", socketPath, "--json"]
    let full = try runAs("wmtest-a", watch)
    let none = try runAs("wmtest-b", watch)
    let reduced = try runAs("wmtest-c", watch)
    let revoked = try runAs("wmtest-d", watch)
    try await full.waitForLine { $0.contains(#""status":"authorizedWhenInUse","accuracy":"full""#) }
    try await none.waitForLine { $0.contains(#""status":"notDetermined""#) }
    try await reduced.waitForLine { $0.contains(#""accuracy":"reduced""#) }
    try await revoked.waitForLine { $0.contains(#""status":"authorizedWhenInUse""#) }
    #expect(full.log.first?.hasPrefix(#"{"class":"VERSION","release":"#) == true)
    #expect(full.log.contains { $0.contains(#""client":"wmtest-a:\#(waymark)""#) })

    // In-process clients (root): 200 watchers, one for events, a garbage sender, a non-reader.
    let watchers = try (0..<200).map { _ in try Listener(path: socketPath) }
    let events = try Listener(path: socketPath, watch: #"{"class":"WATCH","events":true}"#)
    let garbage = try Listener(path: socketPath, watch: nil)
    let silent = try BrokerConnection(path: socketPath)
    try silent.send(#"{"class":"WATCH","enable":true}"#)
    try await events.wait { $0.contains { $0.contains(#""status":"authorizedAlways""#) } }
    try garbage.connection.send("hello")
    try garbage.connection.send("[1,2,3]")
    try garbage.connection.send(#"{"class":"SELFDESTRUCT"}"#)
    try garbage.connection.send(String(repeating: "x", count: 5000))
    try await garbage.wait { lines in lines.filter { $0.hasPrefix(#"{"class":"ERROR""#) }.count == 4
    }
    try await garbage.wait { _ in garbage.hasEnded }
    #expect(garbage.received.last?.contains("longer than 4096 bytes") == true)

    // First half of the drive, then the revocation, then the rest.
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let half = epochs.count / 2
    try await rig.send(epochs[..<half])
    try await full.waitForTPV(at: epochs[half - 1].time)
    try await revoked.waitForTPV(at: epochs[half - 1].time)
    try await events.wait { $0.contains { $0.hasPrefix(#"{"class":"ARRIVAL""#) } }
    let revoke = try CommandRun.waymark(
      ["auth", "revoke", "wmtest-d:\(waymark)", "--store", rig.store])
    #expect(revoke.status == 0, "\(revoke.stderr)")
    let clock = ContinuousClock()
    let revokedAt = clock.now
    try await revoked.waitForLine(timeout: .seconds(10)) {
      $0.contains(#""class":"AUTHORIZATION""#) && $0.contains("notDetermined")
    }
    let delay = revokedAt.duration(to: clock.now)
    // A connect/disconnect storm while the rest of the drive goes out.
    let storm = Task.detached {
      var connections = 0
      for _ in 0..<300 {
        guard let connection = try? BrokerConnection(path: socketPath) else { continue }
        try? connection.send(#"{"class":"WATCH","enable":true}"#)
        connection.close()
        connections += 1
      }
      return connections
    }
    try await rig.send(epochs[half...])
    #expect(await storm.value == 300)
    try await full.waitForTPV(at: epochs.last!.time)
    try await daemon.waitForLine { $0.contains("does not read") }

    // Full grant: every fix of the drive, none missing or extra, in order, at the positions
    // sent.
    let drive = Commute.fixes(homeStay: 20, officeStay: 20)
    #expect(drive.count == epochs.count)
    #expect(difference(fixes(full.log), from: drive) == nil)
    let sent = Dictionary(drive.map { ($0.time!, $0.coordinate!) }, uniquingKeysWith: { $1 })
    // No grant: no coordinates at all.
    #expect(fixes(none.log).isEmpty)
    #expect(!none.logText.contains("\"lat\""))
    // Reduced: coarse positions only, never one of the sent ones.
    let coarse = fixes(reduced.log)
    #expect(!coarse.isEmpty)
    for fix in coarse {
      #expect(fix.horizontalError! >= 1000)
      #expect(fix.altitudeMSL == nil && fix.speed == nil && fix.track == nil)
      let exact = sent[fix.time!]!
      #expect(fix.coordinate!.distance(to: exact) > 50)
    }
    // Revoked: an AUTHORIZATION, then no TPV.
    let lines = revoked.log
    let cut = try #require(lines.lastIndex { $0.contains(#""class":"AUTHORIZATION""#) })
    #expect(!lines[cut...].contains { $0.hasPrefix(#"{"class":"TPV""#) })
    // Told within the broker's grant refresh (0.5 s) of the store's change. From the revoke
    // command's return to the client's printed AUTHORIZATION, measured on the 2-core test
    // machine with other builds running: 0.11, 0.11, 0.17, 0.26 and 0.30 s; the bound is
    // about twice the worst (the wait above allows 10 s, so this is the check that fails).
    #expect(delay < .milliseconds(600), "revocation took \(delay)")
    // 200 watchers got every fix of the drive: the very fixes sent (times and positions), not
    // merely as many; the silent one was cut off alone.
    try await eventually(
      "\(drive.count) fixes for each watcher; fewest: \(watchers.map(\.tpvCount).min() ?? 0)"
    ) { watchers.allSatisfy { $0.tpvCount >= drive.count } }
    let differing = watchers.indices.compactMap { index in
      difference(watchers[index].fixes, from: drive).map { "watcher \(index): \($0)" }
    }
    #expect(differing.isEmpty, "\(differing.count) watchers differ: \(differing.prefix(3))")
    #expect(daemon.log.filter { $0.contains("does not read") }.count == 1)
    silent.close()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    #expect(!FileManager.default.fileExists(atPath: socketPath))
  }

  /// `nmea-tcp`: the NMEA stream on loopback TCP under the same grants, each peer identified
  /// through /proc/net/tcp. A granted program (Python, reading the socket it connected) reads
  /// sentences of the drive; a reduced one gets coarse positions only; an ungranted one is
  /// closed at once: it sees the end of the stream and exits by itself, while the granted ones,
  /// the same script, read on until the daemon stops.
  @Test func nmeaOverTCPFollowsTheSameGrants() async throws {
    let port = try GPSDHarness.freePort()
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "nmea-tcp = 127.0.0.1:\(port)\n")
    defer { rig.stop() }
    try grant(pythonClient("wmtest-a"), "whenInUse", store: rig.store)
    try grant(pythonClient("wmtest-c"), "whenInUse", store: rig.store, reduced: true)
    let script = try attackerScript()
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>NMEA on TCP 127.0.0.1:\(port)") }
    try await rig.gpsd.waitForWatchers(1)
    func reader(_ user: String) throws -> DaemonProcess {
      try attack(user, script, ["tcpinherit", "\(port)", "alone", "300"])
    }
    let full = try reader("wmtest-a")
    let reduced = try reader("wmtest-c")
    try await daemon.waitForLine { $0.contains("NMEA client \(pythonClient("wmtest-a"))") }
    try await daemon.waitForLine { $0.contains("NMEA client \(pythonClient("wmtest-c"))") }
    let clock = ContinuousClock()
    let connecting = clock.now
    let refused = try reader("wmtest-b")
    // From its start to its exit (setpriv, Python, connect, identification, close, the end of
    // the stream), measured on the 2-core test machine with a build running: 0.13, 0.14, 0.21
    // and 0.23 s; the bound is over three times the worst. Without the close, the script would
    // read for 300 s.
    let exited = try await refused.waitForExit(timeout: .milliseconds(800))
    let closedAfter = connecting.duration(to: clock.now)
    print("nmea-tcp: the ungranted peer's script ended \(closedAfter) after its start")
    #expect(exited == 0, "\(refused.logText)")
    try await daemon.waitForLine {
      $0.contains("refused NMEA client \(pythonClient("wmtest-b"))")
        && $0.contains("notDetermined")
    }
    #expect(refused.log == ["connected", "tcpinherit closed"], "\(refused.logText)")
    // The control: the same command of the granted peers, connected earlier, has not ended.
    #expect(full.isRunning && reduced.isRunning, "refused one closed after \(closedAfter)")
    let epochs = Commute.epochs(homeStay: 5, officeStay: 5).prefix(20)
    try await rig.send(epochs)
    let lastClock = String(Timestamp.format(epochs.last!.time).dropFirst(11).prefix(8))
      .replacingOccurrences(of: ":", with: "")
    try await full.waitForLine { $0.hasPrefix("$GPGGA,\(lastClock)") }
    // Decoded with our own parser: the positions of the drive, to 1 cm.
    var decoder = NMEADecoder(path: "tcp")
    var decoded: [Fix] = []
    let text = full.log.joined(separator: "\n") + "\n"
    Array(text.utf8).withUnsafeBytes { _ = decoder.decode(chunk: $0) { decoded.append($0) } }
    _ = decoder.finish { decoded.append($0) }
    let sent = Commute.fixes(homeStay: 5, officeStay: 5)
    #expect(decoded.count >= epochs.count - 1)
    for fix in decoded {
      let original = try #require(sent.first { abs($0.time!.timeIntervalSince(fix.time!)) < 0.001 })
      #expect(fix.coordinate!.distance(to: original.coordinate!) < 0.01)
    }
    try await reduced.waitForLine { $0.hasPrefix("$GPGGA") }
    var coarse = NMEADecoder(path: "coarse")
    var coarseFixes: [Fix] = []
    let coarseText = reduced.log.joined(separator: "\n") + "\n"
    Array(coarseText.utf8).withUnsafeBytes {
      _ = coarse.decode(chunk: $0) { coarseFixes.append($0) }
    }
    _ = coarse.finish { coarseFixes.append($0) }
    #expect(!coarseFixes.isEmpty)
    for fix in coarseFixes where fix.coordinate != nil {
      #expect(fix.altitudeMSL == nil)
      let original = try #require(sent.first { abs($0.time!.timeIntervalSince(fix.time!)) < 0.001 })
      #expect(fix.coordinate!.distance(to: original.coordinate!) > 50)
    }
    #expect(full.isRunning && reduced.isRunning)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    // Closed by the daemon's end, the granted peers' `cat`s end as the refused one did.
    #expect(try await full.waitForExit(timeout: .seconds(5)) == 0)
    #expect(try await reduced.waitForExit(timeout: .seconds(5)) == 0)
  }

  /// Only root, the store's owner and group `waymark` may change grants: another user gets a
  /// clear error and exit 77, and the grant is not written.
  @Test func anotherUserMayNotChangeGrants() async throws {
    let directory = try TemporaryDirectory()
    let store = directory.file("waymark.db")
    try grant("root:/usr/bin/true", "always", store: store)
    chmod(store, 0o666)  // even a writable file: the check says no first
    let attempt = try runAs(
      "wmtest-b", ["auth", "grant", "wmtest-b:/usr/bin/bash", "always", "--store", store])
    #expect(try await attempt.waitForExit() == 77)
    #expect(
      attempt.logText.contains("only root, the owner of \(store) and members of group 'waymark'"))
    let grants = try DatabaseGrantStore(database: Database(path: store)).allGrants()
    #expect(grants.map(\.clientID) == ["root:/usr/bin/true"])
  }

  /// The agent path: an agent in group `waymark` answers for that user's other programs and
  /// its answer is recorded. A user neither root nor in the group cannot make a decision by
  /// script: its `waymark agent --answer` (the shipped agent, matching the default `agents`
  /// rule) is refused (exit 77, logged), and its program's request is told `denied` at the
  /// deadline and gets no position while the drive runs (before: allowed once, every fix). A
  /// request nobody can answer is told `denied` and nothing is recorded; a program that is not
  /// a configured agent is refused.
  @Test func agentsAnswerRequestsOfTheirOwnUser() async throws {
    let socketDirectory = try TemporaryDirectory.socketDirectory()
    let socketPath = socketDirectory + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "agent-timeout = 2\nsocket = \(socketPath)\n")
    defer { rig.stop() }
    let waymark = realPath(Products.executable("waymark"))
    let script = try attackerScript()
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    let agent = try runAs("wmtest-a", ["agent", "--socket", socketPath, "--answer", "once"])
    #expect(try await agent.waitForExit() == 77, "\(agent.logText)")
    #expect(agent.logText.contains("a scripted agent (--answer) must run as root or in group"))
    try await daemon.waitForLine {
      $0.contains("wmtest-a:") && $0.contains("asked to be a scripted agent; refused")
    }
    let decider = try runAs(
      "wmtest-j", group: "waymark", ["agent", "--socket", socketPath, "--answer", "always"])
    try await daemon.waitForCount("is an agent", 1)
    let asking = try attack("wmtest-a", script, ["request", socketPath, "whenInUse", "600"])
    let recorded = try attack("wmtest-j", script, ["request", socketPath, "whenInUse", "600"])
    let orphan = try runAs(
      "wmtest-b", ["watch", "--daemon", "--socket", socketPath, "--json", "--request", "always"])
    let refused = try attack("wmtest-b", script, ["answerer", socketPath, "600"])
    try await asking.waitForLine { $0.contains(#""status":"denied""#) }
    try await recorded.waitForLine { $0.contains(#""status":"authorizedAlways""#) }
    try await decider.waitForLine { $0.contains(#""recorded":true"#) }
    #expect(!decider.log.contains { $0.contains("wmtest-a") || $0.contains("wmtest-b") })
    try await orphan.waitForLine(timeout: .seconds(10)) { $0.contains(#""status":"denied""#) }
    try await refused.waitForLine { $0.contains("not an agent") }
    try await daemon.waitForLine {
      $0.contains("wmtest-b:") && $0.contains("refused (not in agents)")
    }

    let epochs = Commute.epochs(homeStay: 5, officeStay: 5).prefix(10)
    try await rig.send(epochs)
    // The positive control first: the recorded program gets the drive's last fix; by then the
    // refused user's program has had every chance to get one.
    try await recorded.waitForLine { $0.contains(Timestamp.format(epochs.last!.time)) }
    #expect(fixes(asking.log).isEmpty, "\(asking.logText)")
    #expect(fixes(orphan.log).isEmpty)
    let grants = try DatabaseGrantStore(database: Database(path: rig.store)).allGrants()
    #expect(grants.map(\.clientID).contains(pythonClient("wmtest-j")))
    #expect(!grants.map(\.clientID).contains(pythonClient("wmtest-a")))
    #expect(!grants.map(\.clientID).contains("wmtest-b:\(waymark)"))
    for process in [asking, recorded, refused, agent, decider] { process.signal(SIGTERM) }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// The daemon's own writes (a track point a fix here: `track-batch = 1`, each its own
  /// transaction) do not wake the broker at every modification of the store: after a check of
  /// the grants its watch of the store rests until the next check is due (0.5 s). With one
  /// watching client at 25 fixes a second, the broker's thread blocks and is woken about once
  /// a fix, to send it (111 and 112 times for 100 fixes when written); before the rest, each
  /// transaction's writes to the WAL woke it about twice more (269 to 313 times). A revocation
  /// written while the watch rests still reaches the client.
  @Test func theDaemonsOwnWritesDoNotWakeTheBrokerAtEachWrite() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home)],
      extraConfig: "socket = \(socketPath)\nlog-level = debug\ntrack-min-distance = 0\n"
        + "track-min-interval = 0\ntrack-batch = 1\n")
    defer { rig.stop() }
    let ourselves = "root:" + realPath("/proc/self/exe")
    try grant(ourselves, "always", store: rig.store)
    let daemon = try rig.launch()
    defer { if daemon.isRunning { daemon.signal(SIGKILL) } }
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let client = try Listener(path: socketPath)
    try await client.wait { $0.contains { $0.contains(#""status":"authorizedAlways""#) } }

    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let drive = epochs.prefix(100)
    let before = try Self.brokerWakeUps(daemon.processID)
    try await rig.receiver.send(epochs: drive.map(\.lines), interval: .milliseconds(40))
    let lastStamp = Timestamp.format(drive.last!.time)
    try await client.wait {
      $0.contains { $0.hasPrefix(#"{"class":"TPV""#) && $0.contains(lastStamp) }
    }
    let woken = try Self.brokerWakeUps(daemon.processID) - before
    // The control: the count sees the broker's wake-ups, at least one for every other fix sent.
    #expect(woken >= drive.count / 2, "\(woken) wake-ups of the broker for \(drive.count) fixes")
    #expect(
      woken < drive.count * 17 / 10, "\(woken) wake-ups of the broker for \(drive.count) fixes")

    // At once after the drive's last write: the watch rests, the revocation is seen when the
    // rest ends, and no fix follows it.
    let revoke = try CommandRun.waymark(["auth", "revoke", ourselves, "--store", rig.store])
    #expect(revoke.status == 0, "\(revoke.stderr)")
    try await client.wait {
      $0.contains { $0.contains(#""class":"AUTHORIZATION""#) && $0.contains("notDetermined") }
    }
    try await rig.send(epochs[100..<110])
    try await daemon.waitForLine { $0.hasPrefix("<7>fix \(Timestamp.format(epochs[109].time)) ") }
    let lines = client.received
    let cut = try #require(lines.lastIndex { $0.contains(#""class":"AUTHORIZATION""#) })
    #expect(!lines[cut...].contains { $0.hasPrefix(#"{"class":"TPV""#) })
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    // Every fix of the drive was a write of its own.
    let points = try Database(path: rig.store).read { try TrackRepository($0).count() }
    #expect(points >= drive.count, "\(points) track points")
  }

  /// Voluntary context switches of the daemon's broker thread (`waymark-broker`) so far: the
  /// times it blocked and was woken.
  static func brokerWakeUps(_ pid: pid_t) throws -> Int {
    let broker = ThreadSwitches.threads(of: pid).values.first { $0.name == "waymark-broker" }
    return try #require(broker, "no waymark-broker thread in process \(pid)").switches.voluntary
  }
}

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonLocationManagerTests {
  /// An application's `LocationManager` through the daemon: its status is the daemon's answer,
  /// its request goes to the daemon's agent (root's, here), its locations are the drive's, and a
  /// revocation reaches its authorization stream.
  @Test func locationManagerUsesTheDaemon() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "agent-timeout = 5\nsocket = \(socketPath)\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let agent = try DaemonProcess(
      executable: Products.executable("waymark"),
      arguments: ["agent", "--socket", socketPath, "--answer", "whenInUse"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    try await daemon.waitForLine { $0.contains("is an agent") }

    let service = try await DaemonLocationService(socketPath: socketPath)
    #expect(service.clientID == PeerIdentity.userName(getuid()) + ":" + realPath("/proc/self/exe"))
    let manager = service.makeManager()
    #expect(manager.authorizationStatus == .notDetermined)
    #expect(await manager.requestWhenInUseAuthorization() == .authorizedWhenInUse)
    // A probe asks the daemon's STATUS how many clients watch: the manager's WATCH has reached
    // the daemon once it counts one more.
    let probe = try Listener(path: socketPath, watch: nil)
    let watching = try await probe.watchers()
    let epochs = Commute.epochs(homeStay: 5, officeStay: 5).prefix(8)
    let collected = Locked<[Location]>([])
    let collector = Task {
      for await location in manager.locations { collected.withLock { $0.append(location) } }
    }
    defer { collector.cancel() }
    manager.startUpdatingLocation()
    try await probe.waitForWatchers(watching + 1)
    try await rig.send(epochs)
    try await eventually("\(epochs.count) locations; got \(collected.withLock { $0.count })") {
      collected.withLock { $0.count } >= epochs.count
    }
    let locations = collected.withLock { $0 }
    let sent = Commute.fixes(homeStay: 5, officeStay: 5)
    #expect(locations.map(\.timestamp) == sent.prefix(epochs.count).map { $0.time! })
    for (location, fix) in zip(locations, sent) {
      #expect(location.coordinate.distance(to: fix.coordinate!) < 0.2)
    }
    _ = agent
    // The example application (a package of its own) does the same through its `daemon` mode.
    let example = Products.packageRoot.appendingPathComponent(
      "Examples/LocationApp/.build/debug/location-app"
    ).path
    if FileManager.default.isExecutableFile(atPath: example) {
      let app = try DaemonProcess(
        executable: "/bin/sh", arguments: ["-c", "exec '\(example)' daemon '\(socketPath)' 1>&2"],
        environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
      try await daemon.waitForLine { $0.contains("location-app") && $0.contains("connected") }
      try await probe.waitForWatchers(watching + 2)
      let more = Commute.epochs(homeStay: 5, officeStay: 5).dropFirst(epochs.count).prefix(3)
      try await rig.send(more)
      let last = try await app.waitForLine { $0.hasPrefix(Timestamp.format(more.last!.time)) }
      #expect(last.split(separator: " ").count == 4, "\(last)")
      app.signal(SIGTERM)
    } else {
      Issue.record("Examples/LocationApp is not built (Scripts/test.sh builds it)")
    }
    let revoked = Locked(false)
    let updates = Task {
      for await state in manager.authorizationUpdates where state.status == .notDetermined {
        revoked.withLock { $0 = true }
        break
      }
    }
    defer { updates.cancel() }
    let revoke = try CommandRun.waymark(
      ["auth", "revoke", service.clientID, "--store", rig.store])
    #expect(revoke.status == 0)
    try await eventually("the revocation in the manager's authorization stream") {
      revoked.withLock { $0 }
    }
    #expect(manager.authorizationStatus == .notDetermined)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}

/// The socket directories made by this test process, removed when it exits.
private let socketDirectories = Locked<[String]>([])

extension TemporaryDirectory {
  /// A fresh directory for a socket that every user may reach (mode 0755), with a short path;
  /// it and what it holds are removed when the test process exits.
  static func socketDirectory() throws -> String {
    var template = Array("/tmp/wm-XXXXXX".utf8CString)
    guard let made = mkdtemp(&template) else { throw TestFailure(description: "mkdtemp") }
    let path = String(cString: made)
    chmod(path, 0o755)
    socketDirectories.withLock { paths in
      if paths.isEmpty {
        atexit {
          for path in socketDirectories.withLock({ $0 }) {
            try? FileManager.default.removeItem(atPath: path)
          }
        }
      }
      paths.append(path)
    }
    return path
  }
}
