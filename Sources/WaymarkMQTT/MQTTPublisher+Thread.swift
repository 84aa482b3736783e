import CMosquitto
import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

// The publisher's thread: connection, backoff, takeovers, publishing and removing the outbox.
extension MQTTPublisher {
  /// The connection's state, owned by the publisher's thread.
  struct Link {
    var socketUp = false
    var connected = false
    /// Whether the broker has accepted the connection (and not dropped it since).
    var accepted = false
    var inFlight: [Int32: Int64] = [:]
    var lastSent: Int64 = 0
    var acknowledged: [Int64] = []
    var backoffSeconds = 1.0
    var nextAttempt: ContinuousClock.Instant
    var lastFailure = ""
    /// Whether the broker closed the connection because another client connected with the same
    /// client id (MQTT 5 reason 142), and how many times in a row that happened.
    var takenOver = false
    var takeovers = 0
    /// Connections in a row that the broker closed while the next one was accepted at once: what
    /// a broker that does not give MQTT 5's reason (mosquitto 2.0) does when another client
    /// takes the session.
    var peerCloses = 0
    var connectedSince: ContinuousClock.Instant
    /// Whether the session a previous process may have left on the broker was discarded.
    var sessionReset = false
    /// Whether the outbox may hold rows not yet sent (set by a wake-up or a reconnect, cleared
    /// when a read reaches its end), so that an idle link does not read the store every turn.
    var mayHaveMore = true
    /// Commands ignored because the link may not take them.
    var ignoredCommands = 0

    /// A link that is down, its first attempt due `now`.
    init(now: ContinuousClock.Instant) {
      nextAttempt = now
      connectedSince = now
    }

    mutating func reset() {
      connected = false
      inFlight.removeAll()
      lastSent = 0
      mayHaveMore = true
    }
  }

  func run(_ handle: OpaquePointer) {
    let clock = time
    var stopping = false
    while !stopping {
      if !link.socketUp && clock.now >= link.nextAttempt { connect(handle) }
      if link.socketUp {
        let status = MosquittoLibrary.loaded.loop(handle, 20, 1)
        if status != MOSQ_ERR_SUCCESS.rawValue { lost(handle, status) }
        if wakes.receiveIfAvailable() != nil { link.mayHaveMore = true }
      } else {
        let wait = max(
          1, min(1000, Int(saturating: clock.now.duration(to: link.nextAttempt).seconds * 1000)))
        if wakes.receive(timeoutMilliseconds: wait) != nil { link.mayHaveMore = true }
      }
      // Closed by `stop()` (a wake-up sent before it was taken above).
      stopping = wakes.isClosed
      removeAcknowledged()
      if !stopping { publish(handle) }
    }
    if link.socketUp {
      // A clean disconnect sends no will: say offline first (written before the DISCONNECT).
      if link.connected { announce(handle, HomeAssistant.offline) }
      _ = MosquittoLibrary.loaded.disconnect(handle)
      _ = MosquittoLibrary.loaded.loop(handle, 100, 1)
      removeAcknowledged()
    }
  }

