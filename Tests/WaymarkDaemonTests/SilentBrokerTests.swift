import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

/// A broker that takes every message and acknowledges none (`Tests/Fixtures/hostile/
/// silent-broker.py`), and sends a stream of `setWaypoints` commands, while a gpsd impostor
/// feeds a drive: the outbox stays within `mqtt-outbox-max`, whatever the message kind.
@Suite(
  .serialized,
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
    "the silent broker and the gpsd impostor are python3 scripts"))
struct SilentBrokerTests {
  /// A script of `Tests/Fixtures/hostile`, started with `arguments`, once it printed its port.
  static func start(_ script: String, _ arguments: [String]) async throws -> (
    DaemonProcess, UInt16
  ) {
    let path = Products.packageRoot.appendingPathComponent("Tests/Fixtures/hostile/" + script)
      .path
    let process = try DaemonProcess(
      executable: "/usr/bin/python3", arguments: [path] + arguments,
      environment: ["PATH": "/usr/bin:/bin"])
    try await process.waitForLine { !$0.isEmpty }
    let port = process.log.first.flatMap { UInt16($0) }
    if port == nil { process.signal(SIGKILL) }
    return (process, try #require(port, "\(script) printed no port: \(process.logText)"))
  }

  /// 300 `setWaypoints` commands (each adds a place, so each queues a new retained waypoints
  /// message) and a drive of 300 fixes through a place (two transitions, 300 locations at
  /// `mqtt-interval = 0`) with `mqtt-outbox-max = 100` and no acknowledgement ever: the outbox
  /// ends at exactly 100 rows (it filled: the drive alone queued 302 messages), with one
  /// waypoints message and both transitions (the oldest locations went first). Before, each
  /// waypoints message stayed and pushed a location out: 303 rows, no location left.
  @Test func aBrokerThatNeverAcknowledgesCannotGrowTheOutbox() async throws {
    let directory = try TemporaryDirectory()
    let start = Date().addingTimeInterval(-600)
    let home = Coordinate(latitude: 52.52, longitude: 13.405)
    var fixes: [String] = []
    for second in 0..<300 {
      // 60 s at home, then east at 10 m/s: out of the 100 m place after about 70 s.
      let coordinate = home.offset(by: Double(max(0, second - 60)) * 10, bearingDegrees: 90)
      fixes.append(
        #"{"class":"TPV","device":"/dev/hostile","mode":3,"#
          + #""time":"\#(Timestamp.format(start.addingTimeInterval(Double(second))))","#
          + #""lat":\#(coordinate.latitude),"lon":\#(coordinate.longitude),"altMSL":40.0,"#
          + #""speed":10.0,"track":90.0,"epx":3.0,"epy":3.0,"epv":5.0}"#)
    }
    let commands = (0..<300).map { index in
      #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":["#
        + #"{"_type":"waypoint","desc":"C\#(index)","lat":45.1,"lon":4.8,"rad":50,"#
        + #""rid":"c\#(index)"}]}}"#
    }
    // Paced (5 ms a fix, 1.5 s in all): a burst of 300 lines at once can go past the daemon's
    // buffer of fixes on a loaded machine (a clean-clone CI run beside a fuzzer kept 72 of the
    // locations), and the drive alone must fill the outbox.
    let (impostor, gpsdPort) = try await Self.start(
      "fake-gpsd.py",
      [try directory.write("fixes", fixes.joined(separator: "\n") + "\n"), "0.005"])
    defer { impostor.signal(SIGKILL) }
    // The broker sends the commands once their file appears: after the drive.
    let (broker, brokerPort) = try await Self.start(
      "silent-broker.py", [directory.file("commands")])
    defer { broker.signal(SIGKILL) }

    let store = directory.file("waymark.db")
    try grantAlways(directory: directory.path)
    let add = try CommandRun.run(
      Products.executable("waymark"),
      [
        "places", "add", "--name", "Home", "--id", "home", "--lat", "52.52", "--lon", "13.405",
        "--radius", "100", "--store", store,
      ])
    #expect(add.status == 0, "\(add.stderr)")
    let config = try directory.write(
      "waymark.conf",
      "gpsd = 127.0.0.1:\(gpsdPort)\nmqtt = 127.0.0.1:\(brokerPort)\n"
        + "mqtt-topic = owntracks/silent/dev\nmqtt-interval = 0\nmqtt-outbox-max = 100\n")
    let daemon = try DaemonProcess(
      arguments: ["--config", config], environment: daemonEnvironment(state: directory.path))
    defer { if daemon.isRunning { daemon.signal(SIGKILL) } }
    func outbox() throws -> [OutboxMessage] {
      try Database(path: store).read { try OutboxRepository($0).next(after: 0, limit: 10_000) }
    }
    func waitForOutbox(_ what: String, _ condition: ([OutboxMessage]) -> Bool) async throws {
      let clock = ContinuousClock()
      let deadline = clock.now + .seconds(30)
      while try !condition(outbox()) {
        guard clock.now < deadline else {
          Issue.record("the outbox never held \(what): \(daemon.logText)")
          return
        }
        try await clock.sleep(for: .milliseconds(100))
      }
    }

    // The drive: both transitions, then its last fix queued.
    try await daemon.waitForLine { $0.contains("DEPARTURE from Home") }
    let last = #""tst":\#(Int(start.timeIntervalSince1970) + 299),"#
    try await waitForOutbox("the last fix") { $0.contains { $0.payload.contains(last) } }
    // The link carries messages (libmosquitto keeps a window of 20 unacknowledged ones).
    try await broker.waitForLine { $0 == "received 10" }
    // Then the commands, each queueing a waypoints message with every place.
    try directory.write("commands.new", commands.joined(separator: "\n") + "\n")
    try FileManager.default.moveItem(
      atPath: directory.file("commands.new"), toPath: directory.file("commands"))
    try await broker.waitForLine { $0 == "sent 300 commands" }
    try await daemon.waitForLine { $0.contains("from setWaypoints; 301 in all") }
    try await waitForOutbox("the last command's places") {
      $0.contains { $0.kind == .waypoints && $0.payload.contains(#""rid":"c299""#) }
    }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0, "\(daemon.logText)")

    let rows = try outbox()
    let kinds = Dictionary(grouping: rows, by: \.kind).mapValues(\.count)
    let summary =
      "\(kinds); ids \(rows.map { "\($0.id)\($0.kind.rawValue.prefix(1))" }); log: "
      + daemon.log.filter { !$0.contains("setWaypoints") }.joined(separator: "\n")
    #expect(rows.count == 100, "\(summary)")
    #expect(kinds[.waypoints] == 1, "\(summary)")
    #expect(kinds[.transition] == 2, "\(summary)")
    // The waypoints message left is the newest: every place, the 300 commands' and Home.
    let waypoints = try #require(rows.first { $0.kind == .waypoints })
    #expect(waypoints.payload.contains(#""rid":"c299""#) && waypoints.payload.contains("home"))
  }
}
