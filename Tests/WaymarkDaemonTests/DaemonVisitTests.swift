import Foundation
import Testing
import WaymarkBroker
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// The real path of an executable, as the daemon's peer identity writes it.
private func resolved(_ path: String) -> String {
  guard let real = realpath(path, nil) else { return path }
  defer { free(real) }
  return String(cString: real)
}

/// Stays through the location socket (protocol 1.2), from a real daemon over a real gpsd: a
/// client granted `always` that watches with `visits` receives each stay as a VISIT when it
/// opens and when it closes; clients granted less, and clients that did not ask, receive none.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "needs root: the tests create system users and run clients as them"))
struct DaemonVisitTests {
  static func visitLines(_ lines: [String]) -> [String] {
    lines.filter { $0.hasPrefix(#"{"class":"VISIT""#) }
  }

  @Test func visitsReachAlwaysWatchersThatAskOnly() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [("home", "Home", DaemonStayTests.home)], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let waymark = resolved(Products.executable("waymark"))
    let ourselves = "root:" + resolved("/proc/self/exe")
    try grant(ourselves, "always", store: rig.store)
    try grant("wmtest-va:\(waymark)", "always", store: rig.store)
    try grant("wmtest-vw:\(waymark)", "whenInUse", store: rig.store)
    try grant("wmtest-vr:\(waymark)", "always", store: rig.store, reduced: true)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    // Other users' `waymark watch --daemon --visits`: always (the positive control), whenInUse,
    // always reduced, and no grant at all.
    let watch = ["watch", "--daemon", "--socket", socketPath, "--json", "--visits"]
    let always = try runAs("wmtest-va", watch)
    let whenInUse = try runAs("wmtest-vw", watch)
    let reduced = try runAs("wmtest-vr", watch)
    let none = try runAs("wmtest-vn", watch)
    for client in [always, whenInUse, reduced] {
      try await client.waitForLine { $0.contains(#""visits":true"#) }
    }
    try await none.waitForLine { $0.contains(#""status":"notDetermined""#) }
    // This process (always): typed through `DaemonLocationService.visits`, raw with visits,
    // and two old-style watches (plain, and with place events only).
    let service = try await DaemonLocationService(socketPath: socketPath)
    defer { service.close() }
    #expect(service.version.protocolMinor >= 2)
    let typed = service.visits
    let raw = try Listener(path: socketPath, watch: #"{"class":"WATCH","visits":true}"#)
    let plain = try Listener(path: socketPath)
    let events = try Listener(path: socketPath, watch: #"{"class":"WATCH","events":true}"#)
    try await plain.waitForWatchers(8)

    let epochs = DaemonStayTests.epochs()
    let received = Task {
      var stays: [Stay] = []
      for await stay in typed {
        stays.append(stay)
        if stays.count == 5 { break }
      }
      return stays
    }
    try await rig.send(epochs)
    // Home opens and closes, the depot opens and closes, the yard opens.
    try await raw.wait { Self.visitLines($0).count >= 5 }
    try await always.waitForCount(#"{"class":"VISIT""#, 5)
    let deadline = Task {
      try await Task.sleep(for: .seconds(20))
      received.cancel()
    }
    let stays = await received.value
    deadline.cancel()
    try #require(stays.count == 5, "\(stays)")
    #expect(stays.map(\.isOpen) == [true, false, true, false, true])
    #expect(stays.map(\.placeID) == ["home", "home", nil, nil, nil])
    #expect(stays[0].arrivalDate == stays[1].arrivalDate)
    #expect(abs(stays[0].arrivalDate.timeIntervalSince(DaemonStayTests.start)) <= 2)
    let homeDeparture = try #require(stays[1].departureDate)
    let homeEnd = DaemonStayTests.start.addingTimeInterval(300)
    #expect(abs(homeDeparture.timeIntervalSince(homeEnd)) <= 10)
    #expect(stays[3].coordinate.distance(to: DaemonStayTests.depot) <= 10)
    #expect(stays[4].coordinate.distance(to: DaemonStayTests.yard) <= 10)
    // The closed stays are the store's rows.
    let stored = try DaemonStayTests.stays(rig.store)
    #expect(stored.count == 3)
    #expect(stored.prefix(2).map(\.arrivalDate) == [stays[1].arrivalDate, stays[3].arrivalDate])
    #expect(
      stored.prefix(2).map(\.departureDate) == [stays[1].departureDate, stays[3].departureDate])
    // The raw lines and the other user's are the same objects; the document's shape.
    let lines = Self.visitLines(raw.received)
    #expect(lines.count == 5)
    #expect(Self.visitLines(always.log) == lines)
    #expect(lines[2].hasPrefix(#"{"class":"VISIT","place":null,"name":null,"arrival":"#))
    #expect(lines[2].contains(#""departure":null,"duration":null,"#))
    #expect(lines[0].contains(#""place":"home","name":"Home","#))

    // Nobody else: each watched (TPVs, or the AUTHORIZATION that says why not) but got no
    // VISIT; the old-style watch with events got the place events, not the stays.
    let lastTime = Timestamp.format(epochs.last!.time)
    for client in [whenInUse, reduced] {
      try await client.waitForLine { $0.hasPrefix(#"{"class":"TPV""#) }
    }
    try await plain.wait { $0.contains { $0.contains(lastTime) } }
    try await events.wait { $0.contains { $0.hasPrefix(#"{"class":"DEPARTURE""#) } }
    for client in [whenInUse, reduced, none] {
      #expect(Self.visitLines(client.log).isEmpty, "\(client.log.suffix(2))")
    }
    #expect(Self.visitLines(plain.received).isEmpty)
    #expect(Self.visitLines(events.received).isEmpty)
    #expect(
      plain.received.contains { $0.hasPrefix(#"{"class":"WATCH""#) && !$0.contains("visits") })
    for client in [always, whenInUse, reduced, none] { client.signal(SIGTERM) }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
