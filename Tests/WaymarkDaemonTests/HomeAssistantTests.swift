import Foundation
import Testing
import WaymarkCore
import WaymarkMQTT
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// The messages a real mosquitto retains under `filter` now, as topic → payload: what Home
/// Assistant (or anyone) subscribing later gets. `mosquitto_sub --retained-only` for 2 s.
func retainedMessages(port: UInt16, filter: String) throws -> [String: String] {
  let run = try CommandRun.run(
    "/usr/bin/mosquitto_sub",
    ["-h", "127.0.0.1", "-p", "\(port)", "-t", filter, "-v", "--retained-only", "-W", "2"],
    timeout: .seconds(10))
  var messages: [String: String] = [:]
  for line in run.output.split(separator: "\n") {
    guard let space = line.firstIndex(of: " ") else { continue }
    messages[String(line[..<space])] = String(line[line.index(after: space)...])
  }
  return messages
}

/// The JSON object of `payload`, or an empty one.
private func object(_ payload: String?) -> [String: Any] {
  guard let payload, let data = payload.data(using: .utf8) else { return [:] }
  return (try? JSONSerialization.jsonObject(with: data) as? [String: Any]) ?? [:]
}

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"))
struct HomeAssistantTests {
  static let topic = "owntracks/test/ha"
  static let places = [("home", "Home", Commute.home), ("office", "Office", Commute.office)]

  /// With `mqtt-homeassistant = yes` the five discovery configs are retained on a real broker
  /// (one device, distinct unique ids, every entity reading the retained state and the
  /// availability); the state follows the drive (Home as the tracker's location name with the
  /// stay's arrival, then no place); availability is `online` while connected, `offline` after
  /// `kill -9` (the will) and after SIGTERM; and with the option back to `no` the next start
  /// empties every retained topic it published, while OwnTracks' messages go on.
  @Test func discoveryIsRetainedFollowsTheDriveAndIsRemovedWhenTurnedOff() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let mqtt = "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\nmqtt-interval = 3600\n"
    let rig = try await DaemonRig.start(
      places: Self.places, extraConfig: mqtt + "mqtt-homeassistant = yes\n")
    defer { rig.stop() }
    let state = Self.topic + "/homeassistant/state"
    let availability = Self.topic + "/homeassistant/availability"
    let subscriber = try subscribe(port: broker.port, topic: "#", id: "sub-ha")
    try await broker.process.waitForLine { $0.contains("sub-ha") }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    try await subscriber.waitForCount("\(availability) online", 1)
    try await rig.gpsd.waitForWatchers(1)

