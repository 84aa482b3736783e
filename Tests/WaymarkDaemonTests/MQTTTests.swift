import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

let mosquittoInstalled = [
  "/usr/sbin/mosquitto", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub",
]
.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

/// A real mosquitto on a free loopback port, with persistence in `directory`.
final class Mosquitto {
  let port: UInt16
  let directory: TemporaryDirectory
  private(set) var process: DaemonProcess
  private let address: String
  private let extra: String

  init(
    directory: TemporaryDirectory, port: UInt16? = nil, address: String = "127.0.0.1",
    extra: String = "allow_anonymous true"
  ) async throws {
    self.port = try port ?? GPSDHarness.freePort()
    self.directory = directory
    self.address = address
    self.extra = extra
    process = try Self.launch(port: self.port, address: address, directory: directory, extra: extra)
    try await process.waitForLine { $0.contains("running") }
  }

  private static func launch(
    port: UInt16, address: String, directory: TemporaryDirectory, extra: String
  ) throws -> DaemonProcess {
    let store = directory.file("mosquitto")
    try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
    chmod(store, 0o777)
    let config = try directory.write(
      "mosquitto.conf",
      """
      user root
      listener \(port) \(address)
      persistence true
      persistence_location \(store)/
      log_dest stderr
      log_type all
      \(extra)
      """)
    return try DaemonProcess(
      executable: "/usr/sbin/mosquitto", arguments: ["-c", config],
      environment: ["PATH": "/usr/bin:/bin"])
  }

  func stop() async throws {
    process.signal(SIGTERM)
    _ = try await process.waitForExit()
  }

  func restart() async throws {
    process = try Self.launch(port: port, address: address, directory: directory, extra: extra)
    try await process.waitForLine { $0.contains("running") }
  }
}

/// `mosquitto_sub -v` with a persistent session (QoS 1): `topic payload` lines.
func subscribe(
  port: UInt16, topic: String, id: String, options: String = "", host: String = "127.0.0.1"
) throws -> DaemonProcess {
  try DaemonProcess(
    executable: "/bin/sh",
    arguments: [
      "-c",
      "exec /usr/bin/mosquitto_sub -h \(host) -p \(port) -t '\(topic)' -v -q 1 -c -i \(id) "
        + "\(options) 1>&2",
    ],
    environment: ["PATH": "/usr/bin:/bin"])
}

/// Publishes `payload` at QoS 1 on `topic` of the broker on `port` with `mosquitto_pub`, read
/// from a file in `directory` (a command may be larger than one argument may be).
func publish(_ payload: String, topic: String, port: UInt16, in directory: TemporaryDirectory)
  throws
{
  let file = try directory.write("payload-\(UUID().uuidString)", payload)
  let run = try CommandRun.run(
    "/usr/bin/mosquitto_pub",
    ["-h", "127.0.0.1", "-p", "\(port)", "-q", "1", "-t", topic, "-f", file])
  #expect(run.status == 0, "\(run.stderr)")
}

/// The JSON objects received on `topic`, decoded.
func objects(_ lines: [String], topic: String) -> [[String: Any]] {
  lines.compactMap { line -> [String: Any]? in
    guard line.hasPrefix(topic + " ") else { return nil }
    let payload = Data(line.dropFirst(topic.count + 1).utf8)
    return try? JSONSerialization.jsonObject(with: payload) as? [String: Any]
  }
}

func outboxCount(_ store: String) throws -> Int {
  try Database(path: store).read { try OutboxRepository($0).count() }
}

/// Waits (at most `timeout`) until the outbox of `store` is empty; returns what is left in it.
func outboxDrained(_ store: String, timeout: Duration = .seconds(10)) async throws -> Int {
  let clock = ContinuousClock()
  let deadline = clock.now + timeout
  while try outboxCount(store) > 0 && clock.now < deadline {
    try await clock.sleep(for: .milliseconds(50))
  }
  return try outboxCount(store)
}

/// The transitions on `<topic>/event`, one per `_id` (QoS 1 may deliver one twice), as
/// "enter Home" and the like, sorted.
func distinctTransitions(_ lines: [String], topic: String) -> [String] {
  var byID: [String: String] = [:]
  for transition in objects(lines, topic: topic + "/event") {
    guard let id = transition["_id"] as? String else { continue }
    byID[id] = "\(transition["event"] ?? "?") \(transition["desc"] ?? "?")"
  }
  return byID.values.sorted()
}

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"))
struct MQTTTests {
  static let topic = "owntracks/test/dev"
  static let places = [("home", "Home", Commute.home), ("office", "Office", Commute.office)]

