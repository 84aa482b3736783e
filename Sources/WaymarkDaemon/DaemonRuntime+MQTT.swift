import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkMQTT
import WaymarkPipeline
import WaymarkStore

/// MQTT: the publisher's start, the places as retained waypoints, and the places a
/// `setWaypoints` command sends. The location messages and the transitions are the pipeline's
/// (``OutboxSink``).
extension DaemonRuntime {
  func startMQTT() {
    guard let mqtt else { return }
    let settings = mqtt.settings
    queueWaypoints()
    queueHomeAssistant()
    do {
      try mqtt.start()
      log.notice(
        "MQTT: publishing to \(settings.endpoint) as \(settings.topic) "
          + (settings.usesTLS ? "over TLS" : "in plaintext"))
    } catch {
      log.error("\(error); MQTT is off")
      self.mqtt = nil
      outbox?.isEnabled = false
    }
  }

  /// The places as OwnTracks waypoints, retained on `<topic>/waypoints`.
  func queueWaypoints() {
    guard let outbox, outbox.isEnabled else { return }
    let settings = outbox.settings
    let sorted: [Place]
    do {
      sorted = try database.read { try PlaceRepository($0).all() }
    } catch {
      log.error("store: cannot read the places for MQTT's waypoints: \(error)")
      return
    }
    // The sink reports a failed write to the store's health; it does not throw.
    try? outbox.queue([
      OutboxMessage(
        kind: .waypoints, topic: settings.topic + "/waypoints",
        payload: OwnTracks.waypoints(sorted), qos: settings.qos, retain: true)
    ])
    // Reading every place filled the page cache and the heap; give both back, as at start-up.
    try? database.releaseCacheMemory()
    HeapTrim.release()
  }

  /// Home Assistant's discovery: when on, its configs (retained), and the state resumes from
  /// the open visits and stay; when off, an empty retained message for each topic it published
  /// before (which removes the entities from Home Assistant). The topics are recorded in the
  /// transaction that queues them, so a config that reached the outbox is always removed later.
  func queueHomeAssistant() {
    guard let outbox, outbox.isEnabled else { return }
    let settings = outbox.settings
    let homeAssistant = settings.homeAssistant
    let integration = HomeAssistant.integration
    do {
      let (removed, published) = try database.write { connection in
        let retained = RetainedTopicRepository(connection)
        let before = try retained.topics(integration: integration)
        let wanted = settings.publishesHomeAssistant ? homeAssistant.retainedTopics : []
        // What was published under another prefix or identity, or while it was on.
        let stale = before.filter { !wanted.contains($0) }
        let messages =
          HomeAssistant.removals(stale, qos: settings.qos)
          + (settings.publishesHomeAssistant ? homeAssistant.configs() : [])
        guard !messages.isEmpty else { return (0, 0) }
        try OutboxRepository(connection).enqueue(
          messages, now: clock.date(), maximum: settings.outboxMaximum)
        try retained.forget(integration: integration)
        try retained.record(wanted, integration: integration)
        return (stale.count, messages.count - stale.count)
      }
      if removed > 0 {
        log.notice("MQTT: Home Assistant: \(removed) retained topic(s) of before to remove")
      }
      if published > 0 {
        log.notice(
          "MQTT: Home Assistant discovery under \(homeAssistant.prefix)/…/\(homeAssistant.nodeID)/"
            + ", state on \(homeAssistant.stateTopic)")
      }
    } catch {
      log.error("store: cannot queue Home Assistant's discovery: \(error)")
      return
    }
    guard settings.publishesHomeAssistant else { return }
    let places = tracker.openPlaceIDs.map { ($0, tracker.monitor.name(of: $0) ?? $0) }
    outbox.resume(places: places, staySince: stays?.openStay?.arrivalDate)
  }

  /// Places from a `setWaypoints` command: added to (or updated in) the store and monitored;
  /// refused whole when it would bring the store above ``OwnTracks/maximumPlacesInAll`` places
  /// (a broker may not grow the store without bound).
  func importWaypoints(_ received: [Place]) {
    do {
      // Counted by the store's key, not by reading every place (the command's ids are unique).
      let (known, added) = try database.read { connection in
        let places = PlaceRepository(connection)
        return (try places.count(), try received.count { try !places.contains(id: $0.id) })
      }
      guard known + added <= OwnTracks.maximumPlacesInAll else {
        log.warning(
          "MQTT: refused setWaypoints: \(added) new place(s) beside \(known) would pass "
            + "the \(OwnTracks.maximumPlacesInAll) a broker may bring")
        return
      }
      try database.write { _ = try PlaceRepository($0).upsert(received) }
      let all = try database.read { try PlaceRepository($0).all() }
      outbox?.placeCreated = placeCreationTimes(all)
      tracker.replacePlaces(PlaceTable(all), configuration: configuration.detection)
      noteStateChanged()
      log.notice("MQTT: \(received.count) place(s) from setWaypoints; \(all.count) in all")
      queueWaypoints()
    } catch {
      log.error("MQTT: cannot import the places of setWaypoints: \(error)")
    }
  }
}

extension DaemonRuntime {
  /// Starts the Traccar sender; without libcurl it says so and the locations still wait in the
  /// outbox (sent once it can start).
  func startTraccar() {
    guard let traccar else { return }
    do {
      try traccar.start()
      log.notice(
        "Traccar: sending to \(traccar.settings.host) as '\(traccar.settings.deviceID)' "
          + (traccar.settings.usesTLS ? "over HTTPS" : "in plaintext"))
    } catch {
      log.error("\(error); the locations wait in the outbox")
    }
  }
}
