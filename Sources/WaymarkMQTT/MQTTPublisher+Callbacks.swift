import CMosquitto
import FoundationEssentials
import Glibc
import WaymarkCore

// libmosquitto's callbacks: they run on the publisher's thread, inside mosquitto_loop.
extension MQTTPublisher {
  func connected(_ status: Int32, flags: Int32) {
    guard status == 0 else {
      let reason =
        switch status {
        case 4, 134: "bad user name or password"
        case 5, 135: "not authorized"
        default:
          MosquittoLibrary.loaded.reason_string(status).map { String(cString: $0) }
            ?? "reason \(status)"
        }
      log(.error, "MQTT: \(endpoint) refused the connection: \(reason); retrying")
      link.lastFailure = "refused"
      return
    }
    // A broker's Unix socket: its peer is the broker's user, or nothing is published (the loop
    // then finds the link closed and retries with backoff).
    if let handle, let refusal = checkConnected(handle) {
      log(.error, "MQTT: \(refusal)")
      link.lastFailure = "refused"
      _ = MosquittoLibrary.loaded.disconnect(handle)
      return
    }
    // With the session kept, libmosquitto resends what was in flight itself (same packet ids,
    // PUBREL where a PUBREC came): it stays in flight here. Without it (a broker that lost its
    // state), everything unacknowledged goes again from the outbox.
    if flags & 1 == 0 { link.reset() }
    link.connected = true
    link.mayHaveMore = true
    link.backoffSeconds = 1
    link.lastFailure = ""
    link.connectedSince = time.now
    link.accepted = true
    log(.notice, "MQTT: connected to \(endpoint)")
    if let handle {
      _ = MosquittoLibrary.loaded.subscribe(handle, nil, settings.topic + "/cmd", 1)
      announce(handle, HomeAssistant.online)
    }
  }

  /// Publishes Home Assistant's availability (retained; not through the outbox: it is the
  /// link's own state), when its discovery is on. Its acknowledgement is not awaited.
  func announce(_ handle: OpaquePointer, _ availability: String) {
    guard settings.publishesHomeAssistant else { return }
    _ = MosquittoLibrary.loaded.publish(
      handle, nil, settings.homeAssistant.availabilityTopic, Int32(availability.utf8.count),
      availability, 1, true)
  }

  func disconnected(_ status: Int32) {
    link.connected = false
    if status == Int32(MQTT_RC_SESSION_TAKEN_OVER.rawValue) { link.takenOver = true }
  }

  func published(_ mid: Int32) {
    if let id = link.inFlight.removeValue(forKey: mid) { link.acknowledged.append(id) }
  }

  func received(topic: String, payload: [UInt8]) {
    guard topic == settings.topic + "/cmd" else { return }
    guard settings.acceptsCommands else {
      // Logged at the 1st, 2nd, 4th, 8th … so that a flood of commands cannot flood the log.
      link.ignoredCommands += 1
      if link.ignoredCommands & (link.ignoredCommands - 1) == 0 {
        log(
          .warning,
          "MQTT: ignored a command on \(topic) (\(link.ignoredCommands) so far): it came over "
            + "plaintext from a broker that is not on a loopback address")
      }
      return
    }
    do {
      let places = try OwnTracks.setWaypoints(payload)
      log(.notice, "MQTT: setWaypoints with \(places.count) place(s)")
      onWaypoints(places)
    } catch {
      log(.warning, "MQTT: ignored a command on \(topic): \(error)")
    }
  }
}

/// What libmosquitto's callbacks receive as user data.
final class CallbackContext {
  weak var publisher: MQTTPublisher?

  init(publisher: MQTTPublisher) {
    self.publisher = publisher
  }
}

private func callbackPublisher(_ raw: UnsafeMutableRawPointer?) -> MQTTPublisher? {
  guard let raw else { return nil }
  return Unmanaged<CallbackContext>.fromOpaque(raw).takeUnretainedValue().publisher
}

let connectCallback:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void =
    { _, context, status, flags, _ in callbackPublisher(context)?.connected(status, flags: flags) }

let disconnectCallback:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void = {
    _, context, status, _ in callbackPublisher(context)?.disconnected(status)
  }

let publishCallback: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = {
  _, context, mid in callbackPublisher(context)?.published(mid)
}

let messageCallback:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) ->
    Void = { _, context, message in
      guard let message, let topic = message.pointee.topic else { return }
      let count = Int(message.pointee.payloadlen)
      let payload =
        count > 0 && message.pointee.payload != nil
        ? Array(UnsafeRawBufferPointer(start: message.pointee.payload, count: count)) : []
      callbackPublisher(context)?.received(topic: String(cString: topic), payload: payload)
    }
