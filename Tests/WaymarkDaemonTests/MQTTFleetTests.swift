import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// One device of a fleet, in a town of its own (device `index` lives at latitude
/// 48 + 0.05 × index): west of Home, Home for a while, the Office 1 km east, then beyond.
private struct FleetDevice: Sendable {
  let index: Int
  let home: Coordinate
  let office: Coordinate
  let fixes: [Fix]

  init(index: Int) {
    self.index = index
    home = Coordinate(latitude: 48 + 0.05 * Double(index), longitude: 2 + 0.02 * Double(index))
    office = home.offset(by: 1000, bearingDegrees: 90)
    var route = RouteSynthesizer(
      start: Commute.start.addingTimeInterval(3600 * Double(index)),
      origin: home.offset(by: 300, bearingDegrees: 270), seed: UInt64(index + 1))
    route.noiseMeters = 1
    route.drive(to: home, speedMetersPerSecond: 10)
    route.stop(seconds: 15)
    route.drive(to: office, speedMetersPerSecond: 15)
    route.stop(seconds: 15)
    route.drive(to: office.offset(by: 300, bearingDegrees: 90), speedMetersPerSecond: 15)
    fixes = route.fixes().filter { $0.time != nil }
  }

  /// The device a location belongs to, from its latitude.
  static func index(ofLatitude latitude: Double) -> Int { Int(((latitude - 48) / 0.05).rounded()) }

  var places: [(String, String, Coordinate)] {
    [("home", "Home", home), ("office", "Office", office)]
  }

  var geoJSON: String {
    let features = places.map { id, name, point in
      #"{"type":"Feature","id":"\#(id)","geometry":{"type":"Point","coordinates":[\#(point.longitude),\#(point.latitude)]},"properties":{"name":"\#(name)","radius":50}}"#
    }
    return #"{"type":"FeatureCollection","features":[\#(features.joined(separator: ","))]}"#
  }

  var log: String { fixes.flatMap { NMEAWriter.sentences(for: $0) }.joined(separator: "\n") + "\n" }

  var epochs: [Epoch] { fixes.map { Epoch(time: $0.time!, lines: NMEAWriter.sentences(for: $0)) } }
}

/// `mosquitto_sub` that keeps every message (no de-duplication) of `topic`, at QoS 2 with a
/// persistent session (it reconnects by itself across a broker restart).
private func keepEverything(port: UInt16, topic: String, id: String) throws -> DaemonProcess {
  try DaemonProcess(
    executable: "/bin/sh",
    arguments: [
      "-c",
      "exec /usr/bin/mosquitto_sub -h 127.0.0.1 -p \(port) -t '\(topic)' -v -q 2 -c -i \(id) 1>&2",
    ],
    environment: ["PATH": "/usr/bin:/bin"])
}

/// Publishes a marker at QoS 2 and waits until `subscriber` has it: what was published before
/// has had its chance to arrive.
private func flush(_ subscriber: DaemonProcess, port: UInt16, marker: String) async throws {
  let run = try CommandRun.run(
    "/usr/bin/mosquitto_pub",
    ["-h", "127.0.0.1", "-p", "\(port)", "-q", "2", "-t", "owntracks/marker", "-m", marker])
  #expect(run.status == 0, "\(run.stderr)")
  try await subscriber.waitForLine(timeout: .seconds(30)) { $0 == "owntracks/marker \(marker)" }
}

/// `waymarkd` for `rig`, as a machine of its own: in a mount namespace where `/etc/machine-id`
/// is `machineID`.
private func launchAsMachine(_ rig: DaemonRig, machineID: String) throws -> DaemonProcess {
  let file = try rig.directory.write("machine-id", machineID + "\n")
  let daemon = Products.executable("waymarkd")
  return try DaemonProcess(
    executable: "/usr/bin/unshare",
    arguments: [
      "--mount", "--propagation", "private", "/bin/sh", "-c",
      "mount --bind '\(file)' /etc/machine-id && exec '\(daemon)' --config '\(rig.config)'",
    ],
    environment: daemonEnvironment(state: rig.directory.path))
}

