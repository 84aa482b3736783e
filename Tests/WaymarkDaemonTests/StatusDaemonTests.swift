import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// `waymark status` next to a real waymarkd: the operator's first look (daemon running, its
/// clients, the latest fix, places, the open visit, the outbox).
@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct StatusDaemonTests {
  @Test func statusReportsTheDaemonBesideGPSD() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home), ("office", "Office", Commute.office)],
      extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)
    // Arrive at Home and stay: an open visit.
    let epochs = Commute.epochs(homeStay: 60, officeStay: 20)
    let atHome = epochs.prefix { $0.time < Commute.start.addingTimeInterval(60) }
    try await rig.send(atHome)
    try await daemon.waitForLine { $0.contains("ARRIVAL at Home (home)") }
    // One watcher besides the status's own connection.
    let watcher = try DaemonProcess(
      executable: "/bin/sh",
      arguments: [
        "-c",
        "exec '\(Products.executable("waymark"))' watch --daemon --socket '\(socketPath)' "
          + "--json 1>&2",
      ],
      environment: ["PATH": "/usr/bin:/bin"])
    try await watcher.waitForLine { $0.contains(#""class":"AUTHORIZATION""#) }

    let status = try CommandRun.waymark([
      "status", "127.0.0.1:\(rig.gpsd.port)", "--json", "--socket", socketPath, "--store",
      rig.store,
    ])
    #expect(status.status == 0, "\(status.stderr)")
    let line = try #require(
      status.output.split(separator: "\n").first { $0.hasPrefix(#"{"class":"DAEMON""#) })
    let object = try #require(
      try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
    #expect(object["running"] as? Bool == true)
    #expect(object["clients"] as? Int == 1)
    #expect(object["places"] as? Int == 2)
    #expect(object["outbox"] as? Int == 0)
    #expect(object["lastFix"] as? String == Timestamp.format(atHome.last!.time))
    let open = try #require(object["openVisits"] as? [[String: Any]])
    #expect(open.count == 1)
    #expect(open.first?["place"] as? String == "home")
    #expect(open.first?["name"] as? String == "Home")

    // Text, and the daemon's part still there when gpsd is not.
    let text = try CommandRun.waymark([
      "status", "127.0.0.1:\(rig.gpsd.port)", "--socket", socketPath, "--store", rig.store,
    ])
    #expect(text.output.contains("waymarkd  running (release "))
    #expect(text.output.contains("visit     open at Home (home) since "))
    rig.gpsd.stop()
    let unreachable = try CommandRun.waymark([
      "status", "127.0.0.1:\(rig.gpsd.port)", "--socket", socketPath, "--store", rig.store,
    ])
    #expect(unreachable.status == 69)
    #expect(unreachable.output.contains("waymarkd  running"))
    #expect(unreachable.stderr.hasPrefix("Error: gpsd is not reachable"))
    withExtendedLifetime(watcher) {}
  }
}