  func connect(_ handle: OpaquePointer) {
    guard let host = brokerHost() else { return }
    if !link.sessionReset {
      // What a killed predecessor left in flight: discarded, so that its packet ids cannot
      // collide with ours. A QoS 2 message is released to subscribers at PUBREL, so one whose
      // PUBREL was not sent was not delivered; it is still in the outbox and goes again.
      guard resetSession(host: host) else { return }
      link.sessionReset = true
    }
    // Every connection (the first and each reconnection) asks the broker to keep the session.
    var properties: OpaquePointer?
    _ = MosquittoLibrary.loaded.property_add_int32(
      &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), Self.sessionExpirySeconds)
    let status = MosquittoLibrary.loaded.connect_bind_v5(
      handle, host, Int32(settings.port), 30, nil, properties)
    MosquittoLibrary.loaded.property_free_all(&properties)
    if status == MOSQ_ERR_SUCCESS.rawValue {
      // The other end is checked again when the broker answers (``connected(_:flags:)``),
      // before anything is published.
      link.socketUp = true
      return
    }
    failed("cannot connect to \(endpoint): \(describe(status))")
  }

  /// Connects once with a clean start and the same client id, and disconnects: the broker
  /// discards the session a previous process left.
  ///
  /// - Returns: whether it worked (a failure is logged and retried like a connection).
  func resetSession(host: String) -> Bool {
    guard let cleaner = MosquittoLibrary.loaded.new(settings.clientID, true, nil) else {
      failed("cannot reset the session: \(String(cString: strerror(errno)))")
      return false
    }
    defer { MosquittoLibrary.loaded.destroy(cleaner) }
    do {
      try configure(cleaner)
    } catch {
      failed(error.description)
      return false
    }
    let status = MosquittoLibrary.loaded.connect(cleaner, host, Int32(settings.port), 30)
    guard status == MOSQ_ERR_SUCCESS.rawValue else {
      failed("cannot connect to \(endpoint): \(describe(status))")
      return false
    }
    if let refusal = checkConnected(cleaner) {
      _ = MosquittoLibrary.loaded.disconnect(cleaner)
      failed(refusal)
      return false
    }
    // Until the CONNACK (a refusal is found again, and logged, by the real connection).
    let clock = time
    let deadline = clock.now + .seconds(10)
    var answered = false
    MosquittoLibrary.loaded.connect_callback_set(cleaner) { cleaner, _, _ in
      _ = MosquittoLibrary.loaded.disconnect(cleaner)
    }
    var failure = "no answer to a session reset"
    while clock.now < deadline {
      let loop = MosquittoLibrary.loaded.loop(cleaner, 50, 1)
      if loop == MOSQ_ERR_NO_CONN.rawValue { answered = true }
      if loop != MOSQ_ERR_SUCCESS.rawValue {
        if !answered { failure = describe(loop) }
        break
      }
    }
    if !answered { failed("cannot connect to \(endpoint): \(failure)") }
    return answered
  }

  /// Where libmosquitto connects: a remote broker's host as configured; for a broker on this
  /// machine, the endpoint ``LocalBroker`` proved (a loopback name resolved to the address whose
  /// listener is the broker's), or `nil` after logging why none is.
  func brokerHost() -> String? {
    guard settings.isLoopbackBroker else { return settings.host }
    switch localBroker.target(for: settings) {
    case .success(let host): return host
    case .failure(let refusal):
      failed("not connecting to \(endpoint): \(refusal); nothing sent")
      return nil
    }
  }

  /// For a broker's Unix socket: why the peer `handle` is connected to is not the broker's (its
  /// credentials), or `nil`.
  func checkConnected(_ handle: OpaquePointer) -> String? {
    guard settings.isUnixSocket else { return nil }
    guard let refusal = localBroker.checkConnected(MosquittoLibrary.loaded.socket(handle))
    else { return nil }
    return "disconnected from \(endpoint) at once: \(refusal)"
  }

  /// Schedules the next attempt after the backoff and logs a new kind of failure once. (A
  /// connection attempt that fails ends a streak of connections closed by the broker: that is
  /// a broker going away, not another client taking the session.)
  func failed(_ reason: String, endsStreak: Bool = true) {
    if endsStreak { link.peerCloses = 0 }
    if reason != link.lastFailure {
      log(.warning, "MQTT: \(reason); retrying")
      link.lastFailure = reason
    }
    link.nextAttempt =
      time.now + .milliseconds(Int64(saturating: link.backoffSeconds * 1000))
    link.backoffSeconds = min(link.backoffSeconds * 2, 30)
  }

  func lost(_ handle: OpaquePointer, _ status: Int32) {
    link.socketUp = false
    link.connected = false
    let wasConnected = link.accepted
    link.accepted = false
    // Closed by the broker, after an accepted reconnection if this is not the first time.
    // (A connection that lasted a minute starts a new streak.)
    let short = time.now - link.connectedSince < .seconds(60)
    link.peerCloses =
      wasConnected && status == MOSQ_ERR_CONN_LOST.rawValue
      ? (short ? link.peerCloses : 0) + 1 : 0
    if link.takenOver || link.peerCloses >= 3 {
      tookOver(said: link.takenOver)
      return
    }
    if wasConnected {
      log(.warning, "MQTT: disconnected from \(endpoint): \(describe(status)); reconnecting")
      link.lastFailure = ""
    }
    failed("connection to \(endpoint) lost: \(describe(status))", endsStreak: false)
  }

  /// The broker gave this client's session to another client with the same id (it `said` so,
  /// or it closed three connections in a row and accepted the next at once): said once per
  /// episode, retried after 5 s doubling to 5 min (two devices with one id would otherwise take
  /// the session from each other every second).
  func tookOver(said: Bool) {
    link.takenOver = false
    link.peerCloses = 0
    if time.now - link.connectedSince > .seconds(600) { link.takeovers = 0 }
    link.takeovers += 1
    takenOverFlag.withLock { $0 = true }
    progress.send(())
    let delay = min(5 * (1 << min(link.takeovers - 1, 6)), 300)
    if link.takeovers == 1 {
      log(
        .error,
        "MQTT: another client is using MQTT client id '\(settings.clientID)' on \(endpoint) "
          + (said
            ? "(the broker gave it this session)"
            : "(the broker closed 3 connections in a row, each time accepting the next at once)")
          + "; retrying in \(delay) s, then less often: give each device its own mqtt-client-id")
    }
    link.lastFailure = "taken over"
    link.nextAttempt = time.now + .seconds(delay)
  }

  func removeAcknowledged() {
    guard !link.acknowledged.isEmpty else { return }
    do {
      // A deletion lost in a power cut sends a message once more (QoS 1 allows it): its
      // commit need not wait for the disk.
      try database.write(durability: .mayLoseRecent) {
        try OutboxRepository($0).remove(link.acknowledged)
      }
      link.acknowledged.removeAll(keepingCapacity: true)
      progress.send(())
    } catch {
      log(.error, "MQTT: cannot remove acknowledged messages from the outbox: \(error)")
    }
  }

  func publish(_ handle: OpaquePointer) {
    guard link.connected, link.mayHaveMore, link.inFlight.count < Self.window / 2 else { return }
    let limit = Self.window - link.inFlight.count
    var read = 0
    var large = false
    do {
      // Published straight from SQLite's row buffers: no copy of a message on its way out.
      try database.read { connection in
        try OutboxRepository(connection).forEach(after: link.lastSent, limit: limit) { message in
          read += 1
          large = large || message.payload.count > 65_536
          var mid: Int32 = 0
          let status = message.topic.withMemoryRebound(to: CChar.self) { topic in
            MosquittoLibrary.loaded.publish(
              handle, &mid, topic.baseAddress, Int32(message.payload.count),
              message.payload.baseAddress, message.qos, message.retain)
          }
          // Not connected after all: the reconnect sends everything again.
          guard status == MOSQ_ERR_SUCCESS.rawValue else { return false }
          link.inFlight[mid] = message.id
          link.lastSent = message.id
          return true
        }
      }
    } catch {
      log(.error, "MQTT: cannot read the outbox: \(error)")
      return
    }
    if read < limit {
      link.mayHaveMore = false
      if read > 256 || large {
        // A drained backlog or a large message (every place as waypoints): its pages need not
        // stay in this connection's cache, nor its buffers in the heap.
        try? database.releaseCacheMemory()
        HeapTrim.release()
      }
    }
  }
}
