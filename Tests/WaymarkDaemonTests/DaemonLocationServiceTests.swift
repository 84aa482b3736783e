import Foundation
import GPSD
import Testing
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// This test process as the daemon names it: `root:<real path of the executable>`.
var ourselves: String {
  guard let path = realpath("/proc/self/exe", nil) else { return "root:/proc/self/exe" }
  defer { free(path) }
  return PeerIdentity.userName(getuid()) + ":" + String(cString: path)
}

/// The values of `stream` until `done` holds for those collected (or `timeout` passes).
private func collect<S: AsyncSequence & Sendable>(
  _ stream: S, timeout: Duration = .seconds(20),
  until done: @escaping @Sendable ([S.Element]) -> Bool
) async -> [S.Element] where S.Element: Sendable, S.Failure == Never {
  await withTaskGroup(of: [S.Element]?.self) { group in
    group.addTask {
      var values: [S.Element] = []
      for await value in stream {
        values.append(value)
        if done(values) { break }
      }
      return values
    }
    group.addTask {
      try? await Task.sleep(for: timeout)
      return nil
    }
    // The first to finish cancels the other: a cancelled iteration ends with what it has.
    var collected: [S.Element] = []
    for await outcome in group {
      group.cancelAll()
      if let values = outcome { collected = values }
    }
    return collected
  }
}

/// The first `count` values of `stream` (fewer when `timeout` passes first).
private func first<S: AsyncSequence & Sendable>(
  _ count: Int, of stream: S, timeout: Duration = .seconds(20)
) async -> [S.Element] where S.Element: Sendable, S.Failure == Never {
  await collect(stream, timeout: timeout) { $0.count >= count }
}

