import Foundation
import Testing
import WaymarkSimulation
import WaymarkTesting

@testable import WaymarkCLI
@testable import WaymarkDaemon

@Suite struct SystemdNotifierTests {
  @Test(arguments: [true, false])
  func sendsDatagramsToAPathOrAnAbstractSocket(abstract: Bool) async throws {
    let directory = try TemporaryDirectory()
    let socket = try NotifySocket(directory: abstract ? nil : directory.path)
    #expect(socket.address.hasPrefix(abstract ? "@" : "/"))
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
    #expect(notifier.isEnabled)
    notifier.ready(status: "waiting for gpsd")
    notifier.watchdog()
    try await socket.wait { $0 == "WATCHDOG=1" }
    #expect(socket.all.first == "READY=1\nSTATUS=waiting for gpsd")
  }

  /// A reader that never reads fills the socket's queue; sending then fails at once instead of
  /// blocking the daemon's main loop.
  @Test(.timeLimit(.minutes(1)))
  func aFullQueueDropsMessagesInsteadOfBlocking() throws {
    let socket = try NotifySocket(directory: nil)
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
    var sent = 0
    var dropped = 0
    for _ in 0..<5000 {
      if notifier.notify("WATCHDOG=1") { sent += 1 } else { dropped += 1 }
    }
    #expect(sent > 0)
    #expect(dropped > 0)
    #expect(socket.all.count == sent)
  }

  /// A status with a newline in it would be two assignments to systemd (here a forged
  /// `MAINPID=`): control characters are written `\xNN`, so the datagram holds one line; a
  /// plain status is sent as it is (the control).
  @Test func controlCharactersNeverReachTheNotifySocket() async throws {
    let socket = try NotifySocket(directory: nil)
    let notifier = SystemdNotifier(environment: ["NOTIFY_SOCKET": socket.address])
    notifier.status("no fix\nMAINPID=1\u{1B}[2J")
    notifier.ready(status: "waiting\rREADY=1")
    notifier.status("3D fix, 2 place(s) monitored")
    try await socket.wait { $0 == "STATUS=3D fix, 2 place(s) monitored" }
    #expect(socket.all.first == #"STATUS=no fix\x0AMAINPID=1\x1B[2J"#, "\(socket.all)")
    #expect(socket.all.dropFirst().first == #"READY=1\#nSTATUS=waiting\x0DREADY=1"#)
    #expect(!socket.assignments.contains { $0.hasPrefix("MAINPID=") })
  }

  @Test func withoutNotifySocketNothingIsSent() {
    let notifier = SystemdNotifier(environment: [:])
    #expect(!notifier.isEnabled)
    #expect(!notifier.notify("READY=1"))
    #expect(notifier.watchdogInterval == nil)
  }