    // Home: the tracker's location name, and the stay (120 s of stillness) with its arrival.
    let epochs = Commute.epochs(homeStay: 200, officeStay: 60)
    let homeEnd = Commute.start.addingTimeInterval(30 + 200)
    try await rig.send(epochs.filter { $0.time <= homeEnd })
    try await subscriber.waitForLine {
      $0.hasPrefix(state) && $0.contains(#""place":"Home""#) && !$0.contains(#""stay_since":null"#)
    }
    let configs = try retainedMessages(port: broker.port, filter: "homeassistant/#")
    #expect(configs.count == 5, "\(configs.keys.sorted())")
    let decoded = configs.values.map { object($0) }
    let ids = Set(decoded.compactMap { $0["unique_id"] as? String })
    #expect(ids.count == 5)
    let nodes = Set(
      decoded.compactMap { ($0["device"] as? [String: Any])?["identifiers"] as? [String] })
    #expect(nodes.count == 1, "one device: \(nodes)")
    let node = try #require(nodes.first?.first)
    #expect(node.hasPrefix("waymark_"))
    #expect(ids.allSatisfy { $0.hasPrefix(node + "_") })
    for (topic, payload) in configs {
      #expect(
        topic.hasPrefix("homeassistant/") && topic.contains("/\(node)/")
          && topic.hasSuffix("/config"), "\(topic)")
      let config = object(payload)
      let expected =
        topic.contains("/device_tracker/") ? Self.topic + "/homeassistant/location" : state
      #expect(config["state_topic"] as? String == expected, "\(topic)")
      #expect(config["availability_topic"] as? String == availability, "\(topic)")
    }
    let tracker = object(configs["homeassistant/device_tracker/\(node)/location/config"])
    #expect(tracker["json_attributes_topic"] as? String == state)
    #expect(tracker["source_type"] as? String == "gps")
    let atHome = try retainedMessages(port: broker.port, filter: Self.topic + "/homeassistant/#")
    let homeState = object(atHome[state])
    #expect(homeState["place"] as? String == "Home", "\(atHome)")
    #expect(atHome[Self.topic + "/homeassistant/location"] == "Home", "\(atHome)")
    let latitude = try #require(homeState["latitude"] as? Double)
    let longitude = try #require(homeState["longitude"] as? Double)
    #expect(Coordinate(latitude: latitude, longitude: longitude).distance(to: Commute.home) < 30)
    #expect(homeState["mode"] as? String == "3D")
    let stays = try Database(path: rig.store).read { try StayRepository($0).all() }
    let arrival = try #require(stays.last?.arrivalDate)
    #expect(homeState["stay_since"] as? String == Timestamp.format(arrival), "\(stays)")
    #expect(atHome[availability] == HomeAssistant.online)

    // kill -9: the broker sends the will, retained.
    try await daemon.crash()
    try await subscriber.waitForCount("\(availability) offline", 1)
    #expect(
      try retainedMessages(port: broker.port, filter: availability)[availability] == "offline")
    let again = try rig.launch()
    try await subscriber.waitForCount("\(availability) online", 2)
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(epochs.filter { $0.time > homeEnd })
    try await again.waitForLine { $0.hasPrefix("<5>DEPARTURE from Office") }
    try await subscriber.waitForLine { $0.hasPrefix(state) && $0.contains(#""place":"Office""#) }
    var away: [String: Any] = [:]
    try await eventually("no place in the retained state", within: .seconds(10)) {
      away = object((try? retainedMessages(port: broker.port, filter: state))?[state])
      return away["place"] is NSNull
    }
    // The Home stay ended (its departure decided 120 s after the last fix there, on the way).
    #expect(away["stay_since"] is NSNull, "\(away)")
    let location = Self.topic + "/homeassistant/location"
    #expect(try retainedMessages(port: broker.port, filter: location)[location] == "None")
    let ended = try Database(path: rig.store).read { try StayRepository($0).all() }
    #expect(ended.count == 1 && ended[0].departureDate != nil, "\(ended)")

    // SIGTERM: offline before the clean disconnect.
    again.signal(SIGTERM)
    #expect(try await again.waitForExit() == 0)
    try await subscriber.waitForCount("\(availability) offline", 2)

    // Turned off: every retained topic it published is emptied at the next start.
    try (mqtt + "gpsd = 127.0.0.1:\(rig.gpsd.port)\nsave-interval = 3600\n").write(
      toFile: rig.config, atomically: true, encoding: .utf8)
    let off = try rig.launch()
    try await off.waitForLine { $0.contains("retained topic(s) of before to remove") }
    #expect(try await outboxDrained(rig.store) == 0)
    #expect(try retainedMessages(port: broker.port, filter: "homeassistant/#").isEmpty)
    #expect(
      try retainedMessages(port: broker.port, filter: Self.topic + "/homeassistant/#").isEmpty)
    // OwnTracks' last will is back on the base topic: a kill -9 sends it.
    try await off.crash()
    try await subscriber.waitForLine {
      $0.hasPrefix(Self.topic + " ") && $0.contains(#""_type":"lwt""#)
    }
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }
}

/// The Python of a released Home Assistant that `Scripts/ha-discovery-check.sh` installs.
private let homeAssistantPython = Products.packageRoot.appendingPathComponent(
  ".build/homeassistant/bin/python"
).path

