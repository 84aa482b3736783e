import Foundation
import GPSD
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// Against the real Debian gpsd, on pseudo-terminals, on free ports. Serialized: each test
/// starts its own gpsd, and the machine has two cores.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct GPSDLiveTests {
  @Test func everyFixOfASyntheticLogArrivesAsOurOwnReplayDecodesIt() async throws {
    // A 5 Hz drive with noise and a fix loss, written by our NMEA writer.
    var route = RouteSynthesizer(
      start: Timestamp.parse("2026-11-29T12:00:00.000Z")!,
      origin: Coordinate(latitude: 48.137_154, longitude: 11.576_124), seed: 7)
    route.rateHz = 5
    route.noiseMeters = 2
    route.drive(
      to: route.origin.offset(by: 150, bearingDegrees: 60), speedMetersPerSecond: 12)
    route.gap(seconds: 2)
    route.stop(seconds: 3)
    let log = Array(NMEAWriter.log(route.fixes()).utf8)
    let replay = NMEALog.decode(log, path: "synthetic.nmea").fixes.filter(\.isUsable)
    try #require(replay.count > 50)

    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let source = GPSDSource(configuration: rig.configuration())
    let fixes = Collector(source.fixes())
    try await rig.gpsd.waitForWatchers(1)
    let epochs = FakeReceiver.epochs(of: FakeReceiver.lines(of: log))
    try await rig.receiver.send(epochs: epochs, interval: .milliseconds(10))
    let last = replay.last!
    #expect(await fixes.wait { $0.contains { $0.sameTimeAndPosition(as: last) } })
    let received = fixes.all
    for fix in replay {
      #expect(
        received.contains { $0.sameTimeAndPosition(as: fix) },
        "missing \(Timestamp.format(fix.time!))")
    }
    // Nothing arrives with a position that our replay does not have.
    let timed = received.filter(\.isUsable)
    for fix in timed {
      #expect(replay.contains { $0.sameTimeAndPosition(as: fix) }, "extra \(fix.time!)")
    }
    #expect(timed.allSatisfy { $0.provenance == .device(rig.receiver.path) })
    #expect(timed.allSatisfy { $0.mode == .threeDimensional })
    fixes.cancel()
  }

  @Test func survivesAGPSDRestartMidStream() async throws {
    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let log = SyntheticLog(count: 30)
    let source = GPSDSource(configuration: rig.configuration())
    let fixes = Collector(source.fixes())
    let health = Collector(source.health())
    try await rig.gpsd.waitForWatchers(1)
    let firstPart = Array(log.epochs[0..<10])
    let rest = Array(log.epochs[10...])
    try await rig.receiver.send(epochs: firstPart.map(\.lines), interval: .milliseconds(10))
    #expect(await fixes.wait { $0.contains { $0.matches(firstPart.last!) } })

    rig.gpsd.crash()
    #expect(await health.wait { $0.contains { $0.service == .unreachable } })
    try await rig.gpsd.restart()
    try await rig.gpsd.waitForWatchers(1)
    try await rig.receiver.warmUp(gpsd: rig.gpsd)
    try await rig.receiver.send(epochs: rest.map(\.lines), interval: .milliseconds(10))
    #expect(await fixes.wait { $0.contains { $0.matches(rest.last!) } })
    let received = fixes.all
    for epoch in rest {
      #expect(received.contains { $0.matches(epoch) }, "missing epoch \(epoch.time)")
    }
    #expect(health.all.last?.service == .reachable)
    #expect(health.all.last?.reconnectAttempt == 0)
    fixes.cancel()
    health.cancel()
  }

  @Test func reportsAnUnpluggedReceiverAndResumesOnANewOne() async throws {
    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let log = SyntheticLog(count: 12)
    let source = GPSDSource(configuration: rig.configuration())
    let fixes = Collector(source.fixes())
    let health = Collector(source.health())
    try await rig.gpsd.waitForWatchers(1)
    #expect(await health.wait { $0.last?.devicePresent == true })
    try await rig.receiver.send(
      epochs: log.epochs[0..<6].map(\.lines), interval: .milliseconds(10))
    #expect(await fixes.wait { $0.contains { $0.matches(log.epochs[5]) } })

    try rig.receiver.unplug(from: rig.gpsd)
    #expect(await health.wait { $0.last?.devicePresent == false })
    #expect(health.all.last?.service == .reachable)

    let replacement = try FakeReceiver()
    defer { replacement.terminal.close() }
    try rig.gpsd.add(device: replacement.path)
    try await replacement.warmUp(gpsd: rig.gpsd)
    #expect(await health.wait { $0.last?.devicePresent == true })
    try await replacement.send(
      epochs: log.epochs[6...].map(\.lines), interval: .milliseconds(10))
    #expect(await fixes.wait { $0.contains { $0.matches(log.epochs[11]) } })
    let resumed = fixes.all.filter { $0.provenance == .device(replacement.path) }
    // gpsd 3.22 does not report the very first epoch of a device added at run time (it is
    // still learning the device's reporting cycle); every later one must arrive.
    for epoch in log.epochs[7...] {
      #expect(resumed.contains { $0.matches(epoch) }, "missing epoch \(epoch.time)")
    }
    fixes.cancel()
    health.cancel()
  }

  @Test func watchesOnlyTheNamedDevice() async throws {
    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let other = try FakeReceiver()
    defer { other.terminal.close() }
    try rig.gpsd.add(device: other.path)
    try await other.warmUp(gpsd: rig.gpsd)
    let source = GPSDSource(configuration: rig.configuration(device: other.path))
    let fixes = Collector(source.fixes())
    try await rig.gpsd.waitForWatchers(1)
    let mine = SyntheticLog(count: 5)
    let theirs = SyntheticLog(count: 5, startSecond: 13 * 3600)
    try await rig.receiver.send(epochs: mine.epochs.map(\.lines), interval: .milliseconds(10))
    try await other.send(epochs: theirs.epochs.map(\.lines), interval: .milliseconds(10))
    #expect(await fixes.wait { $0.contains { $0.matches(theirs.epochs.last!) } })
    #expect(fixes.all.allSatisfy { $0.provenance == .device(other.path) })
    #expect(!fixes.all.contains { fix in mine.epochs.contains { fix.matches($0) } })
    #expect(source.currentHealth.device == other.path)
    fixes.cancel()
  }

  @Test func aSlowSubscriberKeepsOnlyTheNewestFixes() async throws {
    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let log = SyntheticLog(count: 20)
    let source = GPSDSource(configuration: rig.configuration(bufferCapacity: 4))
    let slow = source.fixes()  // not read until the end
    let fast = Collector(source.fixes())
    try await rig.gpsd.waitForWatchers(1)
    try await rig.receiver.send(epochs: log.epochs.map(\.lines), interval: .milliseconds(5))
    #expect(await fast.wait { $0.contains { $0.matches(log.epochs.last!) } })
    let kept = Locked<[Fix]>([])
    let last = log.epochs.last!
    _ = try await BoundedWait.first("the last epoch's fix", of: slow) { fix in
      kept.withLock { $0.append(fix) }
      return fix.matches(last)
    }
    let read = kept.withLock { $0 }
    #expect(read.count <= 4)
    #expect(read.last?.matches(last) == true)
    #expect(fast.all.count > 4)
    fast.cancel()
  }

  @Test func cancellingTheConsumerStopsTheReaderThread() async throws {
    let rig = try await LiveRig.start()
    defer { rig.stop() }
    let source = GPSDSource(configuration: rig.configuration())
    let consumer = Task {
      var count = 0
      for await _ in source.fixes() { count += 1 }
      return count
    }
    try await rig.gpsd.waitForWatchers(1)
    #expect(source.isRunning)
    consumer.cancel()
    _ = await consumer.value
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(5)
    while source.isRunning && clock.now < deadline {
      try await clock.sleep(for: .milliseconds(10))
    }
    #expect(!source.isRunning)
  }
}