  @Test func watchdogIntervalIsHalfOfWatchdogUsecAndOnlyForItsProcess() {
    let mine = SystemdNotifier(
      environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "4242"], processID: 4242)
    #expect(mine.watchdogInterval == .seconds(15))
    let other = SystemdNotifier(
      environment: ["WATCHDOG_USEC": "30000000", "WATCHDOG_PID": "1"], processID: 4242)
    #expect(other.watchdogInterval == nil)
    let noPID = SystemdNotifier(environment: ["WATCHDOG_USEC": "200000"])
    #expect(noPID.watchdogInterval == .milliseconds(100))
  }

  @Test func logLinesCarryPrioritiesAndStayOneLine() throws {
    var fds: [Int32] = [0, 0]
    try #require(pipe(&fds) == 0)
    let log = DaemonLog(descriptor: fds[1], level: .info)
    log.notice("arrived\nat Home")
    log.notice("a:/tmp/x\r\n<2>forged")  // "\r\n" is one Character: escaped all the same
    log.debug("52.5,13.4")
    log.error("broken")
    log.level = .debug
    log.debug("now visible")
    close(fds[1])
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 1024)
    while true {
      let count = read(fds[0], &buffer, buffer.count)
      if count <= 0 { break }
      data.append(contentsOf: buffer[0..<count])
    }
    close(fds[0])
    #expect(
      String(decoding: data, as: UTF8.self)
        == #"<5>arrived\x0Aat Home"# + "\n" + #"<5>a:/tmp/x\x0D\x0A<2>forged"# + "\n"
        + "<3>broken\n<7>now visible\n")
  }

  /// The real binary: READY=1 once configuration and store are open (no gpsd, no grant yet),
  /// a readable STATUS saying why it waits, WATCHDOG=1 at half of WATCHDOG_USEC from the main
  /// loop; a grant and SIGHUP move it on; SIGTERM sends STOPPING=1 and exits 0.
  @Test func theDaemonReportsReadinessStatusAndWatchdog() async throws {
    let directory = try TemporaryDirectory()
    let socket = try NotifySocket(directory: nil)
    let port = try GPSDHarness.freePort()  // nobody listens there
    let config = try directory.write(
      "waymark.conf", "gpsd = 127.0.0.1:\(port)\nauthorization-check = 3600\n")
    let daemon = try DaemonProcess(
      arguments: ["--config", config],
      environment: daemonEnvironment(
        state: directory.path,
        extra: ["NOTIFY_SOCKET": socket.address, "WATCHDOG_USEC": "200000"]))
    try await socket.wait { $0 == "READY=1" }
    let waiting = try await socket.wait { $0.hasPrefix("STATUS=") }
    #expect(waiting.hasPrefix("STATUS=not authorized: client 'waymarkd' has no grant"))
    #expect(
      waiting.contains(
        "waymark auth grant waymarkd always --store \(directory.path)/waymark.db"))
    // Several pings while it waits: the main loop runs even without authorization.
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(20)
    while socket.assignments.filter({ $0 == "WATCHDOG=1" }).count < 3 && clock.now < deadline {
      try await clock.sleep(for: .milliseconds(20))
    }
    #expect(socket.assignments.filter { $0 == "WATCHDOG=1" }.count >= 3)
    #expect(daemon.log.contains { $0.hasPrefix("<4>not authorized, waiting:") })

    try grantAlways(directory: directory.path)
    daemon.signal(SIGHUP)
    try await socket.wait { $0 == "RELOADING=1" }
    try await socket.wait { $0 == "STATUS=waiting for gpsd at 127.0.0.1:\(port)" }
    #expect(socket.assignments.filter { $0 == "READY=1" }.count == 2)

    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    #expect(socket.assignments.contains("STOPPING=1"))
    #expect(daemon.log.last == "<5>stopped; 0 visit(s) left open")
  }

  @Test func aReducedGrantIsNotEnough() async throws {
    let directory = try TemporaryDirectory()
    let socket = try NotifySocket(directory: directory.path)
    try grantAlways(directory: directory.path, reduced: true)
    let port = try GPSDHarness.freePort()
    let config = try directory.write("waymark.conf", "gpsd = 127.0.0.1:\(port)\n")
    let daemon = try DaemonProcess(
      arguments: ["--config", config],
      environment: daemonEnvironment(
        state: directory.path, extra: ["NOTIFY_SOCKET": socket.address]))
    let status = try await socket.wait { $0.hasPrefix("STATUS=") }
    #expect(status.contains("reduced accuracy"))
    daemon.signal(SIGINT)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// Without SIGHUP: a grant given while the daemon waits is noticed at the next periodic
  /// check, and a revoked one stops it following gpsd (no socket: nothing watches the store).
  @Test func grantsAreRecheckedPeriodically() async throws {
    try await grantThenRevoke(extraConfig: "authorization-check = 0.2\n")
  }

  /// With the location socket, a change of the grants reaches the main loop as an event (the
  /// broker's inotify watch on the store, then its grant refresh): with `authorization-check`
  /// at an hour, no timer can explain a prompt reaction, in either direction.
  @Test func grantChangesArriveAsEventsWithTheSocket() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    try await grantThenRevoke(
      extraConfig: "authorization-check = 3600\nsocket = \(socketPath)\n",
      socketReady: true)
  }

  /// Starts the daemon without a grant, grants `always` (it moves on to gpsd without SIGHUP),
  /// revokes it (it stops and says so again), each within the waits' bounds.
  private func grantThenRevoke(extraConfig: String, socketReady: Bool = false) async throws {
    let directory = try TemporaryDirectory()
    let socket = try NotifySocket(directory: nil)
    let port = try GPSDHarness.freePort()
    let config = try directory.write(
      "waymark.conf", "gpsd = 127.0.0.1:\(port)\n" + extraConfig)
    let daemon = try DaemonProcess(
      arguments: ["--config", config],
      environment: daemonEnvironment(
        state: directory.path, extra: ["NOTIFY_SOCKET": socket.address]))
    try await socket.wait { $0.hasPrefix("STATUS=not authorized") }
    if socketReady { try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") } }
    try grantAlways(directory: directory.path)
    try await socket.wait { $0 == "STATUS=waiting for gpsd at 127.0.0.1:\(port)" }
    let revoke = try CommandRun.waymark(
      ["auth", "revoke", "waymarkd", "--store", directory.path + "/waymark.db"])
    #expect(revoke.status == 0)
    try await daemon.waitForCount("<4>not authorized, waiting:", 2)
    #expect(socket.assignments.filter { $0.hasPrefix("STATUS=not authorized") }.count == 2)
    #expect(socket.assignments.filter { $0 == "READY=1" }.count == 1)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