/// Every transition of a fleet exactly once (issue 24): back-fills at once, live daemons, a
/// broker restart, `kill -9` before the broker released a transition, and two clients with one
/// id.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"))
struct MQTTFleetTests {
  /// 20 devices' logs back-filled at once and 5 live daemons (5 gpsd, each daemon on a machine id
  /// of its own and no MQTT identity configured), one mosquitto restarted once mid-way: a
  /// subscriber that keeps every message sees each transition once, each device on a topic of
  /// its own, and each device's newest location is its log's last fix.
  @Test(
    .enabled(
      if: isRoot && FileManager.default.fileExists(atPath: "/etc/machine-id"),
      "bind-mounts a machine id per daemon (unshare --mount, as root)"))
  func aFleetSeesEachTransitionOnce() async throws {
    let directory = try TemporaryDirectory()
    // A recorder's broker queues what its subscriber has not taken yet, without mosquitto's
    // default limit of 1,000 messages (past it, QoS 1 and 2 messages are dropped).
    let broker = try await Mosquitto(
      directory: directory, extra: "allow_anonymous true\nmax_queued_messages 0")
    let subscriber = try keepEverything(port: broker.port, topic: "owntracks/#", id: "fleet-sub")
    try await broker.process.waitForLine { $0.contains("fleet-sub") }
    let replayed = (0..<20).map(FleetDevice.init)
    let live = (20..<25).map(FleetDevice.init)

    // Five machines, each with gpsd and waymarkd.
    let config = "mqtt = 127.0.0.1:\(broker.port)\nmqtt-interval = 0\n"
    var rigs: [DaemonRig] = []
    for device in live {
      rigs.append(try await DaemonRig.start(places: device.places, extraConfig: config))
    }
    defer { for rig in rigs { rig.stop() } }
    var daemons: [DaemonProcess] = []
    for (rig, device) in zip(rigs, live) {
      let machineID = String(format: "%032x", 0x5eed_0000 + device.index)
      daemons.append(try launchAsMachine(rig, machineID: machineID))
    }
    for (daemon, rig) in zip(daemons, rigs) {
      try await daemon.waitForLine { $0.contains("MQTT: connected") }
      try await rig.gpsd.waitForWatchers(1)
    }
    func feed(_ part: (([Epoch]) -> ArraySlice<Epoch>)) async throws {
      try await withThrowingTaskGroup(of: Void.self) { group in
        for (rig, device) in zip(rigs, live) {
          let epochs = Array(part(device.epochs))
          let receiver = rig.receiver
          group.addTask {
            try await receiver.send(epochs: epochs.map(\.lines), interval: .milliseconds(15))
          }
        }
        try await group.waitForAll()
      }
    }
    try await feed { $0.prefix($0.count / 2) }

    // Twenty back-fills at once.
    var replays: [DaemonProcess] = []
    for device in replayed {
      let log = try directory.write("device-\(device.index).nmea", device.log)
      let places = try directory.write("device-\(device.index).geojson", device.geoJSON)
      let arguments = [
        Products.executable("waymark"), "replay", log, "--places", places, "--mqtt",
        "127.0.0.1:\(broker.port)", "--mqtt-topic", "owntracks/fleet/device-\(device.index)",
        "--mqtt-tid", String(format: "%02d", device.index), "--mqtt-interval", "0",
        "--mqtt-wait", "40",
      ]
      replays.append(
        try DaemonProcess(
          executable: "/bin/sh",
          arguments: [
            "-c", "exec " + arguments.map { "'\($0)'" }.joined(separator: " ") + " 1>&2",
          ],
          environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path]))
    }
    // The broker restarts while they publish, and while the daemons drive on.
    let clock = ContinuousClock()
    let started = clock.now
    while subscriber.log.filter({ $0.hasPrefix("owntracks/fleet/") && $0.contains("transition") })
      .count < 10 && clock.now < started + .seconds(30)
    {
      try await clock.sleep(for: .milliseconds(5))
    }
    let beforeRestart = subscriber.log.filter {
      $0.hasPrefix("owntracks/fleet/") && $0.contains("transition")
    }.count
    try await broker.stop()
    try await broker.restart()
    try await feed { $0.dropFirst($0.count / 2) }