@Suite(
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: homeAssistantPython),
    "needs a released Home Assistant in .build/homeassistant: Scripts/ha-discovery-check.sh"))
struct HomeAssistantSchemaTests {
  /// Every discovery config passes the `DISCOVERY_SCHEMA` of its platform in Home Assistant's
  /// own code (`Scripts/ha-discovery-check.py`); a config with a field Home Assistant refuses
  /// (the control) does not.
  @Test func configsValidateWithHomeAssistantsOwnSchemas() throws {
    var settings = MQTTSettings(
      host: "127.0.0.1",
      identity: MQTTIdentity(hostname: "van", machineID: "0123456789abcdef0123456789abcdef"))
    settings.publishesHomeAssistant = true
    let lines = settings.homeAssistant.configs().map { "\($0.topic) \($0.payload)" }
    let checker = Products.packageRoot.appendingPathComponent("Scripts/ha-discovery-check.py").path
    let run = try CommandRun.run(
      homeAssistantPython, [checker], input: Data(lines.joined(separator: "\n").utf8),
      timeout: .seconds(120))
    #expect(run.status == 0, "\(run.output)\(run.stderr)")
    #expect(
      run.output.split(separator: "\n").filter { $0.hasPrefix("ok ") }.count == 5,
      "\(run.output)")
    // The control: a sensor whose device class Home Assistant does not know is refused.
    let bad = lines[1].replacingOccurrences(
      of: #""device_class":"enum""#, with: #""device_class":"nonsense""#)
    let refused = try CommandRun.run(
      homeAssistantPython, [checker], input: Data(bad.utf8), timeout: .seconds(120))
    #expect(refused.status == 1 && refused.output.contains("REFUSED"), "\(refused.output)")
  }
}

/// The `hass` of the Home Assistant that `Scripts/ha-discovery-check.sh` installs.
private let homeAssistantProgram = Products.packageRoot.appendingPathComponent(
  ".build/homeassistant/bin/hass"
).path

@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"),
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: homeAssistantProgram),
    "needs a released Home Assistant in .build/homeassistant: Scripts/ha-discovery-check.sh"))