/// Polls the daemon's `STATUS` through a connection of its own until `watchers` location
/// watchers are counted (a bounded wait for a `WATCH` to reach the daemon).
func waitForDaemonWatchers(_ watchers: Int, socketPath: String) async throws {
  let probe = try await DaemonLocationService(socketPath: socketPath)
  defer { probe.close() }
  let clock = ContinuousClock()
  let deadline = clock.now + .seconds(10)
  while (await probe.status())?.watchers ?? 0 < watchers {
    guard clock.now < deadline else {
      throw TestFailure(description: "the daemon never counted \(watchers) watcher(s)")
    }
    try await clock.sleep(for: .milliseconds(20))
  }
}

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct DaemonLocationServiceTests {
  /// A real daemon with two places sends ARRIVAL and DEPARTURE to this process (granted
  /// `always`): `placeEvents` yields them typed, in order, with the place ids and fix times the
  /// daemon recorded in its own store; the fixes come through the same connection.
  @Test func placeEventsArriveTyped() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home), ("office", "Office", Commute.office)],
      extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "always", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    let service = try await DaemonLocationService(socketPath: socketPath)
    defer { service.close() }
    #expect(service.clientID == ourselves)
    #expect(service.version.protocolMajor == DaemonMessage.protocolMajor)
    #expect(service.authorizationState.status == .authorizedAlways)
    let everything = service.messages
    let events = service.placeEvents
    let fixes = service.fixSource.fixes()
    try await waitForDaemonWatchers(1, socketPath: socketPath)
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let received = Task { await first(4, of: events) }
    let lastTime = epochs.last!.time
    let located = Task { await collect(fixes) { $0.last?.time == lastTime } }
    try await rig.send(epochs)
    let placeEvents = await received.value
    #expect(
      placeEvents.map { "\($0.className) \($0.placeID)" } == [
        "ARRIVAL home", "DEPARTURE home", "ARRIVAL office", "DEPARTURE office",
      ])
    // The same events, and times, as the daemon stored them.
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    var stored: [StoredEvent] = []
    while stored.count < 4 && clock.now < deadline {
      let database = try Database(path: rig.store, createIfMissing: false)
      stored = try database.read { try EventRepository($0).all() }
      if stored.count < 4 { try await clock.sleep(for: .milliseconds(50)) }
    }
    #expect(stored.map(\.className) == placeEvents.map(\.className))
    #expect(stored.map(\.placeID) == placeEvents.map(\.placeID))
    #expect(stored.map(\.time) == placeEvents.map(\.time))
    // Fix times of the drive, in order; each departure names its arrival.
    let times = placeEvents.map(\.time)
    #expect(times == times.sorted() && Set(times).count == 4)
    #expect(times.allSatisfy { $0 >= epochs.first!.time && $0 <= epochs.last!.time })
    if case .departure(let left) = placeEvents[1], case .arrival(let came) = placeEvents[0] {
      #expect(left.arrival == came.time && left.placeName == "Home")
    } else {
      Issue.record("no Home arrival then departure: \(placeEvents)")
    }
    // The fixes came through the same connection (positive control of the watch).
    let fixTimes = await located.value.compactMap(\.time)
    #expect(fixTimes.count >= epochs.count - 2, "\(fixTimes.count) of \(epochs.count) fixes")
    service.close()
    // Every message arrived typed: the watch's answer, fixes and the four events.
    var classes: [String] = []
    for await message in everything { classes.append(message.className) }
    #expect(classes.first == "WATCH")
    #expect(classes.filter { $0 == "ARRIVAL" || $0 == "DEPARTURE" }.count == 4)
    #expect(classes.filter { $0 == "TPV" }.count >= fixTimes.count)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// `preferringDaemon` both ways, on the same gpsd: with no socket, and with a stale socket
  /// file nobody listens on, the fallback (gpsd directly) is built and its locations arrive;
  /// with waymarkd listening, the daemon's manager is used, the fallback is not built, and the
  /// daemon's locations arrive.
  @Test func preferringDaemonUsesTheSocketOnlyWhenTheDaemonAnswers() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store)
    let epochs = Commute.epochs(homeStay: 5, officeStay: 5)
    var fallbacks = 0
    func fallback() -> LocationManager {
      fallbacks += 1
      let endpoint = GPSDEndpoint(host: "127.0.0.1", port: rig.gpsd.port)
      let center = AuthorizationCenter(
        store: InMemoryGrantStore([
          Grant(
            clientID: "org.example.fallback", level: .whenInUse, accuracy: .full,
            grantedAt: Date(timeIntervalSince1970: 0))
        ]), services: .enabled)
      return LocationManager(
        clientID: "org.example.fallback",
        source: GPSDSource(configuration: GPSDConfiguration(endpoint: endpoint)).fixSource,
        authorization: center)
    }

    // No socket: the fallback.
    #expect(!DaemonLocationService.socketExists(at: socketPath))
    let direct = await LocationManager.preferringDaemon(socketPath: socketPath) { fallback() }
    #expect(fallbacks == 1)
    #expect(direct.clientID == "org.example.fallback")
    #expect(direct.authorizationStatus == .authorizedWhenInUse)
    let directLocations = Task { await first(5, of: direct.locations) }
    direct.startUpdatingLocation()
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(epochs[0..<5])
    #expect(await directLocations.value.map(\.timestamp) == epochs[0..<5].map(\.time))
    direct.stopUpdatingLocation()

    // A socket file nobody listens on (a daemon that died): the fallback again.
    let stale = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    var address = try sockaddr_un(path: socketPath)
    let bound = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(stale, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    close(stale)
    #expect(bound == 0 && DaemonLocationService.socketExists(at: socketPath))
    let staleChoice = await LocationManager.preferringDaemon(socketPath: socketPath) { fallback() }
    #expect(fallbacks == 2 && staleChoice.clientID == "org.example.fallback")

    // waymarkd listening (it replaces the stale file): the daemon, and no fallback built.
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(2)
    let throughDaemon = await LocationManager.preferringDaemon(socketPath: socketPath) {
      fallback()
    }
    #expect(fallbacks == 2)
    #expect(throughDaemon.clientID == ourselves)
    #expect(throughDaemon.source.name == "waymarkd \(socketPath)")
    #expect(throughDaemon.authorizationStatus == .authorizedWhenInUse)
    let daemonLocations = Task { await first(5, of: throughDaemon.locations) }
    throughDaemon.startUpdatingLocation()
    try await waitForDaemonWatchers(1, socketPath: socketPath)
    try await rig.send(epochs[5..<10])
    #expect(await daemonLocations.value.map(\.timestamp) == epochs[5..<10].map(\.time))
    throughDaemon.stopUpdatingLocation()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