  /// Locations and transitions reach a real broker with OwnTracks' fields; the broker stopped
  /// mid-drive and restarted (with persistence) loses no transition; the outbox ends empty.
  @Test func transitionsSurviveABrokerOutage() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let rig = try await DaemonRig.start(
      places: Self.places,
      extraConfig: "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\n"
        + "mqtt-tid = wt\nmqtt-interval = 5\n")
    defer { rig.stop() }
    let subscriber = try subscribe(port: broker.port, topic: "owntracks/#", id: "sub-outage")
    try await broker.process.waitForLine { $0.contains("sub-outage") }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected to 127.0.0.1:\(broker.port)") }
    // A loopback broker in plaintext: no warning, and commands are taken.
    #expect(!daemon.logText.contains("plaintext to"))
    #expect(!daemon.logText.contains("are ignored"))
    try await rig.gpsd.waitForWatchers(1)
    let epochs = Commute.epochs(homeStay: 20, officeStay: 20)
    let homeEnd = Commute.start.addingTimeInterval(30 + 20 + 10)
    try await rig.send(epochs.filter { $0.time <= homeEnd })
    try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Home") }
    try await subscriber.waitForLine { $0.contains(#""event":"leave""#) }

    // The broker goes away; the drive goes on; the Office visit happens while it is down.
    try await broker.stop()
    try await daemon.waitForLine { $0.contains("MQTT: disconnected") }
    try await rig.send(epochs.filter { $0.time > homeEnd })
    try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office") }
    #expect(try outboxCount(rig.store) > 0)
    try await broker.restart()
    try await subscriber.waitForCount(#""_type":"transition""#, 4, timeout: .seconds(30))

    let transitions = objects(subscriber.log, topic: Self.topic + "/event")
    let events = transitions.map { "\($0["event"]!) \($0["desc"]!)" }
    #expect(Set(events) == ["enter Home", "leave Home", "enter Office", "leave Office"])
    let visits = try storedVisits(rig.store)
    // The fixes as gpsd read them from the receiver (the NMEA the test wrote, decoded).
    let sent = NMEALog.decode(
      Array(NMEAWriter.log(Commute.fixes(homeStay: 20, officeStay: 20)).utf8),
      path: "commute.nmea"
    ).fixes
    for transition in transitions {
      #expect(transition["tid"] as? String == "wt")
      #expect(transition["t"] as? String == "c")
      #expect(transition["_id"] is String)
      // lat/lon are the deciding fix: the one fix sent at that point, to the encoding's
      // precision — 7 decimals (half a step, 5e-8°) after gpsd's 9 (5e-10°) — and sent at or
      // after the event's time, within 14 s (its confirmations follow the event's first fix;
      // measured: 4 and 3 s after the arrivals, 7 and 6 s after the departures).
      let latitude = try #require(transition["lat"] as? Double)
      let longitude = try #require(transition["lon"] as? Double)
      let eventTime = try #require(transition["tst"] as? Int)
      let there = sent.filter {
        guard let coordinate = $0.coordinate else { return false }
        return abs(coordinate.latitude - latitude) <= 5.1e-8
          && abs(coordinate.longitude - longitude) <= 5.1e-8
      }
      let after = there.compactMap { $0.time.map { $0.timeIntervalSince1970 - Double(eventTime) } }
      #expect(
        after.count == 1 && after[0] >= 0 && after[0] <= 14, "\(transition): fixes there \(after)")
      let times = visits.flatMap {
        [$0.visit.arrivalDate] + ($0.visit.departureDate.map { [$0] } ?? [])
      }
      #expect(times.contains { Int($0.timeIntervalSince1970) == eventTime }, "tst \(eventTime)")
    }
    let onTopic = objects(subscriber.log, topic: Self.topic)
    // The base topic carries locations, and the last will (`lwt`) when the link is lost.
    #expect(onTopic.allSatisfy { ["location", "lwt"].contains($0["_type"] as? String ?? "") })
    let locations = onTopic.filter { $0["_type"] as? String == "location" }
    #expect(locations.count >= 3)
    #expect(
      locations.allSatisfy { $0["_type"] as? String == "location" && $0["tid"] as? String == "wt" },
      "\(locations)")
    let waypoints = objects(subscriber.log, topic: Self.topic + "/waypoints")
    #expect((waypoints.first?["waypoints"] as? [Any])?.count == 2)
    // Everything acknowledged leaves the outbox.
    #expect(try await outboxDrained(rig.store) == 0)
    // A broker that went away is not another client taking the session.
    #expect(!daemon.logText.contains("another client"))
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// `kill -9` of the daemon with transitions still in the outbox (no broker): after a restart
  /// with the broker up, every one of them arrives — the four events of the drive, each once,
  /// dated as the stored visits — and the outbox ends empty.
  @Test func killNineWithUnsentMessagesLosesNothing() async throws {
    let directory = try TemporaryDirectory()
    let port = try GPSDHarness.freePort()
    let rig = try await DaemonRig.start(
      places: Self.places,
      extraConfig: "mqtt = 127.0.0.1:\(port)\nmqtt-topic = \(Self.topic)\nmqtt-interval = 3600\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(Commute.epochs(homeStay: 20, officeStay: 20))
    try await daemon.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office") }
    try await daemon.crash()
    let queued = try outboxCount(rig.store)
    #expect(queued >= 5)  // 4 transitions, the waypoints, a location

    // Now a broker at that port, a subscriber, and the daemon again.
    let broker = try await Mosquitto(directory: directory, port: port)
    let subscriber = try subscribe(port: port, topic: "owntracks/#", id: "sub-kill")
    try await broker.process.waitForLine { $0.contains("sub-kill") }
    let again = try rig.launch()
    try await subscriber.waitForCount(#""_type":"transition""#, 4, timeout: .seconds(30))
    #expect(
      distinctTransitions(subscriber.log, topic: Self.topic)
        == ["enter Home", "enter Office", "leave Home", "leave Office"])
    let stamps = Set(
      objects(subscriber.log, topic: Self.topic + "/event").compactMap { $0["tst"] as? Int })
    let stored = try storedVisits(rig.store).flatMap {
      [$0.visit.arrivalDate] + ($0.visit.departureDate.map { [$0] } ?? [])
    }
    #expect(stamps == Set(stored.map { Int($0.timeIntervalSince1970) }), "\(stamps)")
    // Every row the killed daemon left is sent and acknowledged: the outbox empties.
    #expect(try await outboxDrained(rig.store) == 0)
    again.signal(SIGTERM)
    #expect(try await again.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// `setWaypoints` on `<topic>/cmd` adds places that then produce transitions; a bad command is
  /// logged and ignored.
  @Test func setWaypointsAddsPlacesThatProduceTransitions() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let rig = try await DaemonRig.start(
      places: [],
      extraConfig:
        "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\nmqtt-interval = 3600\n")
    defer { rig.stop() }
    let subscriber = try subscribe(port: broker.port, topic: Self.topic + "/event", id: "sub-cmd")
    try await broker.process.waitForLine { $0.contains("sub-cmd") }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    try await rig.gpsd.waitForWatchers(1)
    func publish(_ payload: String) throws {
      try WaymarkDaemonTests.publish(
        payload, topic: Self.topic + "/cmd", port: broker.port, in: directory)
    }
    try publish(
      #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"","lat":1,"lon":2,"rad":50}]}}"#
    )
    try await daemon.waitForLine {
      $0.contains("MQTT: ignored a command") && $0.contains("waypoint 0: missing desc")
    }
    let office = Commute.office
    try publish(
      #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"Office","lat":\#(office.latitude),"lon":\#(office.longitude),"rad":50,"tst":1700000000,"rid":"office"}]}}"#
    )
    try await daemon.waitForLine { $0.contains("1 place(s) from setWaypoints") }
    try await rig.send(Commute.epochs(homeStay: 20, officeStay: 20))
    try await subscriber.waitForCount(#""event":"leave""#, 1, timeout: .seconds(20))
    let transitions = objects(subscriber.log, topic: Self.topic + "/event")
    #expect(
      transitions.map { "\($0["event"]!) \($0["desc"]!)" } == ["enter Office", "leave Office"],
      "\(subscriber.logText)")
    #expect(transitions.allSatisfy { $0["wtst"] as? Int == 1_700_000_000 })
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// `waymark replay --mqtt` publishes a log's messages (back-filling a recorder): a transition
  /// per place event and locations at the interval; with no broker it exits 69 and says so.
  @Test func replayPublishesTheLogsMessages() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let subscriber = try subscribe(port: broker.port, topic: "backfill/#", id: "sub-replay")
    try await broker.process.waitForLine { $0.contains("sub-replay") }
    let log = Products.packageRoot.appendingPathComponent("Demo/drive.nmea").path
    let places = Products.packageRoot.appendingPathComponent("Demo/places.geojson").path
    let arguments = [
      "replay", log, "--places", places, "--mqtt-topic", "backfill/car", "--mqtt-interval", "60",
    ]
    let replay = try CommandRun.waymark(arguments + ["--mqtt", "127.0.0.1:\(broker.port)"])
    #expect(replay.status == 0, "\(replay.stderr)")
    let events = replay.output.split(separator: "\n").count
    #expect(events == 10)
    try await subscriber.waitForCount(#""_type":"transition""#, events, timeout: .seconds(20))
    // Locations and transitions go at different QoS: the transitions' arrival does not mean the
    // locations have all arrived (the broker has them all: replay exits 0 once acknowledged).
    try await subscriber.waitForCount(#""_type":"location""#, 60, timeout: .seconds(20))
    let locations = objects(subscriber.log, topic: "backfill/car")
    #expect(locations.count >= 60, "\(locations.count)")
    let stamps = locations.compactMap { $0["tst"] as? Int }
    #expect(stamps == stamps.sorted())
    subscriber.signal(SIGTERM)
    try await broker.stop()

    let down = try CommandRun.waymark(
      arguments + ["--mqtt", "127.0.0.1:\(broker.port)", "--mqtt-wait", "2"])
    #expect(down.status == 69)
    #expect(down.stderr.contains("not acknowledged by 127.0.0.1:\(broker.port)"))
  }

  /// TLS with a throw-away CA; a wrong password is a clear error, retried with backoff (not in a
  /// busy loop); the right one connects and publishes.
  @Test func tlsAndAWrongPassword() async throws {
    let directory = try TemporaryDirectory()
    let d = directory.path
    let script = """
      set -e
      cd '\(d)'
      openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 \\
        -subj /CN=waymark-test-ca 2>/dev/null
      openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \\
        -subj /CN=127.0.0.1 2>/dev/null
      printf 'subjectAltName=IP:127.0.0.1' > san.ext
      openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \\
        -out server.crt -days 1 -extfile san.ext 2>/dev/null
      mosquitto_passwd -b -c passwd fleet s3cret
      printf 'wrong\\n' > wrong.txt
      printf 's3cret\\n' > right.txt
      chmod 600 wrong.txt right.txt
      """
    let made = try CommandRun.run("/bin/sh", ["-c", script])
    try #require(made.status == 0, "\(made.stderr)")
    let broker = try await Mosquitto(
      directory: directory,
      extra: """
        allow_anonymous false
        password_file \(d)/passwd
        cafile \(d)/ca.crt
        certfile \(d)/server.crt
        keyfile \(d)/server.key
        """)
    func config(_ password: String) -> String {
      "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\nmqtt-cafile = \(d)/ca.crt\n"
        + "mqtt-username = fleet\nmqtt-password-file = \(d)/\(password)\n"
    }
    let wrong = try await DaemonRig.start(places: Self.places, extraConfig: config("wrong.txt"))
    defer { wrong.stop() }
    let refused = try wrong.launch()
    try await refused.waitForLine { $0.contains("refused the connection: not authorized") }
    // The moment each of four attempts is refused (waits of 1, 2 and 4 s between them): each
    // wait longer than the one before, the last at least twice the first. A constant retry
    // (1 s, 1 s, 1 s) fails both; the moments are seen within 20 ms of polling, and a busy
    // machine delays all three waits alike.
    let clock = ContinuousClock()
    var refusals = [clock.now]
    for attempt in 2...4 {
      try await refused.waitForCount("refused the connection", attempt, timeout: .seconds(20))
      refusals.append(clock.now)
    }
    let waits = zip(refusals, refusals.dropFirst()).map { ($1 - $0) / .seconds(1) }
    #expect(waits[1] > waits[0] && waits[2] > waits[1], "waits \(waits) s")
    #expect(waits[2] >= 2 * waits[0], "waits \(waits) s")
    refused.signal(SIGTERM)
    #expect(try await refused.waitForExit() == 0)

    let subscriber = try subscribe(
      port: broker.port, topic: Self.topic + "/#", id: "sub-tls",
      options: "--cafile \(d)/ca.crt -u fleet -P s3cret")
    try await broker.process.waitForLine { $0.contains("sub-tls") }
    let right = try await DaemonRig.start(places: Self.places, extraConfig: config("right.txt"))
    defer { right.stop() }
    let daemon = try right.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected to 127.0.0.1:\(broker.port)") }
    try await subscriber.waitForLine { $0.hasPrefix(Self.topic + "/waypoints ") }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }
}
