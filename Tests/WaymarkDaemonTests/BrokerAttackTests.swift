import Foundation
import NMEA
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// A hostile program for the attacks: Python's standard library speaking the socket's protocol
/// (`/usr/bin/python3`, so its client id is `<user>:/usr/bin/python3.x`, never an agent). Every
/// line it receives, and its own reports, go to standard error.
private let attacker = #"""
  import json, socket, sys, time

  mode, path = sys.argv[1], sys.argv[2]

  def out(text):
      print(text, file=sys.stderr, flush=True)

  def connect():
      s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
      s.connect(path)
      return s

  def send(s, obj):
      s.sendall((json.dumps(obj) + "\n").encode())

  def read(s, seconds, on_line=None):
      s.settimeout(0.05)
      pending = b""
      end = time.monotonic() + seconds
      while time.monotonic() < end:
          try:
              data = s.recv(65536)
          except socket.timeout:
              continue
          except OSError:
              return False
          if not data:
              return False
          pending += data
          while b"\n" in pending:
              line, pending = pending.split(b"\n", 1)
              text = line.decode(errors="replace")
              out(text)
              if on_line:
                  on_line(text)
      return True

  def answerer(s, grant):
      def on_line(text):
          message = json.loads(text)
          if message.get("class") == "ASK":
              send(s, {"class": "ANSWER", "id": message["id"], "grant": grant, "accuracy": "full"})
      return on_line

  if mode == "selfgrant":
      s = connect()
      send(s, {"class": "AGENT", "enable": True})
      send(s, {"class": "REQUEST", "level": "always"})
      send(s, {"class": "WATCH", "enable": True})
      read(s, float(sys.argv[3]), answerer(s, "always"))
  elif mode == "forge":
      s = connect()
      send(s, {"class": "REQUEST", "level": "always"})
      send(s, {"class": "WATCH", "enable": True})
      for guess in range(1, 65):
          send(s, {"class": "ANSWER", "id": guess, "grant": "always", "accuracy": "full"})
      read(s, float(sys.argv[3]))
  elif mode == "answerer":
      s = connect()
      send(s, {"class": "AGENT", "enable": True})
      read(s, float(sys.argv[3]), answerer(s, "always"))
  elif mode == "request":
      s = connect()
      send(s, {"class": "REQUEST", "level": sys.argv[3]})
      send(s, {"class": "WATCH", "enable": True})
      read(s, float(sys.argv[4]))
  elif mode == "status":
      s = connect()
      send(s, {"class": "STATUS"})
      read(s, 1.0)
  elif mode == "flood":
      s = connect()
      chunk = b"\n" * 65536
      sent = 0
      try:
          while True:
              s.sendall(chunk)
              sent += len(chunk)
      except OSError as error:
          out("flood ended after %d bytes: %s" % (sent, error))
  elif mode == "reflood":
      end = time.monotonic() + float(sys.argv[3])
      rounds = 0
      while time.monotonic() < end:
          try:
              s = connect()
          except OSError:
              time.sleep(0.01)
              continue
          rounds += 1
          try:
              while time.monotonic() < end:
                  s.sendall(b"\n" * 65536)
          except OSError:
              pass
          s.close()
      out("reflood ended after %d connections" % rounds)
  elif mode == "hold":
      held = []
      for _ in range(int(sys.argv[3])):
          s = connect()
          s.settimeout(2)
          try:
              if s.recv(4096).startswith(b'{"class":"VERSION"'):
                  held.append(s)
          except OSError:
              pass
      out("held %d" % len(held))
      time.sleep(float(sys.argv[4]))
  elif mode == "reduced":
      end = time.monotonic() + float(sys.argv[3])
      while time.monotonic() < end:
          s = connect()
          send(s, {"class": "WATCH", "enable": True, "accuracy": "reduced", "distance": 1})
          send(s, {"class": "POLL"})
          read(s, 0.2)
          s.close()
      out("reduced done")
  elif mode == "tcpstorm":
      # nmea-tcp: every descriptor the hard limit allows held open (each makes the daemon's
      # search for a peer's socket longer), then connections as fast as they go, the last 50
      # kept open (a closed one has no row to search for).
      import os, resource
      soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
      resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
      held = []
      try:
          while len(held) < hard - 100:
              held.append(os.open("/dev/null", os.O_RDONLY))
      except OSError:
          pass
      out("holding %d descriptors" % len(held))
      end = time.monotonic() + float(sys.argv[3])
      window, rounds = [], 0
      while time.monotonic() < end:
          try:
              window.append(socket.create_connection(("127.0.0.1", int(path)), timeout=1))
              rounds += 1
              if rounds == 20:
                  out("storm on")
          except OSError:
              time.sleep(0.001)
          while len(window) > 50:
              window.pop(0).close()
      out("tcpstorm ended after %d connections" % rounds)
  elif mode == "tcpinherit":
      # nmea-tcp: "fork" makes a socket, forks, and the parent runs /usr/bin/sleep holding it
      # while the child (this script) connects it and reads; "alone" connects and reads.
      import os
      s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
      if sys.argv[3] == "fork":
          s.set_inheritable(True)
          if os.fork() > 0:
              os.execv("/usr/bin/sleep", ["sleep", "60"])
          parent = os.getppid()
          for _ in range(500):
              if os.path.realpath("/proc/%d/exe" % parent) == os.path.realpath("/usr/bin/sleep"):
                  break
              time.sleep(0.01)
      s.connect(("127.0.0.1", int(path)))
      out("connected")
      out("tcpinherit " + ("read until the end" if read(s, float(sys.argv[4])) else "closed"))
  """#

/// Writes the attacker's script where every user can read it.
func attackerScript() throws -> String {
  let directory = try TemporaryDirectory.socketDirectory()
  let path = directory + "/attacker.py"
  try Data(attacker.utf8).write(to: URL(fileURLWithPath: path))
  chmod(path, 0o644)
  return path
}

/// `executable arguments…` run as system user `user` (setpriv, no supplementary groups), its
/// standard output and error collected as lines.
func run(as user: String, _ executable: String, _ arguments: [String]) throws
  -> DaemonProcess
{
  let ids = try systemUser(user)
  let quoted = ([executable] + arguments).map { "'\($0)'" }.joined(separator: " ")
  return try DaemonProcess(
    executable: "/bin/sh",
    arguments: [
      "-c",
      "exec /usr/bin/setpriv --reuid=\(ids.uid) --regid=\(ids.gid) --clear-groups -- "
        + "\(quoted) 1>&2",
    ],
    environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
}

/// The attacker's script in `mode` as `user`.
func attack(_ user: String, _ script: String, _ arguments: [String]) throws
  -> DaemonProcess
{
  try run(as: user, "/usr/bin/python3", ["-u", script] + arguments)
}

/// The TPV objects among `lines`, as fixes.
private func positions(_ lines: [String]) -> [Fix] {
  lines.compactMap { BrokerMessage(line: $0).fix }.filter { $0.coordinate != nil }
}

/// The client id of a program run with `/usr/bin/python3` by `user`.
func pythonClient(_ user: String) -> String {
  user + ":" + String(cString: realpath("/usr/bin/python3", nil))
}

/// Grants `always` to this test process (root), the in-process watchers.
func grantOurselves(store: String) throws {
  try grant("root:" + String(cString: realpath("/proc/self/exe", nil)), "always", store: store)
}

/// A drive of `minutes` of fix time at 1 Hz, eastwards at 15 m/s, as NMEA epochs.
func longDrive(minutes: Int) -> [Epoch] {
  var route = RouteSynthesizer(start: Commute.start, origin: Commute.home, seed: 5)
  route.noiseMeters = 1
  route.drive(
    to: Commute.home.offset(by: Double(minutes) * 60 * 15, bearingDegrees: 90),
    speedMetersPerSecond: 15)
  return route.fixes().filter { $0.time != nil }.map {
    Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0))
  }
}

/// An in-process client (root) that notes when each line arrived.
final class TimedListener: Sendable {
  let connection: BrokerConnection
  private let lines = Locked<[(ContinuousClock.Instant, String)]>([])

  init(path: String) throws {
    connection = try BrokerConnection(path: path)
    let messages = connection.messages()
    Task { [lines] in
      for await message in messages {
        let now = ContinuousClock.now
        lines.withLock { $0.append((now, message.line)) }
      }
    }
    try connection.send(#"{"class":"WATCH","enable":true}"#)
  }

  /// Whether a TPV with fix time `time` has arrived.
  func has(_ time: Date) -> Bool { fixes.contains { $0.fix.time == time } }

  /// How many fixes of `calm` and of `loaded` arrived, and the longest wait between two
  /// arrivals from `loadStart` on (a starved watcher shows a gap).
  func received(calm: [Epoch], loaded: [Epoch], loadStart: ContinuousClock.Instant)
    -> (calm: Int, loaded: Int, gap: Duration)
  {
    let received = fixes
    let calmTimes = Set(calm.map(\.time))
    let loadedTimes = Set(loaded.map(\.time))
    let during = [loadStart] + received.filter { $0.at >= loadStart }.map(\.at)
    return (
      received.filter { calmTimes.contains($0.fix.time!) }.count,
      received.filter { loadedTimes.contains($0.fix.time!) }.count,
      zip(during, during.dropFirst()).map { $0.duration(to: $1) }.max() ?? .zero
    )
  }

  /// Arrival instants and fixes of the TPVs received so far.
  var fixes: [(at: ContinuousClock.Instant, fix: Fix)] {
    lines.withLock { $0 }.compactMap { entry in
      BrokerMessage(line: entry.1).fix.map { (entry.0, $0) }
    }
  }

  func wait(timeout: Duration = .seconds(20), until predicate: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if predicate() { return }
      try await clock.sleep(for: .milliseconds(20))
    }
    throw TestFailure(description: "condition not met within \(timeout)")
  }
}

/// Attacks on the location broker, each by a program running as its own system user against
/// the real daemon and a real gpsd: a program granting itself, answering for another program,
/// flooding, taking every slot, reconnecting to beat reduced accuracy, keeping an "Allow once"
/// past a revocation, reading the last fix time without a grant.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "needs root: the tests create system users and run programs as them"),
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
    "the attacks are Python programs (/usr/bin/python3)"))
struct BrokerAttackTests {
  /// One connection sends AGENT, REQUEST always and answers its own ASK: no coordinate, no
  /// grant. A same-uid program that is not a configured agent cannot answer another program's
  /// request either, nor can a program that never got an ASK forge ANSWERs with guessed ids
  /// (1 to 64, its own question's among them). Positive control: root's `waymark agent` (a
  /// configured agent) grants.
  @Test func noProgramGrantsItself() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "agent-timeout = 2\nsocket = \(socketPath)\n")
    defer { rig.stop() }
    let script = try attackerScript()
    try grantOurselves(store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let watcher = try TimedListener(path: socketPath)
    let drive = Commute.epochs(homeStay: 5, officeStay: 5)

    // 1. The self-grant.
    let selfGrant = try attack("wmtest-a", script, ["selfgrant", socketPath, "600"])
    try await selfGrant.waitForLine { $0.hasPrefix(#"{"class":"AUTHORIZATION""#) }
    // 2. A same-uid program answering another program's request.
    let answerer = try attack("wmtest-e", script, ["answerer", socketPath, "600"])
    try await daemon.waitForLine { $0.contains("wmtest-e:") }
    let asking = try run(
      as: "wmtest-e", Products.executable("waymark"),
      ["watch", "--daemon", "--socket", socketPath, "--json", "--request", "always"])
    try await asking.waitForLine { $0.contains(#""status":"#) && !$0.contains("notDetermined") }
    // 3. Forged answers: each is refused (the control that they reached the broker).
    let forger = try attack("wmtest-h", script, ["forge", socketPath, "600"])
    try await forger.waitForCount("no open question", 64)
    try await rig.send(drive.prefix(60))
    try await watcher.wait { watcher.has(drive[59].time) }
    try await Task.sleep(for: .milliseconds(500))  // the attackers read what was sent
    let selfCoordinates = positions(selfGrant.log).count
    let answeredCoordinates = positions(asking.log).count
    let grants = try DatabaseGrantStore(database: Database(path: rig.store)).allGrants()
      .map(\.clientID)
    let waymark = "wmtest-e:" + String(cString: realpath(Products.executable("waymark"), nil))
    print(
      "self-grant: \(selfCoordinates) coordinates; other's answer: \(answeredCoordinates); "
        + "grants: \(grants)")
    #expect(selfCoordinates == 0, "the self-grant got \(selfCoordinates) coordinates")
    #expect(!grants.contains(pythonClient("wmtest-a")), "the self-grant was stored")
    #expect(answeredCoordinates == 0, "a non-agent's answer gave \(answeredCoordinates)")
    #expect(!grants.contains(waymark), "a non-agent's answer was stored")
    #expect(positions(forger.log).isEmpty, "forged answers gave \(positions(forger.log).count)")
    #expect(!grants.contains(pythonClient("wmtest-h")), "a forged answer was stored")
    #expect(!answerer.log.contains { $0.hasPrefix(#"{"class":"ASK""#) })
    #expect(!selfGrant.log.contains { $0.hasPrefix(#"{"class":"ASK""#) })
    selfGrant.signal(SIGTERM)
    forger.signal(SIGTERM)
    answerer.signal(SIGTERM)
    asking.signal(SIGTERM)

    // Positive control: root's waymark agent (configured by default) grants, and it persists.
    let agent = try DaemonProcess(
      executable: Products.executable("waymark"),
      arguments: ["agent", "--socket", socketPath, "--answer", "always"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    try await daemon.waitForLine { $0.contains("is an agent") }
    let granted = try attack("wmtest-a", script, ["request", socketPath, "always", "600"])
    try await granted.waitForLine { $0.contains(#""status":"authorizedAlways""#) }
    try await rig.send(drive[60..<70])
    try await granted.waitForLine { $0.contains(Timestamp.format(drive[69].time)) }
    #expect(positions(granted.log).count >= 9)
    let after = try DatabaseGrantStore(database: Database(path: rig.store)).allGrants()
    #expect(after.map(\.clientID).contains(pythonClient("wmtest-a")))
    granted.signal(SIGTERM)
    agent.signal(SIGTERM)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// A peer writing blank lines as fast as it can is cut off (and logged, throttled), and keeps
  /// reconnecting to flood again for the whole of the measured window (it counts its
  /// connections: the flood was on while the fixes went out); a granted watcher keeps at least
  /// 90 % of its calm fix rate, with no gap over 2 s.
  @Test func aBlankLineFloodIsCutOff() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grantOurselves(store: rig.store)
    let script = try attackerScript()
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let watcher = try TimedListener(path: socketPath)
    let drive = longDrive(minutes: 3)
    let calm = Array(drive[0..<70])
    let flooded = Array(drive[70..<140])
    try await Task.sleep(for: .milliseconds(300))  // the WATCH reaches the daemon

    try await rig.receiver.send(epochs: calm.map(\.lines), interval: .milliseconds(100))
    try await watcher.wait { watcher.fixes.contains { $0.fix.time == calm.last!.time } }
    let flooder = try attack("wmtest-f", script, ["reflood", socketPath, "9"])
    try await daemon.waitForLine { $0.contains("wmtest-f:") && $0.contains("too many lines") }
    let floodStart = ContinuousClock.now
    try await rig.receiver.send(epochs: flooded.map(\.lines), interval: .milliseconds(100))
    // Bounded; what arrived is judged below (a starved watcher fails there, with figures).
    try? await watcher.wait(timeout: .seconds(10)) { watcher.has(flooded.last!.time) }
    let (calmCount, floodCount, gap) = watcher.received(
      calm: calm, loaded: flooded, loadStart: floodStart)
    let cutOff = daemon.log.filter { $0.contains("wmtest-f:") && $0.contains("too many lines") }
    print(
      "flood: calm \(calmCount)/\(calm.count), flooded \(floodCount)/\(flooded.count), "
        + "largest gap \(gap), cut-off lines \(cutOff.count), flooder: "
        + (flooder.log.last ?? "still writing"))
    #expect(calmCount >= calm.count - 2)
    #expect(Double(floodCount) >= 0.9 * Double(calmCount))
    #expect(gap <= .seconds(2))
    // Cut off again and again, logged at most 20 times a minute for the uid (and a summary).
    #expect(cutOff.count >= 1 && cutOff.count <= 21, "\(cutOff.count) cut-off lines")
    let ended = try await flooder.waitForLine(timeout: .seconds(15)) {
      $0.hasPrefix("reflood ended after ")
    }
    let rounds = Int(ended.split(separator: " ")[3]) ?? 0
    // The flood was on during the window: it was cut off and came back many times (each
    // round ends in milliseconds when the cut-off works).
    #expect(rounds >= 20, "\(ended)")
    flooder.signal(SIGKILL)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// One uid opening connections up to the global limit gets only its own quota; another uid
  /// (and root) still connects.
  @Test func oneUserCannotTakeEverySlot() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "socket = \(socketPath)\nsocket-clients = 100\n")
    defer { rig.stop() }
    let script = try attackerScript()
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    let hog = try attack("wmtest-g", script, ["hold", socketPath, "100", "600"])
    let held = try await hog.waitForLine(timeout: .seconds(60)) { $0.hasPrefix("held ") }
    let other = try attack("wmtest-b", script, ["status", socketPath])
    _ = try await other.waitForExit()
    let root = try BrokerConnection(path: socketPath)
    let rootLines = root.messages()
    let rootFirst = try await BoundedWait.first("first message to root", of: rootLines)
    let rootVersion = rootFirst?.className == "VERSION"
    // The storm's log lines: at most 20 a minute for that uid (64 connects, 36 refusals).
    let uid = try systemUser("wmtest-g").uid
    let storm = daemon.log.filter { $0.contains("wmtest-g:") || $0.contains("of uid \(uid):") }
    print("slots: \(held); another uid: \(other.log.first ?? "refused"); \(storm.count) log lines")
    #expect(storm.count <= 20, "\(storm.count) log lines for one uid")
    #expect(storm.count >= 1)
    #expect(held == "held 64", "\(held)")
    #expect(other.log.first?.hasPrefix(#"{"class":"VERSION""#) == true, "\(other.logText)")
    #expect(other.log.contains { $0.hasPrefix(#"{"class":"STATUS""#) })
    #expect(rootVersion)
    hog.signal(SIGKILL)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// A reduced client reconnecting, polling and watching through 30 minutes of fix time never
  /// gets two positions less than the reduced interval (600 s) apart.
  @Test func reducedStaysReducedAcrossReconnectsAndPolls() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let script = try attackerScript()
    try grant(pythonClient("wmtest-c"), "whenInUse", store: rig.store, reduced: true)
    try grantOurselves(store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let watcher = try TimedListener(path: socketPath)
    let drive = longDrive(minutes: 30)
    let reduced = try attack("wmtest-c", script, ["reduced", socketPath, "600"])
    try await daemon.waitForLine { $0.contains("wmtest-c:") }
    try await rig.send(drive)
    try await watcher.wait { watcher.has(drive.last!.time) }
    try await Task.sleep(for: .seconds(1))  // a few more reconnects and polls
    reduced.signal(SIGTERM)
    let times = Set(positions(reduced.log).map { $0.time! }).sorted()
    let close = zip(times, times.dropFirst()).filter { $1.timeIntervalSince($0) < 600 }.count
    print("reduced: \(times.count) positions over \(drive.count) s, \(close) < 600 s apart")
    // 30 minutes of fix time hold at least three 10-minute intervals: a client that got one
    // position in all that time would pass "none closer than 600 s" without being served.
    #expect(times.count >= 3, "a reduced client gets a position per interval: \(times.count)")
    #expect(close == 0, "\(close) of \(times.count) positions less than 600 s apart")
    for fix in positions(reduced.log) { #expect(fix.horizontalError! >= 1000) }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// `waymark auth revoke` and `waymark auth reset` end an "Allow once" as they end a grant.
  @Test func onceEndsOnRevokeAndReset() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    // authorization-check = 1: the daemon's own grant, taken by the reset and given back, is
    // looked for again within a second.
    let rig = try await DaemonRig.start(
      places: [],
      extraConfig: "agent-timeout = 5\nauthorization-check = 1\nsocket = \(socketPath)\n")
    defer { rig.stop() }
    let script = try attackerScript()
    try grantOurselves(store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let watcher = try TimedListener(path: socketPath)
    let agent = try DaemonProcess(
      executable: Products.executable("waymark"),
      arguments: ["agent", "--socket", socketPath, "--answer", "once"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    defer { agent.signal(SIGTERM) }
    try await daemon.waitForLine { $0.contains("is an agent") }
    let drive = Commute.epochs(homeStay: 5, officeStay: 5)
    var index = 0
    for (user, change) in [
      ("wmtest-h", ["revoke", pythonClient("wmtest-h")]), ("wmtest-i", ["reset"]),
    ] {
      let client = try attack(user, script, ["request", socketPath, "whenInUse", "600"])
      try await client.waitForLine { $0.contains(#""status":"authorizedWhenInUse""#) }
      try await rig.send(drive[index..<index + 5])
      try await client.waitForLine { $0.contains(Timestamp.format(drive[index + 4].time)) }
      let run = try CommandRun.waymark(["auth"] + change + ["--store", rig.store])
      #expect(run.status == 0, "\(run.stderr)")
      // The AUTHORIZATION at connect was notDetermined; a second one ends the "once".
      let ended: Void? = try? await client.waitForCount(
        #""status":"notDetermined""#, 2, timeout: .seconds(3))
      if change[0] == "reset" {
        // The reset took the daemon's and the watcher's grants too: given back once the
        // daemon has stopped for it, and the stream resumed.
        try await daemon.waitForLine { $0.contains("not authorized, waiting") }
        try grantAlways(directory: rig.directory.path)
        try grantOurselves(store: rig.store)
        try await daemon.waitForLine { $0.contains("is authorized (always)") }
        try await rig.gpsd.waitForWatchers(1)
      }
      // Fixes until the granted watcher has some (the daemon's own source restarts after the
      // reset), then a little more.
      let later = Array(drive[index + 5..<index + 25])
      try await rig.receiver.send(epochs: later.map(\.lines), interval: .milliseconds(200))
      try await watcher.wait { later.contains { watcher.has($0.time) } }
      try await Task.sleep(for: .milliseconds(500))  // the client reads what was sent
      let laterTimes = Set(later.map(\.time))
      let delivered = watcher.fixes.filter { laterTimes.contains($0.fix.time!) }.count
      let afterwards = positions(client.log).filter { laterTimes.contains($0.time!) }.count
      #expect(delivered > 0, "the positive control: the granted watcher got fixes")
      print("once after \(change[0]): ended \(ended != nil), \(afterwards) positions afterwards")
      #expect(ended != nil, "\(change[0]) did not end the Allow once")
      #expect(afterwards == 0)
      client.signal(SIGTERM)
      index += 25
    }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// `STATUS` tells an ungranted peer no fix time; a granted one gets it.
  @Test func statusGivesNoFixTimeWithoutAGrant() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let script = try attackerScript()
    try grant(pythonClient("wmtest-a"), "whenInUse", store: rig.store)
    try grantOurselves(store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let watcher = try TimedListener(path: socketPath)
    let drive = Commute.epochs(homeStay: 5, officeStay: 5)
    try await rig.send(drive.prefix(3))
    try await watcher.wait { !watcher.fixes.isEmpty }
    let granted = try attack("wmtest-a", script, ["status", socketPath])
    let ungranted = try attack("wmtest-b", script, ["status", socketPath])
    _ = try await granted.waitForExit()
    _ = try await ungranted.waitForExit()
    let grantedStatus = granted.log.first { $0.hasPrefix(#"{"class":"STATUS""#) } ?? ""
    let ungrantedStatus = ungranted.log.first { $0.hasPrefix(#"{"class":"STATUS""#) } ?? ""
    print("status: granted \(grantedStatus); ungranted \(ungrantedStatus)")
    #expect(grantedStatus.contains(#""lastFix":"#))
    #expect(!ungrantedStatus.isEmpty)
    #expect(!ungrantedStatus.contains("lastFix"))
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