struct HomeAssistantLiveTests {
  /// A real Home Assistant, its MQTT integration on a real mosquitto, and `waymarkd` with
  /// discovery on, driven by a real gpsd: Home Assistant makes the device tracker and the
  /// sensors by itself; at Home the tracker says `Home` (the declared place) at the fix's
  /// coordinates, the sensors say 3D, the satellites and the stay's arrival; after `kill -9`
  /// every entity is unavailable.
  @Test func homeAssistantShowsTheDeviceAndItsPlace() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(directory: directory)
    let port = try GPSDHarness.freePort()
    let config = directory.file("ha")
    try FileManager.default.createDirectory(atPath: config, withIntermediateDirectories: true)
    try """
    homeassistant:
      name: Test
      latitude: 10
      longitude: 10
      elevation: 0
      unit_system: metric
      time_zone: UTC
    http:
      server_host: 127.0.0.1
      server_port: \(port)
    api:
    config:
    onboarding:
    auth:
    device_tracker:
    """.write(toFile: config + "/configuration.yaml", atomically: true, encoding: .utf8)
    let hass = try DaemonProcess(
      executable: homeAssistantProgram, arguments: ["-c", config],
      environment: ["PATH": "/usr/bin:/bin", "HOME": config])
    defer { hass.signal(SIGTERM) }
    let url = "http://127.0.0.1:\(port)"
    let python = Products.packageRoot.appendingPathComponent(".build/homeassistant/bin/python").path
    let script = Products.packageRoot.appendingPathComponent("Scripts/ha-live.py").path
    let waited = try CommandRun.run(python, [script, "wait", url], timeout: .seconds(200))
    try #require(waited.status == 0, "\(waited.stderr)")
    let setup = try CommandRun.run(
      python, [script, "setup", url, "\(broker.port)"], timeout: .seconds(200))
    try #require(setup.status == 0, "\(setup.stderr)")
    let token = setup.output.trimmingCharacters(in: .whitespacesAndNewlines)
    func states() throws -> [String: [String: Any]] {
      let run = try CommandRun.run(python, [script, "states", url, token], timeout: .seconds(60))
      let object = try JSONSerialization.jsonObject(with: Data(run.output.utf8))
      return (object as? [String: [String: Any]]) ?? [:]
    }

    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home)],
      extraConfig: "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = owntracks/test/live\n"
        + "mqtt-interval = 5\nmqtt-homeassistant = yes\n")
    defer { rig.stop() }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected") }
    try await rig.gpsd.waitForWatchers(1)
    let homeEnd = Commute.start.addingTimeInterval(30 + 200)
    try await rig.send(Commute.epochs(homeStay: 200, officeStay: 0).filter { $0.time <= homeEnd })
    try await daemon.waitForLine { $0.hasPrefix("<5>ARRIVAL at Home") }

    // Home Assistant made the entities from the discovery alone, and they follow the state.
    var seen: [String: [String: Any]] = [:]
    // Not thrown on: the expectations below say what was seen.
    try? await eventually("Home and the stay in Home Assistant", within: .seconds(60)) {
      seen = ((try? states()) ?? [:]).filter { $0.key.contains("waymark_") }
      let tracker = seen.first { $0.key.hasPrefix("device_tracker.") }?.value
      let stay = seen.first { $0.key.hasSuffix("_stay") }?.value
      return tracker?["state"] as? String == "Home"
        && (stay?["state"] as? String)?.hasPrefix("2026") == true
    }
    let tracker = try #require(seen.first { $0.key.hasPrefix("device_tracker.") }?.value, "\(seen)")
    #expect(tracker["state"] as? String == "Home", "\(seen)")
    let attributes = try #require(tracker["attributes"] as? [String: Any])
    let latitude = try #require(attributes["latitude"] as? Double)
    let longitude = try #require(attributes["longitude"] as? Double)
    #expect(Coordinate(latitude: latitude, longitude: longitude).distance(to: Commute.home) < 30)
    #expect(attributes["source_type"] as? String == "gps")
    let sensors = seen.filter { $0.key.hasPrefix("sensor.") }
    #expect(sensors.count == 4, "\(sensors.keys.sorted())")
    #expect(sensors.first { $0.key.hasSuffix("_fix_mode") }?.value["state"] as? String == "3D")
    // The count the state carries (this drive's receiver reports none: Home Assistant says
    // "unknown", the same as the JSON's null).
    let satellites =
      sensors.first { $0.key.hasSuffix("_satellites_used") }?.value["state"] as? String
    let reported = attributes["satellites_used"]
    #expect(
      reported is NSNull ? satellites == "unknown" : satellites == "\(reported ?? "")",
      "\(sensors)")
    let stays = try Database(path: rig.store).read { try StayRepository($0).all() }
    let arrival = try #require(stays.last?.arrivalDate)
    let staySince = sensors.first { $0.key.hasSuffix("_stay") }?.value["state"] as? String
    // Home Assistant shows a timestamp as ISO 8601 with its UTC offset.
    #expect(
      staySince?.hasPrefix(String(Timestamp.format(arrival).prefix(19))) == true,
      "\(staySince ?? "nil")")

    // kill -9: the will makes every entity unavailable.
    try await daemon.crash()
    let unavailable: Void? = try? await eventually("every entity unavailable", within: .seconds(30))
    {
      let now = ((try? states()) ?? [:]).filter { $0.key.contains("waymark_") }
      return now.count == 5 && now.values.allSatisfy { $0["state"] as? String == "unavailable" }
    }
    #expect(unavailable != nil)
    try await broker.stop()
  }
}