/// Without gpsd, with an injected manual clock: nothing here waits in real time for backoff.
@Suite struct GPSDUnreachableTests {
  @Test func reportsUnreachableAndBacksOffOnTheInjectedClock() async throws {
    let port = try GPSDHarness.freePort()  // nothing listens here
    let clock = ManualClock()
    let policy = ReconnectPolicy(
      initialDelay: .seconds(1), maximumDelay: .seconds(4), multiplier: 2, jitter: 0.5)
    let source = GPSDSource(
      configuration: GPSDConfiguration(
        endpoint: GPSDEndpoint(host: "127.0.0.1", port: port), reconnect: policy),
      clock: clock)
    let health = Collector(source.health())
    var requests = clock.requests.makeAsyncIterator()
    for attempt in 1...6 {
      let delay = try #require(await requests.next())
      let base = policy.baseDelay(attempt: attempt)
      #expect(delay <= base && delay >= base / 2, "attempt \(attempt): \(delay)")
      #expect(await health.wait { $0.last?.reconnectAttempt == attempt })
      let last = try #require(health.all.last)
      #expect(last.service == .unreachable)
      #expect(last.lastError?.contains("127.0.0.1:\(port)") == true)
      // The reader waits on the clock: one sleeper, and no further attempt until time moves.
      #expect(clock.sleeperCount == 1)
      #expect(source.currentHealth.reconnectAttempt == attempt)
      clock.advance(by: delay)
    }
    health.cancel()
    let clockTime = ContinuousClock()
    let deadline = clockTime.now + .seconds(5)
    while source.isRunning && clockTime.now < deadline {
      try await clockTime.sleep(for: .milliseconds(10))
    }
    #expect(!source.isRunning)
  }