    var replayEvents: [Int: Int] = [:]
    for (replay, device) in zip(replays, replayed) {
      let status = try await replay.waitForExit(timeout: .seconds(60))
      #expect(status == 0, "device \(device.index): \(replay.logText)")
      replayEvents[device.index] =
        replay.log.filter {
          $0.contains(#""class":"ARRIVAL""#) || $0.contains(#""class":"DEPARTURE""#)
        }
        .count
    }
    var liveEvents: [Int: Int] = [:]
    for ((daemon, rig), device) in zip(zip(daemons, rigs), live) {
      try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office") }
      let deadline = clock.now + .seconds(30)
      while try outboxCount(rig.store) > 0 && clock.now < deadline {
        try await clock.sleep(for: .milliseconds(50))
      }
      liveEvents[device.index] =
        daemon.log.filter { $0.hasPrefix("<5>ARRIVAL") || $0.hasPrefix("<5>DEPARTURE") }.count
    }
    try await flush(subscriber, port: broker.port, marker: "end-of-fleet")

    // What the subscriber kept.
    var transitions: [String: [String]] = [:]  // topic → _id of each message, duplicates kept
    // The newest location of each topic (by its fix time: a QoS 1 location the broker
    // redelivers after its restart may arrive after a newer one, as OwnTracks allows).
    var lastLocation: [String: [String: Any]] = [:]
    var devicesOfTopic: [String: Set<Int>] = [:]
    for line in subscriber.log {
      guard let space = line.firstIndex(of: " ") else { continue }
      let topic = String(line[..<space])
      guard
        let object = try? JSONSerialization.jsonObject(
          with: Data(line[line.index(after: space)...].utf8)) as? [String: Any]
      else { continue }
      switch object["_type"] as? String {
      case "transition":
        transitions[String(topic.dropLast("/event".count)), default: []].append(
          object["_id"] as? String ?? "?")
      case "location":
        if (object["tst"] as? Int ?? 0) >= (lastLocation[topic]?["tst"] as? Int ?? 0) {
          lastLocation[topic] = object
        }
        if let latitude = object["lat"] as? Double {
          devicesOfTopic[topic, default: []].insert(FleetDevice.index(ofLatitude: latitude))
        }
      default: break
      }
    }
    let expected = replayEvents.merging(liveEvents) { first, _ in first }
    let received = transitions.values.reduce(0) { $0 + $1.count }
    let distinct = transitions.values.reduce(0) { $0 + Set($1).count }
    let duplicates = received - distinct
    let summary =
      "fleet: \(expected.values.reduce(0, +)) transitions expected, \(received) received, "
      + "\(distinct) distinct, \(duplicates) duplicate(s); \(devicesOfTopic.count) location topic(s); "
      + "broker restarted after \(beforeRestart) back-filled transition(s)"
    print(summary)
    // The restart came mid-way: some transitions were through before it, and most after it.
    let total = expected.values.reduce(0, +)
    #expect(beforeRestart >= 1 && beforeRestart < total, "\(summary)")
    #expect(duplicates == 0, "\(summary)")
    #expect(expected.values.allSatisfy { $0 == 4 }, "\(expected)")
    // Each device on a topic of its own, with its transitions once and its last fix last.
    #expect(devicesOfTopic.count == 25, "\(summary)")
    #expect(devicesOfTopic.values.allSatisfy { $0.count == 1 }, "\(devicesOfTopic)")
    for device in replayed + live {
      guard let topic = devicesOfTopic.first(where: { $0.value == [device.index] })?.key else {
        Issue.record("device \(device.index) has no topic of its own: \(devicesOfTopic)")
        continue
      }
      let ids = transitions[topic] ?? []
      #expect(
        ids.count == expected[device.index] && Set(ids).count == ids.count, "\(topic): \(ids)")
      let last = try #require(device.fixes.last)
      let location = lastLocation[topic]
      #expect(location?["tst"] as? Int == Int(last.time!.timeIntervalSince1970), "\(topic)")
      let latitude = location?["lat"] as? Double ?? 0
      #expect(abs(latitude - last.coordinate!.latitude) < 1e-6, "\(topic)")
    }
    // Five machines, five client ids: nobody took anyone's session.
    #expect(!daemons.contains { $0.logText.contains("another client") })
    for daemon in daemons { daemon.signal(SIGTERM) }
    for daemon in daemons { _ = try await daemon.waitForExit() }
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// `kill -9` of the daemon after it sent a transition's PUBLISH and before the broker took it
  /// (the broker is stopped with SIGSTOP meanwhile): after the restart the subscriber has that
  /// transition once (at QoS 1 the broker delivered the first copy and the restart sent another).
  @Test func killNineBeforeTheBrokerReleasedATransitionDeliversItOnce() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let subscriber = try keepEverything(port: broker.port, topic: "owntracks/#", id: "kill-sub")
    try await broker.process.waitForLine { $0.contains("kill-sub") }
    let rig = try await DaemonRig.start(
      places: MQTTTests.places,
      extraConfig: "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = owntracks/kill/dev\n"
        + "mqtt-interval = 3600\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    try await rig.gpsd.waitForWatchers(1)
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let homeEnd = Commute.start.addingTimeInterval(30 + 20)
    try await rig.send(epochs.filter { $0.time <= homeEnd })
    try await subscriber.waitForLine { $0.contains(#""event":"enter""#) }

    // The broker stops reading; the daemon sends the departure; then it is killed.
    broker.process.signal(SIGSTOP)
    var resumed = false
    defer { if !resumed { broker.process.signal(SIGCONT) } }
    try await rig.send(epochs.filter { $0.time > homeEnd }.prefix(40))
    try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Home") }
    // Bytes wait unread at the broker's end of the daemon's connection: the PUBLISH went out.
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    var unread = false
    while !unread && clock.now < deadline {
      let sockets = try CommandRun.run(
        "/usr/bin/ss", ["-Htn", "state", "established", "( sport = :\(broker.port) )"])
      unread = sockets.output.split(separator: "\n").contains { line in
        (Int(line.split(separator: " ", omittingEmptySubsequences: true).first ?? "") ?? 0) > 0
      }
      if !unread { try await clock.sleep(for: .milliseconds(20)) }
    }
    #expect(unread, "the PUBLISH never reached the broker's socket")
    try await daemon.crash()
    broker.process.signal(SIGCONT)
    resumed = true
    #expect(try outboxCount(rig.store) >= 1)

    let again = try rig.launch()
    try await again.waitForLine { $0.contains("MQTT: connected") }
    let clockAfter = ContinuousClock.now + .seconds(20)
    while try outboxCount(rig.store) > 0 && ContinuousClock.now < clockAfter {
      try await Task.sleep(for: .milliseconds(50))
    }
    try await flush(subscriber, port: broker.port, marker: "end-of-kill")
    let departures = subscriber.log.filter {
      $0.hasPrefix("owntracks/kill/dev/event ") && $0.contains(#""event":"leave""#)
    }
    print("kill -9: the departure from Home arrived \(departures.count) time(s)")
    #expect(departures.count == 1, "\(departures)")
    again.signal(SIGTERM)
    #expect(try await again.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// Two daemons configured with one client id: the broker gives the session to the newer one;
  /// each says so once ("another client is using MQTT client id …"), not at every reconnection.
  @Test func anotherClientWithTheSameIDIsSaidOnce() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let config =
      "mqtt = 127.0.0.1:\(broker.port)\nmqtt-client-id = same-id\nmqtt-interval = 3600\n"
    let first = try await DaemonRig.start(places: [], extraConfig: config)
    defer { first.stop() }
    let second = try await DaemonRig.start(places: [], extraConfig: config)
    defer { second.stop() }
    let one = try first.launch()
    try await one.waitForLine { $0.contains("MQTT: connected") }
    let two = try second.launch()
    let said = "another client is using MQTT client id 'same-id'"
    try await one.waitForLine { $0.contains(said) }
    // The first retries after 5 s and takes the session back: the second is told in turn.
    try await two.waitForLine(timeout: .seconds(30)) { $0.contains(said) }
    try await broker.process.waitForCount(
      "already connected, closing old connection", 3, timeout: .seconds(30))
    #expect(one.log.filter { $0.contains(said) }.count == 1, "\(one.logText)")
    #expect(two.log.filter { $0.contains(said) }.count == 1, "\(two.logText)")
    for daemon in [one, two] {
      daemon.signal(SIGTERM)
      #expect(try await daemon.waitForExit() == 0)
    }
    try await broker.stop()
  }

  /// A network cut after the broker took a transition and before its acknowledgement came back
  /// (the way back dropped by an nftables rule, then the daemon's socket destroyed with
  /// `ss -K`): after the reconnection the subscriber has that transition once (at QoS 1 with a
  /// clean session the broker delivered it at once and the reconnection sent it again).
  @Test(
    .enabled(
      if: isRoot && FileManager.default.isExecutableFile(atPath: "/usr/sbin/nft")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/ss"),
      "needs root, nft and ss (an nftables rule drops the way back)"))
  func aNetworkCutBeforeTheAcknowledgementDeliversATransitionOnce() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let subscriber = try keepEverything(port: broker.port, topic: "owntracks/#", id: "cut-sub")
    try await broker.process.waitForLine { $0.contains("cut-sub") }
    let rig = try await DaemonRig.start(
      places: MQTTTests.places,
      extraConfig: "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = owntracks/cut/dev\n"
        + "mqtt-interval = 3600\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    try await rig.gpsd.waitForWatchers(1)
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let homeEnd = Commute.start.addingTimeInterval(30 + 20)
    try await rig.send(epochs.filter { $0.time <= homeEnd })
    try await subscriber.waitForLine { $0.contains(#""event":"enter""#) }

    // The daemon's connection: its local port.
    let sockets = try CommandRun.run(
      "/usr/bin/ss", ["-Htnp", "state", "established", "( dport = :\(broker.port) )"])
    let line = try #require(
      sockets.output.split(separator: "\n").first { $0.contains("pid=\(daemon.processID),") },
      "\(sockets.output)")
    let local = try #require(
      line.split(separator: " ", omittingEmptySubsequences: true).dropFirst(2).first?
        .split(separator: ":").last.flatMap { Int($0) })
    // Nothing comes back from the broker on that connection any more.
    let table = "waymark_cut_\(broker.port)"
    let blocked = try CommandRun.run(
      "/usr/sbin/nft",
      [
        "-f", "-",
      ],
      input: Data(
        """
        table inet \(table) {
          chain out {
            type filter hook output priority 0;
            tcp sport \(broker.port) tcp dport \(local) drop
          }
        }
        """.utf8))
    try #require(blocked.status == 0, "\(blocked.stderr)")
    var removed = false
    defer {
      if !removed { _ = try? CommandRun.run("/usr/sbin/nft", ["delete", "table", "inet", table]) }
    }
    try await rig.send(epochs.filter { $0.time > homeEnd }.prefix(40))
    try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Home") }
    // The broker has the departure.
    try await broker.process.waitForLine {
      $0.contains("Received PUBLISH from") && $0.contains("owntracks/cut/dev/event")
    }
    // The cut.
    let cut = try CommandRun.run(
      "/usr/bin/ss", ["-K", "-tn", "( sport = :\(local) and dport = :\(broker.port) )"])
    #expect(cut.status == 0, "\(cut.stderr)")
    _ = try CommandRun.run("/usr/sbin/nft", ["delete", "table", "inet", table])
    removed = true
    try await daemon.waitForCount("MQTT: connected", 2, timeout: .seconds(30))
    let deadline = ContinuousClock.now + .seconds(20)
    while try outboxCount(rig.store) > 0 && ContinuousClock.now < deadline {
      try await Task.sleep(for: .milliseconds(50))
    }
    #expect(try outboxCount(rig.store) == 0)
    try await flush(subscriber, port: broker.port, marker: "end-of-cut")
    let departures = subscriber.log.filter {
      $0.hasPrefix("owntracks/cut/dev/event ") && $0.contains(#""event":"leave""#)
    }
    print("network cut: the departure from Home arrived \(departures.count) time(s)")
    #expect(departures.count == 1, "\(departures)")
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// `waymark replay --mqtt` while another client keeps connecting with its client id: it says
  /// so and exits 69 instead of publishing on and off (and claiming success at the end).
  @Test func replayExitsWhenAnotherClientTakesItsID() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    // A long stay: 20,000 fixes, a location message each.
    var route = RouteSynthesizer(start: Commute.start, origin: Commute.home, seed: 3)
    route.stop(seconds: 20_000)
    let fixes = route.fixes().filter { $0.time != nil }
    let log = try directory.write(
      "long.nmea", fixes.flatMap { NMEAWriter.sentences(for: $0) }.joined(separator: "\n") + "\n")
    let squatter = try DaemonProcess(
      executable: "/bin/sh",
      arguments: [
        "-c",
        "while :; do /usr/bin/mosquitto_pub -h 127.0.0.1 -p \(broker.port) -V 5 -i taken-id "
          + "-t squat -n -q 0; done",
      ],
      environment: ["PATH": "/usr/bin:/bin"])
    defer { squatter.signal(SIGKILL) }
    try await broker.process.waitForLine { $0.contains("as taken-id") }
    let replay = try CommandRun.waymark(
      [
        "replay", log, "--mqtt", "127.0.0.1:\(broker.port)", "--mqtt-topic", "owntracks/taken",
        "--mqtt-client-id", "taken-id", "--mqtt-interval", "0", "--mqtt-wait", "60",
      ],
      environment: ["PATH": "/usr/bin:/bin", "HOME": directory.path])
    #expect(replay.status == 69, "\(replay.stderr)")
    #expect(
      replay.stderr.contains("another client is using MQTT client id 'taken-id'"),
      "\(replay.stderr)")
    squatter.signal(SIGKILL)
    try await broker.stop()
  }
}
