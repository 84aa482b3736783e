import Foundation
import GPSD
import NMEA
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

/// `LocationUpdate.liveUpdates` through a real waymarkd following a real gpsd: each diagnosis
/// raised by its real cause, with the update before it as the positive control.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct LiveUpdatesDaemonTests {
  /// The updates of one session, as they arrive.
  final class Received: Sendable {
    private let updates = Locked<[LocationUpdate]>([])
    let task: Task<Void, Never>

    init(_ sequence: LocationUpdate.Updates) {
      let updates = updates
      task = Task {
        do {
          for try await update in sequence { updates.withLock { $0.append(update) } }
        } catch {}
      }
    }

    var all: [LocationUpdate] { updates.withLock { $0 } }
    var count: Int { all.count }
    func since(_ index: Int) -> ArraySlice<LocationUpdate> { all.dropFirst(index) }
  }

  /// A drive with a stop raises `isStationary` and moving on clears it; a grant changed to
  /// reduced raises `accuracyLimited`, one changed to never `authorizationDenied`; gpsd gone
  /// raises `locationUnavailable`, which the first location afterwards clears.
  @Test func eachDiagnosisFromItsRealCause() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    var configuration = LocationUpdate.LiveConfiguration.automotiveNavigation
    configuration.staleAfter = .seconds(2)
    let received = Received(
      LocationUpdate.liveUpdates(configuration, source: .daemon(socketPath: socketPath)))
    defer { received.task.cancel() }
    try await waitForDaemonWatchers(1, socketPath: socketPath)

    // Stationary: 40 s at Home (raised after 20 s of fix time), cleared driving on.
    let epochs = Commute.epochs(homeStay: 40, officeStay: 5)
    try await rig.send(epochs)
    let last = epochs.last!.time
    try await eventually("the drive's last location: \(received.count) updates") {
      received.all.contains { $0.location?.timestamp == last }
    }
    let drive = received.all.filter { $0.location != nil }
    let arrival = Commute.start.addingTimeInterval(30)
    let departure = arrival.addingTimeInterval(40)
    #expect(drive.filter { $0.location!.timestamp < arrival }.allSatisfy { !$0.isStationary })
    let raised = try #require(drive.first { $0.isStationary }?.location?.timestamp)
    #expect(raised > arrival.addingTimeInterval(19) && raised < departure)
    let cleared = try #require(
      drive.first { $0.location!.timestamp > raised && !$0.isStationary }?.location?.timestamp)
    #expect(cleared > departure && cleared < departure.addingTimeInterval(10))
    #expect(drive.allSatisfy { !$0.accuracyLimited && !$0.authorizationDenied })

    // Reduced grant: accuracyLimited (the full grant's updates above are the control).
    var mark = received.count
    try grant(ourselves, "whenInUse", store: rig.store, reduced: true)
    try await eventually("accuracyLimited: \(received.since(mark))") {
      received.since(mark).contains { $0.accuracyLimited }
    }
    #expect(received.since(mark).allSatisfy { !$0.authorizationDenied })

    // Grant changed to never: authorizationDenied, and no location after it.
    mark = received.count
    try grant(ourselves, "never", store: rig.store)
    try await eventually("authorizationDenied: \(received.since(mark))") {
      received.since(mark).contains { $0.authorizationDenied }
    }
    let denied = received.since(mark).drop { !$0.authorizationDenied }
    #expect(denied.allSatisfy { $0.location == nil })
    // While the grant is never, fixes keep coming: none reaches this program, while another,
    // granted program's watcher gets them (the control that they went out; before, the drive
    // had ended when the grant changed, so a daemon that kept sending would have passed).
    let waymark = String(cString: realpath(Products.executable("waymark"), nil))
    try grant("root:\(waymark)", "always", store: rig.store)
    let control = try DaemonProcess(
      executable: "/bin/sh",
      arguments: ["-c", "exec '\(waymark)' watch --daemon --socket '\(socketPath)' --json 1>&2"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    defer { control.signal(SIGTERM) }
    try await control.waitForLine { $0.contains(#""class":"WATCH""#) }
    var meanwhile = RouteSynthesizer(
      start: Commute.start.addingTimeInterval(1800), origin: Commute.office, seed: 7)
    meanwhile.stop(seconds: 20)
    let during = meanwhile.fixes().map { fix in
      Epoch(time: fix.time!, lines: NMEAWriter.sentences(for: fix))
    }
    mark = received.count
    try await rig.send(during)
    try await control.waitForLine { $0.contains(Timestamp.format(during.last!.time)) }
    #expect(received.since(mark).allSatisfy { $0.location == nil }, "\(received.since(mark))")

    // Granted again, a receiver that keeps sending (an hour later, standing at Home):
    // locations, and none unavailable while they flow (the control for gpsd going away).
    try grant(ourselves, "whenInUse", store: rig.store)
    var standing = RouteSynthesizer(
      start: Commute.start.addingTimeInterval(3600), origin: Commute.home, seed: 5)
    standing.stop(seconds: 3000)
    let stream = standing.fixes().map { fix in
      Epoch(time: fix.time!, lines: NMEAWriter.sentences(for: fix))
    }
    let sender = Task { try await rig.send(stream) }
    defer { sender.cancel() }
    mark = received.count
    try await eventually("200 locations again: \(received.count - mark)") {
      received.since(mark).filter { $0.location != nil }.count >= 200
    }
    #expect(received.since(mark).allSatisfy { !$0.locationUnavailable && !$0.authorizationDenied })

    // gpsd gone while the receiver still talks: locationUnavailable.
    mark = received.count
    rig.gpsd.stop()
    try await eventually("locationUnavailable: \(received.since(mark))") {
      received.since(mark).contains { $0.location == nil && $0.locationUnavailable }
    }
    sender.cancel()
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }

  /// `.automatic` both ways on the same gpsd: without waymarkd, gpsd directly under the
  /// program's own grant (never, here: authorizationDenied); with waymarkd listening, the
  /// daemon and the grant it holds (whenInUse: the drive's locations).
  @Test func automaticPrefersTheDaemonWhenItAnswers() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(places: [], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    try grant(ourselves, "whenInUse", store: rig.store)
    let never = Grant(
      clientID: "org.example.live", level: .never, accuracy: .full,
      grantedAt: Date(timeIntervalSince1970: 0))
    let denying = AuthorizationCenter(store: InMemoryGrantStore([never]), services: .enabled)
    let source = LiveSource.automatic(
      socketPath: socketPath,
      gpsd: GPSDConfiguration(endpoint: GPSDEndpoint(host: "127.0.0.1", port: rig.gpsd.port)),
      clientID: "org.example.live", authorization: denying)

    // No daemon: gpsd directly, under the in-process grant.
    let first = try #require(
      try await BoundedWait.first(
        "the first update from gpsd directly", of: LocationUpdate.liveUpdates(source: source)))
    #expect(first.authorizationDenied && first.location == nil)

    // waymarkd listening: its grant, and the drive's locations.
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    let received = Received(LocationUpdate.liveUpdates(source: source))
    defer { received.task.cancel() }
    try await waitForDaemonWatchers(1, socketPath: socketPath)
    try await rig.send(Commute.epochs(homeStay: 5, officeStay: 5))
    try await eventually("locations through the daemon: \(received.all)") {
      received.all.contains { $0.location != nil }
    }
    #expect(received.all.allSatisfy { !$0.authorizationDenied })
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}
