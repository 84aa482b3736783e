// Trust boundary of the MQTT link. Waymark connects out to one broker (`mqtt = host[:port]`);
// nothing listens. What it sends: OwnTracks JSON of its own fixes and place events. What it takes
// in: only `<topic>/cmd`, and of that only `setWaypoints`, checked like a places file (a bad
// command is logged and ignored). Who can reach it: anyone who may publish to that topic on the
// broker, and anyone on the network path of a plaintext link. So the link is TLS on port 8883 or
// with `mqtt-tls = yes` / `mqtt-cafile`, verified against the system's CA store (or the CA file)
// and the broker's host name; plaintext to a broker that is not on a loopback address is warned
// about once at start, and its commands are ignored (logged) unless `mqtt-remote-commands = yes`.
// The password file is refused when group or others may read it (the configuration's check).
// Protect `<topic>/cmd` with the broker's ACLs: a client the broker lets publish there changes
// the places.

import CMosquitto
import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// Publishes the store's outbox to an MQTT broker through libmosquitto, and reads place commands.
///
/// Nothing is lost: every message is a row of the outbox (written in the same transaction as
/// what it reports); a row is deleted only when the broker acknowledges it (PUBACK at QoS 1,
/// PUBCOMP at QoS 2). Transitions go at QoS 2 over an MQTT 5 session the broker keeps while the
/// link is down: across a broker restart (with persistence) or a network cut, libmosquitto
/// resends what was in flight with the same packet id and the broker recognises it, so a
/// consumer gets each transition once. At start the session a previous process left is
/// discarded first (a connection with a clean start): after `kill -9` between PUBLISH and the
/// acknowledgement the message, which a broker releases only at PUBREL, is still in the outbox and
/// goes once. Locations (and the waypoints) stay at `mqtt-qos` (at least once). When the broker
/// hands the session to another client with the same id (MQTT 5 reason 142) it is said once,
/// and retried with a growing delay. One thread of ours owns the client: it runs libmosquitto's
/// network loop (`mosquitto_loop`), publishes the outbox, deletes what was acknowledged and
/// reconnects with backoff (1 s doubling to 30 s), so nothing blocks the daemon or the
/// concurrency pool, and no message crosses threads on its way out.
public final class MQTTPublisher: @unchecked Sendable {
  // @unchecked: `handle` and the `Link` state are used by the publisher's thread alone (the
  // callbacks run on it, inside `mosquitto_loop`); the rest is immutable or locked.
  /// The settings.
  public let settings: MQTTSettings
  private let database: Database
  private let log: @Sendable (LogPriority, String) -> Void
  private let onWaypoints: @Sendable ([Place]) -> Void
  private let signals = BlockingQueue<Signal>(capacity: 1024)
  private let connectedFlag = Locked(false)
  private let takenOverFlag = Locked(false)
  private let finished = BlockingQueue<Bool>(capacity: 1)
  private var handle: OpaquePointer?
  private var context: Unmanaged<CallbackContext>?
  private var link = Link()

  /// Messages in flight at once (published, not yet acknowledged).
  static let window = 2048

  enum Signal: Sendable {
    case wake
    case stop
  }

  /// The connection's state, owned by the publisher's thread.
  private struct Link {
    var socketUp = false
    var connected = false
    var inFlight: [Int32: Int64] = [:]
    var lastSent: Int64 = 0
    var acknowledged: [Int64] = []
    var backoffSeconds = 1.0
    var nextAttempt = ContinuousClock.now
    var lastFailure = ""
    /// Whether the broker closed the connection because another client connected with the same
    /// client id (MQTT 5 reason 142), and how many times in a row that happened.
    var takenOver = false
    var takeovers = 0
    /// Connections in a row that the broker closed while the next one was accepted at once: what
    /// a broker that does not give MQTT 5's reason (mosquitto 2.0) does when another client
    /// takes the session.
    var peerCloses = 0
    var connectedSince = ContinuousClock.now
    /// Whether the session a previous process may have left on the broker was discarded.
    var sessionReset = false
    /// Whether the outbox may hold rows not yet sent (set by a wake-up or a reconnect, cleared
    /// when a read reaches its end), so that an idle link does not read the store every turn.
    var mayHaveMore = true
    /// Commands ignored because the link may not take them.
    var ignoredCommands = 0

    mutating func reset() {
      connected = false
      inFlight.removeAll()
      lastSent = 0
      mayHaveMore = true
    }
  }