  @Test func probesASilentGPSDThenGivesUpOnIt() async throws {
    let server = try SilentServer()
    defer { server.close() }
    let clock = ManualClock()
    let source = GPSDSource(
      configuration: GPSDConfiguration(
        endpoint: GPSDEndpoint(host: "127.0.0.1", port: server.port),
        receiveTimeout: .seconds(10)),
      clock: clock)
    let health = Collector(source.health())
    #expect(await health.wait { $0.last?.service == .reachable })
    #expect(await server.wait { $0.contains("?WATCH=") })
    clock.advance(by: .seconds(6))
    #expect(await server.wait { $0.contains("?VERSION;") })
    #expect(source.currentHealth.service == .reachable)
    clock.advance(by: .seconds(5))
    #expect(await health.wait { $0.last?.service == .unreachable })
    #expect(health.all.last?.lastError == GPSDError.silent.description)
    #expect(health.all.last?.reconnectAttempt == 1)
    health.cancel()
  }

  /// A gpsd that answers probes and sends nothing else (its receiver is silent) is probed less
  /// and less often: each answer doubles the wait (5 s, 10 s, then the 20 s cap here), and the
  /// reader sleeps on the clock in between instead of polling.
  @Test func probesAnIdleGPSDLessAndLessOften() async throws {
    let server = try SilentServer(answeringProbes: true)
    defer { server.close() }
    let clock = ManualClock()
    let source = GPSDSource(
      configuration: GPSDConfiguration(
        endpoint: GPSDEndpoint(host: "127.0.0.1", port: server.port),
        receiveTimeout: .seconds(10), maximumProbeInterval: .seconds(20)),
      clock: clock)
    let health = Collector(source.health())
    defer { health.cancel() }
    #expect(await health.wait { $0.last?.service == .reachable })
    #expect(await server.wait { $0.contains("?WATCH=") })

    /// Moves the clock once the reader has set its alarm, and waits for it to set the next one.
    func advance(by duration: Duration) async {
      await clock.waitForSleepers(1)
      clock.advance(by: duration)
    }
    func answered(_ number: Int) async -> Bool {
      let wall = ContinuousClock()
      let deadline = wall.now + .seconds(10)
      while wall.now < deadline {
        if source.serverVersion == "probe-\(number)" { return true }
        try? await wall.sleep(for: .milliseconds(10))
      }
      return false
    }
    // t = 5: the first probe, after half the receive timeout.
    await advance(by: .seconds(5))
    #expect(await server.wait { _ in server.probes == 1 })
    #expect(await answered(1))
    // t = 10: the probe's deadline passes, answered: no probe (the next is due at 5 + 10).
    await advance(by: .seconds(5))
    await clock.waitForSleepers(1)
    // t = 15: the second probe; answered, the next wait is 20 s (the cap).
    await advance(by: .seconds(5))
    #expect(await server.wait { _ in server.probes == 2 })
    #expect(await answered(2))
    // t = 34: not yet; t = 35: the third.
    await advance(by: .seconds(19))
    await clock.waitForSleepers(1)
    await advance(by: .seconds(1))
    #expect(await server.wait { _ in server.probes == 3 })
    #expect(await answered(3))
    // Exactly three probes in 35 s (a poll every half timeout would have sent seven), and gpsd
    // was never given up.
    #expect(server.probes == 3)
    #expect(health.all.allSatisfy { $0.service != .unreachable })
  }
}

/// A TCP server that accepts connections, records what clients send, and never answers: a
/// hung gpsd. With `answeringProbes`, it answers each `?VERSION;` with a VERSION whose release
/// is `probe-<n>` (a live gpsd whose receiver is silent).
final class SilentServer: Sendable {
  let port: UInt16
  private let listener: Int32
  private let storage = Storage()

  final class Storage: Sendable {
    let text = Locked("")
  }

  init(answeringProbes: Bool = false) throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    _ = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0
      }
    }
    listen(fd, 4)
    listener = fd
    port = UInt16(bigEndian: address.sin_port)
    let storage = self.storage
    let thread = Thread {
      let client = accept(fd, nil, nil)
      guard client >= 0 else { return }
      var buffer = [UInt8](repeating: 0, count: 1024)
      var answered = 0
      while true {
        let count = recv(client, &buffer, buffer.count, 0)
        if count <= 0 { break }
        let chunk = String(decoding: buffer[0..<count], as: UTF8.self)
        let probes = storage.text.withLock { text in
          text += chunk
          return text.components(separatedBy: "?VERSION;").count - 1
        }
        while answeringProbes && answered < probes {
          answered += 1
          let answer = Array(
            (#"{"class":"VERSION","release":"probe-\#(answered)","rev":"probe","#
              + #""proto_major":3,"proto_minor":14}"# + "\n").utf8)
          _ = answer.withUnsafeBytes { send(client, $0.baseAddress, $0.count, 0) }
        }
      }
      Foundation.close(client)
    }
    thread.start()
  }

  /// The `?VERSION;` probes received so far.
  var probes: Int {
    storage.text.withLock { $0.components(separatedBy: "?VERSION;").count - 1 }
  }

  func wait(until condition: (String) -> Bool) async -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while clock.now < deadline {
      if condition(storage.text.withLock { $0 }) { return true }
      try? await clock.sleep(for: .milliseconds(10))
    }
    return false
  }

  func close() {
    shutdown(listener, Int32(SHUT_RDWR))
    Foundation.close(listener)
  }
}
