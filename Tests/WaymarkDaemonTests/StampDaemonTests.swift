import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// `waymark stamp` without a position when the store's last fix is stale: it asks the real
/// `waymarkd` (following a real gpsd) for its latest fix over the socket, under its own grant.
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct StampDaemonTests {
  @Test func aStaleLastFixAsksTheDaemonForItsLatest() async throws {
    let socketDirectory = try TemporaryDirectory.socketDirectory()
    defer { rmdir(socketDirectory) }
    let socketPath = socketDirectory + "/waymark.sock"
    // No saves between transitions (save-interval 3600 s, and none while inside): the store's
    // last fix goes stale while the daemon's stays live.
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home)],
      extraConfig: "socket = \(socketPath)\nsave-interval-inside = 3600\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    // To Home and 20 s there: the arrival is recorded with the fix that confirmed it, and the
    // daemon goes on receiving fixes (its store is written only at transitions here).
    let epochs = Commute.epochs(homeStay: 20, officeStay: 0)
    let sent = epochs.filter { $0.time <= Commute.start.addingTimeInterval(50) }
    try await rig.send(sent)
    try await daemon.waitForLine { $0.hasPrefix("<5>ARRIVAL at Home (home) at ") }
    let latest = try #require(sent.last?.time)
    let stored = try #require(
      try Database(path: rig.store, createIfMissing: false).read {
        try MonitorStateRepository($0).lastFix()
      })
    #expect(latest.timeIntervalSince(stored.time) > 10, "store's fix \(stored.time)")
    // Let the daemon take the last epochs before asking for them.
    try await Task.sleep(for: .milliseconds(500))

    let stampTime = Timestamp.format(latest.addingTimeInterval(1))
    let stamp = [
      "stamp", "--store", rig.store, "--socket", socketPath, "--time", stampTime, "--max-age", "5",
    ]
    // Without a grant the daemon gives no fix, and says why.
    let user = String(cString: getpwuid(getuid()).pointee.pw_name)
    let client = "\(user):\(realPath(Products.executable("waymark")))"
    let refused = try CommandRun.waymark(stamp)
    #expect(refused.status == 69)
    #expect(
      refused.stderr
        == "Error: waymarkd at \(socketPath) gave no fix: not authorized (notDetermined) "
        + "('waymark auth grant \(client) whenInUse' allows it); give --place or --lat/--lon\n")
    #expect(refused.stdout.isEmpty)

    try grant(client, "whenInUse", store: rig.store)
    let stamped = try CommandRun.waymark(stamp)
    #expect(stamped.status == 0, "\(stamped.stderr)")
    #expect(
      stamped.output.hasPrefix(
        #"{"class":"VISIT","place":"home","name":"Home","arrival":"\#(stampTime)","#))
    let visits = try storedVisits(rig.store)
    #expect(visits.map(\.visit.placeID) == ["home", "home"])
    #expect(visits.last?.visit.source == "stamp")
    #expect(visits.last?.visit.arrivalDate == Timestamp.parse(stampTime))

    // The daemon's latest fix is judged like the store's.
    let late = Timestamp.format(latest.addingTimeInterval(100))
    let tooOld = try CommandRun.waymark([
      "stamp", "--store", rig.store, "--socket", socketPath, "--time", late,
    ])
    #expect(tooOld.status == 69)
    // 100 s, or a second or two more if the daemon had not taken the last epochs yet.
    let prefix = "Error: waymarkd's latest fix is "
    let suffix = " s old (limit 60 s); give --place or --lat/--lon\n"
    #expect(tooOld.stderr.hasPrefix(prefix) && tooOld.stderr.hasSuffix(suffix), "\(tooOld.stderr)")
    let age = Int(tooOld.stderr.dropFirst(prefix.count).dropLast(suffix.count)) ?? 0
    #expect((100...102).contains(age))

    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
  }
}

/// The real path of `path`, as the daemon names a peer's executable.
private func realPath(_ path: String) -> String {
  guard let resolved = realpath(path, nil) else { return path }
  defer { free(resolved) }
  return String(cString: resolved)
}
