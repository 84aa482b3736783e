import Foundation
import Testing
import WaymarkCore
import WaymarkStore

@testable import WaymarkMQTT

@Suite struct HomeAssistantDiscoveryTests {
  private static let machineA = "0123456789abcdef0123456789abcdef"
  private static let machineB = "fedcba9876543210fedcba9876543210"

  private func discovery(hostname: String = "van", machineID: String? = machineA) -> HomeAssistant {
    var settings = MQTTSettings(
      host: "127.0.0.1", identity: MQTTIdentity(hostname: hostname, machineID: machineID))
    settings.publishesHomeAssistant = true
    return settings.homeAssistant
  }

  private func object(_ text: String) throws -> [String: Any] {
    try #require(JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any])
  }

  /// Two machines flashed from one image (same host name, their own machine ids) get distinct
  /// node ids and unique ids; the same machine always the same.
  @Test func uniqueIDsComeFromTheMachineIdentity() throws {
    let a = discovery()
    let b = discovery(machineID: Self.machineB)
    #expect(a.nodeID != b.nodeID)
    #expect(a == discovery())
    let idsA = try Set(a.configs().map { try object($0.payload)["unique_id"] as? String ?? "" })
    let idsB = try Set(b.configs().map { try object($0.payload)["unique_id"] as? String ?? "" })
    #expect(idsA.count == 5 && idsB.count == 5)
    #expect(idsA.isDisjoint(with: idsB))
    // A host name with what a discovery topic cannot hold: only [A-Za-z0-9_-] remain.
    let odd = discovery(hostname: "café.van 7")
    #expect(
      odd.nodeID.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || "_-".contains($0)) })
    #expect(odd.configTopics.allSatisfy { $0.split(separator: "/").count == 5 })
  }

  /// Each config is valid JSON with the fields Home Assistant's discovery reads, retained, on
  /// `<prefix>/<component>/<node>/<object>/config`; a removal is an empty retained message.
  @Test func configsCarryWhatDiscoveryReads() throws {
    let discovery = discovery()
    let configs = discovery.configs()
    #expect(configs.count == HomeAssistant.entities.count)
    for (message, entity) in zip(configs, HomeAssistant.entities) {
      #expect(message.topic == "homeassistant/\(entity.0)/\(discovery.nodeID)/\(entity.1)/config")
      #expect(message.retain && message.kind == .homeAssistant)
      let config = try object(message.payload)
      // The tracker reads its location name as plain text; the sensors the JSON state.
      let stateTopic = entity.1 == "location" ? discovery.locationTopic : discovery.stateTopic
      #expect(config["state_topic"] as? String == stateTopic)
      #expect(config["availability_topic"] as? String == discovery.availabilityTopic)
      #expect(
        (config["device"] as? [String: Any])?["identifiers"] as? [String] == [discovery.nodeID])
      #expect((config["origin"] as? [String: Any])?["name"] as? String == "Waymark")
      #expect((config["value_template"] is String) == (entity.1 != "location"))
    }
    let speed = try object(configs[3].payload)
    #expect(speed["device_class"] as? String == "speed")
    #expect(speed["unit_of_measurement"] as? String == "m/s")
    let removals = HomeAssistant.removals(discovery.configTopics, qos: 1)
    #expect(removals.allSatisfy { $0.payload.isEmpty && $0.retain })
  }

  /// The state: the position of the last usable fix, the mode and speed of this one; unknowns
  /// are null (never absent); without a position yet there is none.
  @Test func stateKeepsThePositionThroughALostFix() throws {
    var fix = Fix()
    fix.time = Date(timeIntervalSince1970: 1_800_000_000)
    fix.mode = .threeDimensional
    fix.status = .gps
    fix.coordinate = Coordinate(latitude: 52.5, longitude: 13.4)
    fix.horizontalError = 4.2
    fix.speed = 1.25
    fix.satellitesUsed = 9
    #expect(HomeAssistant.state(fix, position: nil, place: nil, staySince: nil) == nil)
    let arrival = Date(timeIntervalSince1970: 1_799_999_000)
    let moving = try object(
      try #require(HomeAssistant.state(fix, position: fix, place: "Home", staySince: arrival)))
    #expect(moving["latitude"] as? Double == 52.5)
    #expect(moving["gps_accuracy"] as? Double == 4.2)
    #expect(moving["mode"] as? String == "3D")
    #expect(moving["speed"] as? Double == 1.25)
    #expect(moving["place"] as? String == "Home")
    #expect(moving["stay_since"] as? String == Timestamp.format(arrival))
    var lost = Fix()
    lost.time = fix.time!.addingTimeInterval(5)
    lost.mode = .noFix
    let state = try object(
      try #require(HomeAssistant.state(lost, position: fix, place: nil, staySince: nil)))
    #expect(state["mode"] as? String == "no fix")
    #expect(state["latitude"] as? Double == 52.5)
    for key in ["speed", "course", "satellites_used", "place", "stay_since"] {
      #expect(state[key] is NSNull, "\(key)")
    }
    // Extreme values: a non-finite accuracy or speed is null or absent, the JSON stays valid.
    fix.horizontalError = .infinity
    fix.speed = .nan
    let extreme = try object(
      try #require(HomeAssistant.state(fix, position: fix, place: "\u{0}\"", staySince: nil)))
    #expect(extreme["speed"] is NSNull)
    #expect(extreme["place"] as? String == "\u{0}\"")
  }
}