  /// Why the client could not be set up.
  public struct SetupError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    public var description: String
  }

  /// Prepares a publisher; ``start()`` connects.
  ///
  /// - Parameters:
  ///   - settings: the broker and the topics.
  ///   - database: a connection of its own to the store (the outbox).
  ///   - log: where its log lines go.
  ///   - onWaypoints: called (on the publisher's thread) with the places of a valid
  ///     `setWaypoints` command.
  public init(
    settings: MQTTSettings, database: Database,
    log: @escaping @Sendable (LogPriority, String) -> Void,
    onWaypoints: @escaping @Sendable ([Place]) -> Void = { _ in }
  ) {
    self.settings = settings
    self.database = database
    self.log = log
    self.onWaypoints = onWaypoints
  }

  deinit {
    if let handle { mosquitto_destroy(handle) }
    context?.release()
  }

  /// Whether the broker has accepted the connection (and not dropped it since).
  public var isConnected: Bool { connectedFlag.withLock { $0 } }

  /// Whether the broker ever closed this client's session because another client connected
  /// with the same client id.
  public var wasTakenOver: Bool { takenOverFlag.withLock { $0 } }

  /// Seconds a broker keeps this client's session (and the QoS 2 messages in it) while the link
  /// is down: 7 days.
  static let sessionExpirySeconds: UInt32 = 7 * 86_400

  /// Creates the client (last will, TLS, credentials) and starts the publisher's thread, which
  /// connects.
  ///
  /// - Throws: ``SetupError`` for settings libmosquitto refuses (a CA file it cannot use, say).
  public func start() throws(SetupError) {
    mosquitto_lib_init()
    // This connection only deletes acknowledged rows: a deletion lost in a power cut sends a
    // message once more, so its commits need not wait for the disk.
    try? database.allowLosingRecentCommits()
    let context = Unmanaged.passRetained(CallbackContext(publisher: self))
    self.context = context
    // A persistent session (clean start off): across a broker restart or a network cut the
    // broker keeps the QoS 2 state of each message, libmosquitto resends with the same packet
    // id, and the broker recognises the resend.
    guard let handle = mosquitto_new(settings.clientID, false, context.toOpaque()) else {
      throw SetupError(description: "mosquitto_new failed: \(String(cString: strerror(errno)))")
    }
    self.handle = handle
    try configure(handle)
    mosquitto_connect_v5_callback_set(handle, onConnect)
    mosquitto_disconnect_v5_callback_set(handle, onDisconnect)
    mosquitto_publish_callback_set(handle, onPublish)
    mosquitto_message_callback_set(handle, onMessage)
    let will = #"{"_type":"lwt","tst":\#(Int(Date().timeIntervalSince1970))}"#
    try check(
      mosquitto_will_set(handle, settings.topic, Int32(will.utf8.count), will, 1, false),
      "the last will")
    if let warning = settings.plaintextWarning { log(.warning, warning) }
    if !settings.acceptsCommands {
      log(
        .notice,
        "MQTT: commands on \(settings.topic)/cmd are ignored: plaintext link to a broker "
          + "that is not on a loopback address (mqtt-remote-commands = yes takes them)")
    }
    DetachedThread.start(name: "mqtt") { [self] in
      if let handle = self.handle { run(handle) }
    }
  }

  /// MQTT 5 (for the broker's reasons, "session taken over" among them), credentials and TLS.
  private func configure(_ handle: OpaquePointer) throws(SetupError) {
    try check(
      mosquitto_int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5),
      "MQTT 5")
    if let username = settings.username {
      try check(mosquitto_username_pw_set(handle, username, settings.password), "the credentials")
    }
    if settings.usesTLS {
      let anchors = settings.trustAnchors
      let what = anchors.file ?? anchors.directory ?? ""
      try check(
        mosquitto_tls_set(handle, anchors.file, anchors.directory, nil, nil, nil),
        "TLS with the CAs of \(what)")
      // Verify the certificate and that it names the broker (libmosquitto's default, made
      // explicit).
      try check(mosquitto_tls_opts_set(handle, 1, nil, nil), "TLS peer verification")
      try check(mosquitto_tls_insecure_set(handle, false), "TLS host name verification")
    }
  }

  /// Tells the publisher's thread that new rows wait.
  public func wake() { signals.push(.wake) }

  /// Waits at most `timeout` for the outbox to empty (for `waymark replay --mqtt`), or until
  /// another client took the session (``wasTakenOver``).
  ///
  /// - Returns: whether it is empty.
  public func waitUntilEmpty(timeout: Duration) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if (try? database.read { try OutboxRepository($0).isEmpty() }) == true { return true }
      if wasTakenOver { return false }
      usleep(20_000)
    }
    return false
  }

  /// Disconnects (the broker does not send the last will for a clean disconnect) and stops the
  /// thread. Unacknowledged messages stay in the outbox for the next start.
  public func stop() {
    guard handle != nil else { return }
    signals.push(.stop)
    _ = finished.pop()
  }

  private var endpoint: String { "\(settings.host):\(settings.port)" }

  private func check(_ status: Int32, _ what: String) throws(SetupError) {
    guard status == MOSQ_ERR_SUCCESS.rawValue else {
      throw SetupError(description: "MQTT: cannot set up \(what): \(describe(status))")
    }
  }

  private func describe(_ status: Int32) -> String {
    if status == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
    return String(cString: mosquitto_strerror(status))
  }

  // MARK: The publisher's thread

  private func run(_ handle: OpaquePointer) {
    let clock = ContinuousClock()
    var stopping = false
    while !stopping {
      if !link.socketUp && clock.now >= link.nextAttempt { connect(handle) }
      if link.socketUp {
        let status = mosquitto_loop(handle, 20, 1)
        if status != MOSQ_ERR_SUCCESS.rawValue { lost(handle, status) }
        while let signal = signals.popIfAvailable() {
          switch signal {
          case .stop: stopping = true
          case .wake: link.mayHaveMore = true
          }
        }
      } else {
        let wait = max(1, min(1000, Int(clock.now.duration(to: link.nextAttempt).seconds * 1000)))
        switch signals.pop(timeoutMilliseconds: wait) {
        case .stop?: stopping = true
        case .wake?: link.mayHaveMore = true
        case nil: break
        }
      }
      removeAcknowledged()
      if !stopping { publish(handle) }
    }
    if link.socketUp {
      mosquitto_disconnect(handle)
      _ = mosquitto_loop(handle, 100, 1)
      removeAcknowledged()
    }
    finished.push(true)
  }

  private func connect(_ handle: OpaquePointer) {
    if !link.sessionReset {
      // What a killed predecessor left in flight: discarded, so that its packet ids cannot
      // collide with ours. A QoS 2 message is released to subscribers at PUBREL, so one whose
      // PUBREL was not sent was not delivered; it is still in the outbox and goes again.
      guard resetSession() else { return }
      link.sessionReset = true
    }
    // Every connection (the first and each reconnection) asks the broker to keep the session.
    var properties: OpaquePointer?
    mosquitto_property_add_int32(
      &properties, Int32(MQTT_PROP_SESSION_EXPIRY_INTERVAL.rawValue), Self.sessionExpirySeconds)
    let status = mosquitto_connect_bind_v5(
      handle, settings.host, Int32(settings.port), 30, nil, properties)
    mosquitto_property_free_all(&properties)
    if status == MOSQ_ERR_SUCCESS.rawValue {
      link.socketUp = true
      return
    }
    failed("cannot connect to \(endpoint): \(describe(status))")
  }

  /// Connects once with a clean start and the same client id, and disconnects: the broker
  /// discards the session a previous process left.
  ///
  /// - Returns: whether it worked (a failure is logged and retried like a connection).
  private func resetSession() -> Bool {
    guard let cleaner = mosquitto_new(settings.clientID, true, nil) else {
      failed("cannot reset the session: \(String(cString: strerror(errno)))")
      return false
    }
    defer { mosquitto_destroy(cleaner) }
    do {
      try configure(cleaner)
    } catch {
      failed(error.description)
      return false
    }
    let status = mosquitto_connect(cleaner, settings.host, Int32(settings.port), 30)
    guard status == MOSQ_ERR_SUCCESS.rawValue else {
      failed("cannot connect to \(endpoint): \(describe(status))")
      return false
    }
    // Until the CONNACK (a refusal is found again, and logged, by the real connection).
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    var answered = false
    mosquitto_connect_callback_set(cleaner) { cleaner, _, _ in mosquitto_disconnect(cleaner) }
    var failure = "no answer to a session reset"
    while clock.now < deadline {
      let loop = mosquitto_loop(cleaner, 50, 1)
      if loop == MOSQ_ERR_NO_CONN.rawValue { answered = true }
      if loop != MOSQ_ERR_SUCCESS.rawValue {
        if !answered { failure = describe(loop) }
        break
      }
    }
    if !answered { failed("cannot connect to \(endpoint): \(failure)") }
    return answered
  }

  /// Schedules the next attempt after the backoff and logs a new kind of failure once. (A
  /// connection attempt that fails ends a streak of connections closed by the broker: that is
  /// a broker going away, not another client taking the session.)
  private func failed(_ reason: String, endsStreak: Bool = true) {
    if endsStreak { link.peerCloses = 0 }
    if reason != link.lastFailure {
      log(.warning, "MQTT: \(reason); retrying")
      link.lastFailure = reason
    }
    link.nextAttempt = ContinuousClock.now + .milliseconds(Int64(link.backoffSeconds * 1000))
    link.backoffSeconds = min(link.backoffSeconds * 2, 30)
  }

  private func lost(_ handle: OpaquePointer, _ status: Int32) {
    link.socketUp = false
    link.connected = false
    let wasConnected = connectedFlag.withLock { flag in
      defer { flag = false }
      return flag
    }
    // Closed by the broker, after an accepted reconnection if this is not the first time.
    // (A connection that lasted a minute starts a new streak.)
    let short = ContinuousClock.now - link.connectedSince < .seconds(60)
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
  private func tookOver(said: Bool) {
    link.takenOver = false
    link.peerCloses = 0
    if ContinuousClock.now - link.connectedSince > .seconds(600) { link.takeovers = 0 }
    link.takeovers += 1
    takenOverFlag.withLock { $0 = true }
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
    link.nextAttempt = ContinuousClock.now + .seconds(delay)
  }

  private func removeAcknowledged() {
    guard !link.acknowledged.isEmpty else { return }
    do {
      try database.write { try OutboxRepository($0).remove(link.acknowledged) }
      link.acknowledged.removeAll(keepingCapacity: true)
    } catch {
      log(.error, "MQTT: cannot remove acknowledged messages from the outbox: \(error)")
    }
  }

  private func publish(_ handle: OpaquePointer) {
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
            mosquitto_publish(
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

  // MARK: Callbacks (on the publisher's thread, inside mosquitto_loop)

  fileprivate func connected(_ status: Int32, flags: Int32) {
    guard status == 0 else {
      let reason =
        switch status {
        case 4, 134: "bad user name or password"
        case 5, 135: "not authorized"
        default: String(cString: mosquitto_reason_string(status))
        }
      log(.error, "MQTT: \(endpoint) refused the connection: \(reason); retrying")
      link.lastFailure = "refused"
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
    link.connectedSince = ContinuousClock.now
    connectedFlag.withLock { $0 = true }
    log(.notice, "MQTT: connected to \(endpoint)")
    if let handle { mosquitto_subscribe(handle, nil, settings.topic + "/cmd", 1) }
  }

  fileprivate func disconnected(_ status: Int32) {
    link.connected = false
    if status == Int32(MQTT_RC_SESSION_TAKEN_OVER.rawValue) { link.takenOver = true }
  }

  fileprivate func published(_ mid: Int32) {
    if let id = link.inFlight.removeValue(forKey: mid) { link.acknowledged.append(id) }
  }

  fileprivate func received(topic: String, payload: [UInt8]) {
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
private final class CallbackContext {
  weak var publisher: MQTTPublisher?

  init(publisher: MQTTPublisher) {
    self.publisher = publisher
  }
}

private func publisher(_ raw: UnsafeMutableRawPointer?) -> MQTTPublisher? {
  guard let raw else { return nil }
  return Unmanaged<CallbackContext>.fromOpaque(raw).takeUnretainedValue().publisher
}

private let onConnect:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, Int32, OpaquePointer?) -> Void =
    { _, context, status, flags, _ in publisher(context)?.connected(status, flags: flags) }

private let onDisconnect:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32, OpaquePointer?) -> Void = {
    _, context, status, _ in publisher(context)?.disconnected(status)
  }

private let onPublish: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = {
  _, context, mid in publisher(context)?.published(mid)
}

private let onMessage:
  @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, UnsafePointer<mosquitto_message>?) ->
    Void = { _, context, message in
      guard let message, let topic = message.pointee.topic else { return }
      let count = Int(message.pointee.payloadlen)
      let payload =
        count > 0 && message.pointee.payload != nil
        ? Array(UnsafeRawBufferPointer(start: message.pointee.payload, count: count)) : []
      publisher(context)?.received(topic: String(cString: topic), payload: payload)
    }
