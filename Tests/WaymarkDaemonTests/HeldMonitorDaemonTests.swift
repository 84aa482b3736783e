import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// A client of held monitors in Python's standard library (`/usr/bin/python3`, so its client id
/// is `<user>:/usr/bin/python3.x`): registers, reads, or floods. Every line it receives goes to
/// standard error.
private let heldClient = #"""
  import json, socket, sys, time

  mode, path, name = sys.argv[1], sys.argv[2], sys.argv[3]

  def out(text):
      print(text, file=sys.stderr, flush=True)

  s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
  s.connect(path)
  pending = b""

  def send(obj):
      s.sendall((json.dumps(obj) + "\n").encode())

  def until(done, seconds=15):
      global pending
      s.settimeout(0.05)
      end = time.monotonic() + seconds
      while time.monotonic() < end:
          try:
              data = s.recv(65536)
          except socket.timeout:
              continue
          if not data:
              out("closed")
              return
          pending += data
          while b"\n" in pending:
              line, pending = pending.split(b"\n", 1)
              text = line.decode(errors="replace")
              out(text)
              if done(json.loads(text)):
                  return
      out("timeout")

  def circle(ident, lat, lon):
      return {"id": ident, "lat": lat, "lon": lon, "radius": 50, "assume": "unsatisfied"}

  if mode == "register":
      conditions = [circle("home", float(sys.argv[4]), float(sys.argv[5])),
                    circle("office", float(sys.argv[6]), float(sys.argv[7]))]
      send({"class": "MONITOR", "name": name, "op": "add", "conditions": conditions})
      until(lambda m: m.get("class") in ("MONITOR", "ERROR"))
  elif mode == "read":
      send({"class": "MONITOR", "name": name, "op": "events", "after": 0})
      until(lambda m: m.get("class") == "ERROR"
            or (m.get("class") == "MONITOR" and m.get("op") == "events" and not m.get("more")))
  elif mode == "flood":
      answers = [0]
      def counted(m):
          if m.get("class") in ("MONITOR", "ERROR"):
              answers[0] += 1
          return answers[0] >= expected[0]
      expected = [0]
      send({"class": "MONITOR", "name": "bad\u001b[31mname\r\n", "op": "add",
            "conditions": [circle("a", 1, 1)]})
      send({"class": "MONITOR", "name": name, "op": "add",
            "conditions": [circle("c\u0007", 1, 1)]})
      send({"class": "MONITOR", "name": name, "op": "add",
            "conditions": [{"id": "c%d" % i, "lat": 1, "lon": 1, "radius": 1}
                           for i in range(65)]})
      for i in range(5):
          send({"class": "MONITOR", "name": "m%d" % i, "op": "add",
                "conditions": [circle("a", 1, 1)]})
      for i in range(2):
          send({"class": "MONITOR", "name": "m0", "op": "add",
                "conditions": [circle("x%d" % i, 1, 1)]})
      for i in range(100):
          send({"class": "MONITOR", "name": "m0", "op": "add",
                "conditions": [circle("x1", 1, 1)]})
      expected[0] = 3 + 5 + 2 + 100
      until(counted)
      send({"class": "STATUS"})
      until(lambda m: m.get("class") == "STATUS")
  """#

/// Writes the client's script where every user can read it.
private func heldClientScript() throws -> String {
  let directory = try TemporaryDirectory.socketDirectory()
  let path = directory + "/held.py"
  try Data(heldClient.utf8).write(to: URL(fileURLWithPath: path))
  chmod(path, 0o644)
  return path
}

/// The lines of one run of the client (as `user`), after it exits.
private func runHeldClient(_ user: String, _ script: String, _ arguments: [String]) async throws
  -> [String]
{
  let process = try attack(user, script, arguments)
  _ = try await process.waitForExit(timeout: .seconds(60))
  return process.log
}

/// The events of a monitor's `events`, as they arrive.
private final class Collected: Sendable {
  private let events = Locked<[Monitor.Event]>([])
  private let failure = Locked<(any Error)?>(nil)
  let task: Task<Void, Never>

  init(_ monitor: Monitor) async {
    let stream = await monitor.events
    let events = events
    let failure = failure
    task = Task {
      do {
        for try await event in stream { events.withLock { $0.append(event) } }
      } catch {
        failure.withLock { $0 = error }
      }
    }
  }

  var all: [Monitor.Event] { events.withLock { $0 } }
  var error: (any Error)? { failure.withLock { $0 } }
}

/// Rows of the held monitors' queues in `store` (a second connection, as the CLI has).
private func queuedEvents(_ store: String) throws -> Int {
  let database = try Database(path: store, createIfMissing: false)
  return try database.read {
    try $0.queryFirst("SELECT count(*) FROM held_monitor_event") { $0.int(0) } ?? 0
  }
}

/// How many conditions the held monitors of `store` have, all together.
private func heldConditions(_ store: String) throws -> Int {
  let database = try Database(path: store, createIfMissing: false)
  return try database.read { try HeldMonitorRepository($0).all() }.reduce(0) { sum, row in
    let object = try? JSONSerialization.jsonObject(with: Data(row.state.utf8)) as? [String: Any]
    return sum + ((object?["entries"] as? [Any])?.count ?? 0)
  }
}

/// The commute's epochs `offset` seconds later.
private func commute(laterBy offset: TimeInterval) -> [Epoch] {
  Commute.fixes(homeStay: 20, officeStay: 20).map { fix in
    var fix = fix
    fix.time = fix.time!.addingTimeInterval(offset)
    return Epoch(time: fix.time!, lines: NMEAWriter.sentences(for: fix))
  }
}

/// The events an in-process monitor finds in the commute `offset` seconds later: the
/// reference for the daemon's (same engine, same fixes).
private func referenceEvents(laterBy offset: TimeInterval, directory: URL) async throws
  -> [Monitor.Event]
{
  let locations = Commute.fixes(homeStay: 20, officeStay: 20).compactMap { fix -> Location? in
    var fix = fix
    fix.time = fix.time!.addingTimeInterval(offset)
    return Location(fix)
  }
  let monitor = try await Monitor(
    named: "reference-\(Int(offset))",
    locations: AsyncStream { continuation in
      for location in locations { continuation.yield(location) }
      continuation.finish()
    }, directory: directory)
  await addCircles(monitor)
  var events: [Monitor.Event] = []
  for try await event in await monitor.events { events.append(event) }
  try await monitor.close()
  return events
}

/// Home and Office, 50 m, assumed unsatisfied.
private func addCircles(_ monitor: Monitor) async {
  await monitor.add(
    Monitor.CircularGeographicCondition(center: Commute.home, radius: 50), identifier: "home",
    assuming: .unsatisfied)
  await monitor.add(
    Monitor.CircularGeographicCondition(center: Commute.office, radius: 50),
    identifier: "office", assuming: .unsatisfied)
}

/// `events` match `reference`: the same conditions and states in the same order, at the same
/// fix times (to 1 s: the daemon's fixes went through NMEA and gpsd).
private func expectMatch(_ events: [Monitor.Event], _ reference: [Monitor.Event]) {
  #expect(events.map(\.identifier) == reference.map(\.identifier))
  #expect(events.map(\.state) == reference.map(\.state))
  for (event, expected) in zip(events, reference) {
    #expect(abs(event.date.timeIntervalSince(expected.date)) <= 1, "\(event) vs \(expected)")
  }
}

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "needs root: grants root's programs, runs another user's app"))
struct HeldMonitorDaemonTests {
  /// The app registers two circles and exits; the device enters and leaves both; the app
  /// starts again and receives exactly those four events in order, each once, with their fix
  /// times. Then the same with waymarkd killed (SIGKILL) and restarted between the drive and
  /// the reconnect: the next four, and none of the first again.
  @Test func missedEventsArriveInOrderEachOnceAcrossADaemonCrash() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let ourselves = "root:" + String(cString: realpath("/proc/self/exe", nil))
    try grant(ourselves, "always", store: rig.store)
    var daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let files = try TemporaryDirectory()
    let reference = try await referenceEvents(laterBy: 0, directory: files.url)
    #expect(reference.map(\.state) == [.satisfied, .unsatisfied, .satisfied, .unsatisfied])

    // First run: register and exit.
    do {
      let monitor = try await Monitor(
        named: "trips", heldByDaemonAt: socketPath, directory: files.url)
      await addCircles(monitor)
      try await monitor.close()
    }
    try await eventually("two conditions held; log:\n\(daemon.logText)") {
      (try? heldConditions(rig.store)) == 2
    }

    // The drive, while the app is not running.
    try await rig.send(commute(laterBy: 0))
    try await eventually("four events queued") { (try? queuedEvents(rig.store)) == 4 }

    // Second run: the four, in order, then the queue is acknowledged.
    do {
      let monitor = try await Monitor(
        named: "trips", heldByDaemonAt: socketPath, directory: files.url)
      let collected = await Collected(monitor)
      try await eventually("four events: \(collected.all) \(String(describing: collected.error))") {
        collected.all.count >= 4
      }
      try await eventually("the queue acknowledged") { (try? queuedEvents(rig.store)) == 0 }
      #expect(await monitor.record(for: "office")?.lastEvent.state == .unsatisfied)
      #expect(await monitor.lostEventCount == 0)
      try await monitor.close()
      await collected.task.value
      expectMatch(collected.all, reference)
      #expect(collected.all.count == 4)
    }

    // The second drive an hour later; waymarkd killed before the app comes back.
    let later = try await referenceEvents(laterBy: 3600, directory: files.url)
    try await rig.send(commute(laterBy: 3600))
    try await eventually("four more events queued") { (try? queuedEvents(rig.store)) == 4 }
    try await daemon.crash()
    daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }

    // Third run: the second drive's four only (the first four were delivered once).
    let monitor = try await Monitor(
      named: "trips", heldByDaemonAt: socketPath, directory: files.url)
    let collected = await Collected(monitor)
    try await eventually("four events after the crash: \(collected.all)") {
      collected.all.count >= 4
    }
    try await eventually("the queue acknowledged") { (try? queuedEvents(rig.store)) == 0 }
    try await monitor.close()
    await collected.task.value
    #expect(collected.all.count == 4)
    expectMatch(collected.all, later)
    #expect(collected.all.allSatisfy { $0.date > Commute.start.addingTimeInterval(3600) })
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// Another user's program, same executable, same monitor name, sees none of the owner's
  /// events (the owner, the positive control, sees four); a program holding `whenInUse` is
  /// refused with an ERROR; a hostile owner's flood (control characters, 65 conditions, more
  /// monitors than allowed, 100 changes at once, which cost no write and so come faster than
  /// the budget whatever the disk) is refused line by line and the daemon goes on answering.
  @Test(.enabled(if: isRoot, "runs the apps as other system users (setpriv)"))
  func anotherUsersAppSeesNothingAndFloodsAreBounded() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let (owner, other, inUse) = ("wmheldowner", "wmheldother", "wmheldinuse")
    try grant(pythonClient(owner), "always", store: rig.store)
    try grant(pythonClient(other), "always", store: rig.store)
    try grant(pythonClient(inUse), "whenInUse", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let script = try heldClientScript()
    let places = [Commute.home, Commute.office].flatMap {
      [String($0.latitude), String($0.longitude)]
    }

    let registered = try await runHeldClient(
      owner, script, ["register", socketPath, "trips"] + places)
    #expect(registered.contains { $0.contains(#""op":"add","conditions":2"#) }, "\(registered)")
    let refused = try await runHeldClient(
      inUse, script, ["register", socketPath, "trips"] + places)
    #expect(
      refused.contains { $0.hasPrefix(#"{"class":"ERROR","message":"MONITOR: not authorized"#) },
      "\(refused)")
    #expect(!refused.contains { $0.contains(#""class":"MONITOR""#) })
    #expect(try heldConditions(rig.store) == 2)

    try await rig.send(commute(laterBy: 0))
    try await eventually("four events queued") { (try? queuedEvents(rig.store)) == 4 }

    let others = try await runHeldClient(other, script, ["read", socketPath, "trips"])
    #expect(others.contains { $0.contains(#""op":"events","last":0,"lost":0"#) }, "\(others)")
    #expect(!others.contains { $0.contains("MONITOR_EVENT") })
    let inUseReads = try await runHeldClient(inUse, script, ["read", socketPath, "trips"])
    #expect(inUseReads.contains { $0.contains("MONITOR: not authorized") })
    #expect(!inUseReads.contains { $0.contains("MONITOR_EVENT") })
    let owners = try await runHeldClient(owner, script, ["read", socketPath, "trips"])
    let events = owners.filter { $0.contains(#""class":"MONITOR_EVENT""#) }
    #expect(events.count == 4, "\(owners)")
    #expect(events.first?.contains(#""sequence":1,"id":"home","state":"satisfied""#) == true)
    #expect(events.last?.contains(#""sequence":4,"id":"office","state":"unsatisfied""#) == true)

    // The flood, from the owner.
    let flood = try await runHeldClient(owner, script, ["flood", socketPath, "trips"])
    let errors = flood.filter { $0.hasPrefix(#"{"class":"ERROR""#) }
    #expect(errors.contains { $0.contains("MONITOR: the name contains a control character") })
    #expect(errors.contains { $0.contains("MONITOR: a condition's id contains a control") })
    #expect(errors.contains { $0.contains("MONITOR: more than 64 conditions") })
    #expect(errors.contains { $0.contains("too many monitors: 4 for this program") })
    #expect(errors.contains { $0.contains("MONITOR: too many changes") })
    // Positive controls: the first monitors and changes within the budget were taken, and
    // the daemon still answers.
    #expect(flood.contains { $0.contains(#""name":"m0","op":"add","conditions":1"#) })
    #expect(flood.contains { $0.contains(#""name":"m0","op":"add","conditions":2"#) })
    #expect(flood.contains { $0.hasPrefix(#"{"class":"STATUS""#) }, "\(flood)")
    #expect(!flood.contains("closed") && !flood.contains("timeout"))
    let database = try Database(path: rig.store, createIfMissing: false)
    let held = try database.read { try HeldMonitorRepository($0).all() }
    #expect(held.count == 4)
    #expect(held.allSatisfy { !$0.name.contains("\u{1B}") })
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
