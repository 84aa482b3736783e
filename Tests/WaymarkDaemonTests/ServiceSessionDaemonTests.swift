import Foundation
import GPSD
import NMEA
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

/// `ServiceSession` through a real waymarkd following a real gpsd (protocol 1.3's `SESSION`):
/// each diagnosis raised by its real cause, beside the session that has what it asks for; and
/// a client that never sends `SESSION` gets the lines it got before 1.3.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct ServiceSessionDaemonTests {
  /// The values of a sequence, as they arrive.
  final class Collected<Element: Sendable>: Sendable {
    private let values = Locked<[Element]>([])
    let task: Task<Void, Never>

    init<S: AsyncSequence & Sendable>(_ sequence: S) where S.Element == Element {
      let values = values
      task = Task {
        do {
          for try await value in sequence { values.withLock { $0.append(value) } }
        } catch {}
      }
    }

    var all: [Element] { values.withLock { $0 } }
    var count: Int { all.count }
    var last: Element? { all.last }
    func since(_ index: Int) -> ArraySlice<Element> { all.dropFirst(index) }
  }

  private typealias Diagnostic = ServiceSession.Diagnostic

  /// An hour after the commute, standing at Home, for as long as a test needs fixes.
  private static func standing(_ rig: DaemonRig) -> Task<Void, any Error> {
    var standing = RouteSynthesizer(
      start: Commute.start.addingTimeInterval(3600), origin: Commute.home, seed: 9)
    standing.stop(seconds: 3000)
    let stream = standing.fixes().map { fix in
      Epoch(time: fix.time!, lines: NMEAWriter.sentences(for: fix))
    }
    return Task { try await rig.send(stream) }
  }

  /// The `waymark` binary at a path the configuration's `agents` list can name: that list is
  /// split on whitespace, so a build under a directory with a space in its path (a checkout in
  /// "x y/") gets a copy beside the socket, whose path has none.
  private static func agentExecutable(in socketPath: String) throws -> String {
    let built = String(cString: realpath(Products.executable("waymark"), nil))
    guard built.contains(where: \.isWhitespace) else { return built }
    let copy = (socketPath as NSString).deletingLastPathComponent + "/waymark"
    try? FileManager.default.removeItem(atPath: copy)
    try FileManager.default.copyItem(atPath: built, toPath: copy)
    return copy
  }

  /// Updates that keep coming while the device stands still (no pause, any accuracy).
  private static let everyLocation = LocationUpdate.LiveConfiguration(
    name: "every location", pausesWhileStationary: false)

  private static func launch(_ rig: DaemonRig) async throws -> DaemonProcess {
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    return daemon
  }

  /// A when-in-use grant: a `.whenInUse` session has what it asks for (the control); an
  /// `.always` one asks the agent, which refuses the upgrade: `insufficientlyInUse` and
  /// `alwaysAuthorizationDenied`, cleared when `always` is granted. The purpose reaches the
  /// agent's question escaped and cut at 200 scalars.
  @Test func alwaysOnAWhenInUseGrantIsInsufficientUntilGranted() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let waymark = try Self.agentExecutable(in: socketPath)
    let rig = try await DaemonRig.start(
      places: [], extraConfig: "socket = \(socketPath)\nagents = *:\(waymark)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store)
    let daemon = try await Self.launch(rig)
    // Root's agent, refusing every question from a script.
    let agent = try DaemonProcess(
      executable: "/bin/sh",
      arguments: ["-c", "exec '\(waymark)' agent --socket '\(socketPath)' --answer never 1>&2"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    defer { agent.signal(SIGTERM) }
    try await daemon.waitForLine { $0.contains("is an agent") }

    let inUse = ServiceSession(authorization: .whenInUse, source: .daemon(socketPath: socketPath))
    let inUseDiagnostics = Collected(inUse.diagnostics)
    try await eventually("a clear diagnosis: \(inUseDiagnostics.all)") {
      inUseDiagnostics.last == Diagnostic()
    }
    inUse.invalidate()

    let purpose = "Navigation\u{1B}[2J" + String(repeating: "x", count: 500)
    let always = ServiceSession(
      authorization: .always, fullAccuracyPurposeKey: purpose,
      source: .daemon(socketPath: socketPath))
    defer { always.invalidate() }
    let diagnostics = Collected(always.diagnostics)
    try await eventually("refused upgrade: \(diagnostics.all)") {
      diagnostics.last?.alwaysAuthorizationDenied == true
    }
    let refused = try #require(diagnostics.last)
    #expect(refused.insufficientlyInUse && !refused.authorizationRequestInProgress)
    #expect(!refused.authorizationDenied && !refused.fullAccuracyDenied)
    // The question the agent got: the purpose JSON-escaped, bounded.
    let ask = try await agent.waitForLine { $0.contains(#""class":"ASK""#) }
    #expect(ask.contains(#""purpose":"Navigation\u001b[2J"#))
    #expect(ask.contains(String(repeating: "x", count: 180) + "…"))
    #expect(!ask.contains(String(repeating: "x", count: 200)))

    try grant(ourselves, "always", store: rig.store)
    try await eventually("cleared by the always grant: \(diagnostics.all)") {
      diagnostics.last == Diagnostic()
    }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// A reduced grant: a session with a full-accuracy purpose gets `fullAccuracyDenied` and the
  /// updates are reduced (snapped, `accuracyLimited`); a full grant clears both (the control).
  @Test func fullAccuracyRefusedGivesReducedLocations() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store, reduced: true)
    let daemon = try await Self.launch(rig)
    let session = ServiceSession(
      authorization: .whenInUse, fullAccuracyPurposeKey: "Turn-by-turn directions",
      source: .daemon(socketPath: socketPath))
    defer { session.invalidate() }
    let diagnostics = Collected(session.diagnostics)
    let updates = Collected(
      LocationUpdate.liveUpdates(Self.everyLocation, source: .daemon(socketPath: socketPath)))
    defer { updates.task.cancel() }
    try await waitForDaemonWatchers(1, socketPath: socketPath)
    let sender = Self.standing(rig)
    defer { sender.cancel() }

    try await eventually("fullAccuracyDenied: \(diagnostics.all)") {
      diagnostics.last?.fullAccuracyDenied == true
    }
    try await eventually("a reduced location: \(updates.count) updates") {
      updates.all.contains { $0.location != nil }
    }
    let reduced = updates.all.filter { $0.location != nil }
    #expect(reduced.allSatisfy { $0.accuracyLimited })
    #expect(reduced.allSatisfy { ($0.location?.horizontalAccuracy ?? 0) >= 1000 })

    let mark = updates.count
    try grant(ourselves, "whenInUse", store: rig.store)
    try await eventually("full accuracy: \(diagnostics.all)") {
      diagnostics.last == Diagnostic()
    }
    try await eventually("full locations: \(updates.count - mark)") {
      updates.since(mark).filter {
        $0.location != nil && ($0.location?.horizontalAccuracy ?? 0) < 1000
      }.count >= 5
    }
    #expect(updates.since(mark).filter { $0.location != nil }.last?.accuracyLimited == false)
    sender.cancel()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// No grant and no agent: the session's question stays open (`authorizationRequestInProgress`)
  /// and no location comes; a grant recorded meanwhile clears it and locations flow; the grant
  /// changed to never raises `authorizationDenied` and stops them.
  @Test func grantedWhileWaitingThenRevoked() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let daemon = try await Self.launch(rig)
    let session = ServiceSession(
      authorization: .whenInUse, source: .daemon(socketPath: socketPath))
    defer { session.invalidate() }
    let diagnostics = Collected(session.diagnostics)
    let updates = Collected(
      LocationUpdate.liveUpdates(Self.everyLocation, source: .daemon(socketPath: socketPath)))
    defer { updates.task.cancel() }
    // (No watcher yet: the manager watches once it is authorized.)
    let sender = Self.standing(rig)
    defer { sender.cancel() }

    try await eventually("asking: \(diagnostics.all)") {
      diagnostics.last?.authorizationRequestInProgress == true
    }
    // Fixes reach the daemon meanwhile (two, after the question opened); none reaches this
    // program. (It does not watch until it is authorized, so this holds by the client's own
    // rule; the daemon's side is the revocation below.)
    try await waitForDaemonFix(socketPath, after: try await waitForDaemonFix(socketPath))
    #expect(updates.all.allSatisfy { $0.location == nil })

    try grant(ourselves, "whenInUse", store: rig.store)
    try await eventually("cleared: \(diagnostics.all)") { diagnostics.last == Diagnostic() }
    try await eventually("locations: \(updates.count)") {
      updates.all.filter { $0.location != nil }.count >= 5
    }

    let mark = updates.count
    try grant(ourselves, "never", store: rig.store)
    try await eventually("denied: \(diagnostics.all)") {
      diagnostics.last?.authorizationDenied == true
    }
    try await eventually("updates denied: \(updates.since(mark))") {
      updates.since(mark).contains { $0.authorizationDenied }
    }
    // The daemon's side: fixes keep reaching it after the denial (two more, by its STATUS),
    // and none of them reaches this program's updates.
    let deniedAt = updates.count
    try await waitForDaemonFix(socketPath, after: try await waitForDaemonFix(socketPath))
    #expect(updates.since(mark).drop { !$0.authorizationDenied }.allSatisfy { $0.location == nil })
    #expect(updates.since(deniedAt).allSatisfy { $0.location == nil }, "\(updates.since(deniedAt))")
    sender.cancel()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// `requiresExplicitSessions` off (the default): locations without a session (the control).
  /// On: `serviceSessionRequired` and no location until a session is held.
  @Test func serviceSessionRequiredOnlyWhereRequired() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store)
    let daemon = try await Self.launch(rig)
    defer { ServiceSession.requiresExplicitSessions = false }
    let sender = Self.standing(rig)
    defer { sender.cancel() }

    let free = Collected(
      LocationUpdate.liveUpdates(Self.everyLocation, source: .daemon(socketPath: socketPath)))
    try await eventually("locations without a session: \(free.count)") {
      free.all.filter { $0.location != nil }.count >= 5
    }
    #expect(free.all.allSatisfy { !$0.serviceSessionRequired })
    free.task.cancel()

    ServiceSession.requiresExplicitSessions = true
    let held = Collected(
      LocationUpdate.liveUpdates(Self.everyLocation, source: .daemon(socketPath: socketPath)))
    defer { held.task.cancel() }
    try await eventually("serviceSessionRequired: \(held.all)") {
      held.all.contains { $0.serviceSessionRequired }
    }
    // Fixes keep coming to the daemon; none reaches this program without a session.
    let required = held.count
    try await waitForDaemonFix(socketPath, after: try await waitForDaemonFix(socketPath))
    #expect(held.all.allSatisfy { $0.location == nil })

    let session = ServiceSession(
      authorization: .whenInUse, source: .daemon(socketPath: socketPath))
    defer { session.invalidate() }
    try await eventually("locations with a session: \(held.count)") {
      held.since(required).filter { $0.location != nil }.count >= 5
    }
    #expect(
      held.since(required).filter { $0.location != nil }.allSatisfy {
        !$0.serviceSessionRequired
      })
    sender.cancel()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// Two raw connections: one speaks 1.2 (never sends SESSION), the other holds a session. On
  /// a change of grant the 1.2 client gets exactly the lines it got before 1.3 (one
  /// AUTHORIZATION), the session holder AUTHORIZATION and SESSION.
  @Test func aClientThatNeverSendsSessionGetsTheSameLines() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store)
    let daemon = try await Self.launch(rig)

    let old = try BrokerConnection(path: socketPath)
    defer { old.close() }
    let oldLines = Collected(old.messages().map { $0.line })
    let new = try BrokerConnection(path: socketPath)
    defer { new.close() }
    let newLines = Collected(new.messages().map { $0.line })
    try old.send(#"{"class":"WATCH"}"#)
    try new.send(#"{"class":"SESSION","authorization":"whenInUse","full_accuracy":false}"#)
    try new.send(#"{"class":"WATCH"}"#)
    try await eventually("the answers: \(oldLines.all) \(newLines.all)") {
      oldLines.count == 3 && newLines.all.contains { $0.hasPrefix(#"{"class":"WATCH""#) }
    }
    try grant(ourselves, "whenInUse", store: rig.store, reduced: true)
    try await eventually("the session's answer to the change: \(newLines.all)") {
      newLines.all.last?.contains(#""accuracy":"reduced""#) == true
        && newLines.all.last?.hasPrefix(#"{"class":"SESSION""#) == true
    }
    try await eventually("the 1.2 client's answer: \(oldLines.all)") { oldLines.count == 4 }

    let client = #""client":"\#(ourselves)""#
    let lines = oldLines.all
    #expect(lines[0].hasPrefix(#"{"class":"VERSION","release":""#))
    #expect(lines[0].hasSuffix(#""proto_major":1,"proto_minor":3}"#))
    #expect(
      Array(lines.dropFirst()) == [
        #"{"class":"AUTHORIZATION",\#(client),"status":"authorizedWhenInUse","accuracy":"full"}"#,
        #"{"class":"WATCH","enable":true,"accuracy":"full","events":false}"#,
        #"{"class":"AUTHORIZATION",\#(client),"status":"authorizedWhenInUse","accuracy":"reduced"}"#,
      ])
    #expect(
      newLines.all.filter { $0.hasPrefix(#"{"class":"SESSION""#) } == [
        #"{"class":"SESSION","authorization":"whenInUse","full_accuracy":false,"#
          + #""status":"authorizedWhenInUse","accuracy":"full","services":true,"asking":false}"#,
        #"{"class":"SESSION","authorization":"whenInUse","full_accuracy":false,"#
          + #""status":"authorizedWhenInUse","accuracy":"reduced","services":true,"asking":false}"#,
      ])
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}

/// Waits (at most 20 s) until the daemon's `STATUS` names a latest fix later than `after`:
/// fixes reach it. Returns that fix's time.
@discardableResult
private func waitForDaemonFix(_ socketPath: String, after: Date? = nil) async throws -> Date {
  let probe = try await DaemonLocationService(socketPath: socketPath)
  defer { probe.close() }
  let clock = ContinuousClock()
  let deadline = clock.now + .seconds(20)
  while true {
    if let last = await probe.status()?.lastFix, after.map({ last > $0 }) ?? true { return last }
    guard clock.now < deadline else { throw TestFailure(description: "no new fix in the daemon") }
    try await clock.sleep(for: .milliseconds(50))
  }
}
