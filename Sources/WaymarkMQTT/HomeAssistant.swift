import FoundationEssentials
import WaymarkCore
import WaymarkStore

/// Home Assistant's MQTT discovery for one device: the retained configs that make Home
/// Assistant create a device tracker and four sensors, the retained state they all read, and
/// the availability that the MQTT link's last will turns off.
///
/// Follows Home Assistant's per-component discovery format, as its MQTT integration documents
/// it (`<prefix>/<component>/<node id>/<object id>/config`, `origin`, `device`, `availability`):
///
/// - `device_tracker` `location`: its attributes are the state's `latitude`, `longitude` and
///   `gps_accuracy` (so Home Assistant places it, in its own zones); its state is the declared
///   place the device is in (`location_name`), or `None` (Home Assistant's reset payload: the
///   zone from the coordinates) in none. The place goes as plain text on a topic of its own
///   (``locationTopic``): Home Assistant 2024.3, for one, takes a tracker's location name from
///   the raw payload, not from its `value_template`.
/// - `sensor` `fix_mode` (`no fix`, `2D`, `3D`), `satellites_used`, `speed` (m/s) and `stay`
///   (a timestamp: the arrival of the stay the device is in, unknown while it moves).
///
/// Every entity's `unique_id` and the device's identifier are ``nodeID`` and the entity's
/// object id: they come from the machine's identity (``MQTTIdentity``), so two machines flashed
/// from one image never share an entity.
package struct HomeAssistant: Sendable, Hashable {
  /// The discovery prefix (Home Assistant's default: `homeassistant`).
  package var prefix: String
  /// The node id: `waymark_<device>`, with every character but letters, digits, `_` and `-`
  /// made `_` (what Home Assistant accepts in a discovery topic).
  package var nodeID: String
  /// The device's name in Home Assistant: `Waymark <device>`.
  package var deviceName: String
  /// The retained state every entity reads: `<topic>/homeassistant/state` (a level of its own:
  /// OwnTracks' readers take `<topic>/status` and the like as theirs).
  package var stateTopic: String
  /// The device tracker's location name, retained, as plain text: the declared place's name, or
  /// ``noPlace``: `<topic>/homeassistant/location`.
  package var locationTopic: String
  /// The availability (`online`, `offline`; the last will sets `offline`):
  /// `<topic>/homeassistant/availability`.
  package var availabilityTopic: String
  /// The MQTT quality of service of the configs and the state.
  package var qos: Int

  /// The payload of ``availabilityTopic`` while the daemon is connected.
  package static let online = "online"
  /// The payload of ``availabilityTopic`` after the daemon stopped or lost its link (the will).
  package static let offline = "offline"
  /// The name the outbox records this integration's retained topics under.
  package static let integration = "homeassistant"
  /// What the device tracker's state is in no declared place: Home Assistant's `payload_reset`
  /// default, which makes it derive the zone from the coordinates.
  package static let noPlace = "None"

  /// The discovery of the device `identity`, publishing under `topic` with `prefix`.
  package init(prefix: String, topic: String, identity device: String, qos: Int) {
    self.prefix = prefix
    let safe = String(
      device.unicodeScalars.map { scalar -> Character in
        let kept =
          ("a"..."z").contains(scalar) || ("A"..."Z").contains(scalar)
          || ("0"..."9").contains(scalar) || scalar == "_" || scalar == "-"
        return kept ? Character(scalar) : "_"
      })
    nodeID = "waymark_\(safe)"
    deviceName = "Waymark \(device)"
    stateTopic = topic + "/homeassistant/state"
    locationTopic = topic + "/homeassistant/location"
    availabilityTopic = topic + "/homeassistant/availability"
    self.qos = qos
  }

  /// The entities, as (component, object id).
  package static let entities = [
    ("device_tracker", "location"), ("sensor", "fix_mode"), ("sensor", "satellites_used"),
    ("sensor", "speed"), ("sensor", "stay"),
  ]

  /// The discovery topic of each entity, in ``entities``' order.
  package var configTopics: [String] {
    Self.entities.map { "\(prefix)/\($0.0)/\(nodeID)/\($0.1)/config" }
  }

  /// Every retained topic this integration publishes: the configs, the state, the location name,
  /// the availability.
  package var retainedTopics: [String] {
    configTopics + [stateTopic, locationTopic, availabilityTopic]
  }

  /// The retained location name: `place`, or ``noPlace`` in none.
  package func location(place: String?) -> OutboxMessage {
    OutboxMessage(
      kind: .homeAssistant, topic: locationTopic, payload: place ?? Self.noPlace, qos: qos,
      retain: true)
  }

  /// The retained discovery configs, one per entity.
  package func configs() -> [OutboxMessage] {
    zip(Self.entities, configTopics).map { entity, topic in
      OutboxMessage(
        kind: .homeAssistant, topic: topic, payload: config(component: entity.0, id: entity.1),
        qos: qos, retain: true)
    }
  }

  /// Empty retained messages for `topics`: each removes what the broker retains there (an
  /// entity whose config is emptied is removed from Home Assistant).
  package static func removals(_ topics: [String], qos: Int) -> [OutboxMessage] {
    topics.map {
      OutboxMessage(kind: .homeAssistant, topic: $0, payload: "", qos: qos, retain: true)
    }
  }

  /// The config of the entity `id` of `component`.
  func config(component: String, id: String) -> String {
    var line = JSONLine()
    line.add("unique_id", "\(nodeID)_\(id)")
    line.add("object_id", "\(nodeID)_\(id)")
    line.add("state_topic", id == "location" ? locationTopic : stateTopic)
    line.add("availability_topic", availabilityTopic)
    line.add("payload_available", Self.online)
    line.add("payload_not_available", Self.offline)
    line.add("qos", qos)
    switch id {
    case "location":
      line.add("name", "Location")
      line.add("json_attributes_topic", stateTopic)
      line.add("source_type", "gps")
      line.add("payload_reset", Self.noPlace)
      line.add("icon", "mdi:crosshairs-gps")
    case "fix_mode":
      line.add("name", "Fix mode")
      line.add("value_template", "{{ value_json.mode }}")
      line.add("device_class", "enum")
      line.add("options", rawJSON: #"["no fix","2D","3D"]"#)
      line.add("icon", "mdi:crosshairs-question")
    case "satellites_used":
      line.add("name", "Satellites used")
      line.add("value_template", "{{ value_json.satellites_used }}")
      line.add("state_class", "measurement")
      line.add("icon", "mdi:satellite-variant")
    case "speed":
      line.add("name", "Speed")
      line.add("value_template", "{{ value_json.speed }}")
      line.add("device_class", "speed")
      line.add("unit_of_measurement", "m/s")
      line.add("state_class", "measurement")
      line.add("suggested_display_precision", 1)
    default:
      line.add("name", "Stay since")
      line.add("value_template", "{{ value_json.stay_since }}")
      line.add("device_class", "timestamp")
      line.add("icon", "mdi:map-marker-radius")
    }
    var device = JSONLine()
    device.add("identifiers", rawJSON: "[\(quoted(nodeID))]")
    device.add("name", deviceName)
    device.add("manufacturer", "Waymark")
    device.add("model", "GPS receiver through gpsd")
    device.add("sw_version", WaymarkRelease.version)
    line.add("device", object: device)
    var origin = JSONLine()
    origin.add("name", "Waymark")
    origin.add("sw_version", WaymarkRelease.version)
    line.add("origin", object: origin)
    return line.string
  }

  /// The retained state after `fix`, or `nil` before any fix with a position.
  ///
  /// The position is `position`'s, the last usable fix (`fix` itself while it has one):
  /// `latitude`, `longitude` (7 decimals), `gps_accuracy` (m) and `altitude` (m above mean sea
  /// level, 3D fixes). The rest is `fix`'s: `mode` (`no fix` when it has no position),
  /// `speed` (m/s) and `course` (degrees) when it has a position, `satellites_used`, `time`.
  /// Then `place` (the name of the declared place the device is in, `null` at none) and
  /// `stay_since` (the open stay's arrival, `null` while moving).
  package static func state(_ fix: Fix, position: Fix?, place: String?, staySince: Date?)
    -> String?
  {
    guard let position, let coordinate = position.coordinate, let time = fix.time ?? position.time
    else { return nil }
    let hasPosition = fix.isUsable && fix.coordinate != nil
    var line = JSONLine()
    line.add("latitude", coordinate.latitude, decimals: 7)
    line.add("longitude", coordinate.longitude, decimals: 7)
    line.add("gps_accuracy", position.horizontalError, decimals: 1)
    if position.mode == .threeDimensional {
      line.add("altitude", position.altitudeMSL, decimals: 1)
    }
    line.add("mode", hasPosition ? (fix.mode == .threeDimensional ? "3D" : "2D") : "no fix")
    // What is unknown is `null` (Home Assistant shows "unknown"), never absent: a template
    // reading an absent member renders an empty string, which a numeric sensor refuses.
    nullable(&line, "speed", hasPosition ? fix.speed : nil) { $0.add("speed", $1, decimals: 2) }
    nullable(&line, "course", hasPosition ? fix.track : nil) { $0.add("course", $1, decimals: 1) }
    nullable(&line, "satellites_used", fix.satellitesUsed) { $0.add("satellites_used", $1) }
    line.addNullable("place", place)
    nullable(&line, "stay_since", staySince) { $0.add("stay_since", $1) }
    line.add("time", time)
    return line.string
  }

  /// Adds `value` with `add`, or `null` under `name` when it is `nil` (or not finite).
  private static func nullable<Value>(
    _ line: inout JSONLine, _ name: String, _ value: Value?,
    _ add: (inout JSONLine, Value) -> Void
  ) {
    if let value, (value as? Double)?.isFinite ?? true {
      add(&line, value)
    } else {
      line.add(name, rawJSON: "null")
    }
  }

  private func quoted(_ text: String) -> String {
    var bytes: [UInt8] = []
    JSONLine.appendString(text, to: &bytes)
    return String(decoding: bytes, as: UTF8.self)
  }
}
