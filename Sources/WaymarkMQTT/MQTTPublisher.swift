// Trust boundary of the MQTT link. Waymark connects out to one broker (`mqtt = host[:port]`);
// nothing listens. What it sends: OwnTracks JSON of its own fixes and place events. What it takes
// in: only `<topic>/cmd`, and of that only `setWaypoints`, checked like a places file (a bad
// command is logged and ignored). Anyone who may publish to that topic on the broker can change
// the places: protect it with the broker's ACLs (and TLS, `mqtt-cafile`, with a user and password).

import CMosquitto
import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// Publishes the store's outbox to an MQTT broker through libmosquitto, and reads place commands.
///
/// Nothing is lost: every message is a row of the outbox (written in the same transaction as
/// what it reports); a row is deleted only when the broker acknowledges it (PUBACK at QoS 1).
/// When the connection drops, what was in flight is sent again after the reconnect (at least
/// once: transitions carry an `_id` for de-duplication). libmosquitto's own thread runs the
/// network loop and reconnects with backoff (1 s doubling to 30 s); a thread of ours reads the
/// outbox and deletes acknowledged rows, so neither blocks the daemon or the concurrency pool.
public final class MQTTPublisher: @unchecked Sendable {
  // @unchecked: `handle` is used from libmosquitto's thread and the drain thread, which
  // libmosquitto allows (its calls are thread safe with the threaded loop); the rest is owned by
  // the drain thread or immutable.
  /// How important a log line is.
  public enum Severity: Sendable {
    case error, warning, notice, info
  }

  /// The settings.
  public let settings: MQTTSettings
  private let database: Database
  private let log: @Sendable (Severity, String) -> Void
  private let onWaypoints: @Sendable ([Place]) -> Void
  private let signals = BlockingQueue<Signal>(capacity: 1 << 20)
  private let connectedFlag = Locked(false)
  private let finished = BlockingQueue<Bool>(capacity: 1)
  private var handle: OpaquePointer?
  private var context: Unmanaged<CallbackContext>?

  /// Messages in flight at once (published, not yet acknowledged).
  static let window = 512

  enum Signal: Sendable {
    case wake
    case connected
    case disconnected
    case acknowledged(Int32)
    case stop
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
  ///   - onWaypoints: called (on libmosquitto's thread) with the places of a valid
  ///     `setWaypoints` command.
  public init(
    settings: MQTTSettings, database: Database,
    log: @escaping @Sendable (Severity, String) -> Void,
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

  /// Creates the client (last will, TLS, credentials), starts libmosquitto's loop and the
  /// outbox thread, and connects in the background.
  ///
  /// - Throws: ``SetupError`` for settings libmosquitto refuses (a CA file it cannot use, say).
  public func start() throws(SetupError) {
    mosquitto_lib_init()
    let context = Unmanaged.passRetained(CallbackContext(publisher: self))
    self.context = context
    guard let handle = mosquitto_new(settings.clientID, true, context.toOpaque()) else {
      throw SetupError(description: "mosquitto_new failed: \(String(cString: strerror(errno)))")
    }
    self.handle = handle
    mosquitto_connect_callback_set(handle, onConnect)
    mosquitto_disconnect_callback_set(handle, onDisconnect)
    mosquitto_publish_callback_set(handle, onPublish)
    mosquitto_message_callback_set(handle, onMessage)
    mosquitto_reconnect_delay_set(handle, 1, 30, true)
    let will = #"{"_type":"lwt","tst":\#(Int(Date().timeIntervalSince1970))}"#
    try check(
      mosquitto_will_set(handle, settings.topic, Int32(will.utf8.count), will, 1, false),
      "the last will")
    if let username = settings.username {
      try check(mosquitto_username_pw_set(handle, username, settings.password), "the credentials")
    }
    if let caFile = settings.caFile {
      try check(mosquitto_tls_set(handle, caFile, nil, nil, nil, nil), "TLS with \(caFile)")
    }
    try check(mosquitto_loop_start(handle), "the network thread")
    let status = mosquitto_connect_async(handle, settings.host, Int32(settings.port), 30)
    if status != MOSQ_ERR_SUCCESS.rawValue {
      // libmosquitto retries by itself (a broker that is down, a name not yet resolvable).
      log(.warning, "MQTT: cannot connect to \(endpoint) yet: \(describe(status)); retrying")
    }
    DetachedThread.start(name: "mqtt-outbox") { [self] in drain() }
    wake()
  }

  /// Tells the outbox thread that new rows wait.
  public func wake() { signals.push(.wake) }

  /// Waits at most `timeout` for the outbox to empty (for `waymark replay --mqtt`).
  ///
  /// - Returns: whether it is empty.
  public func waitUntilEmpty(timeout: Duration) -> Bool {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if (try? database.read { try OutboxRepository($0).count() }) == 0 { return true }
      usleep(20_000)
    }
    return false
  }

  /// Disconnects (the broker does not send the last will for a clean disconnect) and stops both
  /// threads. Unacknowledged messages stay in the outbox for the next start.
  public func stop() {
    guard let handle else { return }
    signals.push(.stop)
    _ = finished.pop()
    mosquitto_disconnect(handle)
    mosquitto_loop_stop(handle, false)
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

  // MARK: The outbox thread

  private func drain() {
    var connected = false
    var inFlight: [Int32: Int64] = [:]
    var lastSent: Int64 = 0
    var acknowledged: [Int64] = []
    var stopping = false
    while !stopping {
      var signal = signals.pop()
      while true {
        switch signal {
        case .wake: break
        case .connected:
          connected = true
          inFlight.removeAll()
          lastSent = 0
        case .disconnected:
          connected = false
          inFlight.removeAll()
          lastSent = 0
        case .acknowledged(let mid):
          if let id = inFlight.removeValue(forKey: mid) { acknowledged.append(id) }
        case .stop:
          stopping = true
        }
        guard let next = signals.popIfAvailable() else { break }
        signal = next
      }
      if !acknowledged.isEmpty {
        do {
          try database.write { try OutboxRepository($0).remove(acknowledged) }
          acknowledged.removeAll(keepingCapacity: true)
        } catch {
          log(.error, "MQTT: cannot remove acknowledged messages from the outbox: \(error)")
        }
      }
      guard connected, !stopping, inFlight.count < Self.window, let handle else { continue }
      let batch: [OutboxMessage]
      do {
        batch = try database.read {
          try OutboxRepository($0).next(after: lastSent, limit: Self.window - inFlight.count)
        }
      } catch {
        log(.error, "MQTT: cannot read the outbox: \(error)")
        continue
      }
      for message in batch {
        var mid: Int32 = 0
        let payload = Array(message.payload.utf8)
        let status = payload.withUnsafeBytes { raw in
          mosquitto_publish(
            handle, &mid, message.topic, Int32(raw.count), raw.baseAddress, Int32(message.qos),
            message.retain)
        }
        guard status == MOSQ_ERR_SUCCESS.rawValue else {
          // Not connected after all: the reconnect sends everything again.
          break
        }
        inFlight[mid] = message.id
        lastSent = message.id
      }
    }
    finished.push(true)
  }

  // MARK: From libmosquitto's thread

  fileprivate func connected(_ status: Int32) {
    guard status == 0 else {
      let reason =
        switch status {
        case 4: "bad user name or password"
        case 5: "not authorized"
        default: String(cString: mosquitto_connack_string(status))
        }
      log(.error, "MQTT: \(endpoint) refused the connection: \(reason); retrying")
      return
    }
    connectedFlag.withLock { $0 = true }
    log(.notice, "MQTT: connected to \(endpoint)")
    if let handle {
      mosquitto_subscribe(handle, nil, settings.topic + "/cmd", 1)
    }
    signals.push(.connected)
  }

  fileprivate func disconnected(_ status: Int32) {
    let was = connectedFlag.withLock { state in
      defer { state = false }
      return state
    }
    if was {
      log(.warning, "MQTT: disconnected from \(endpoint): \(describe(status)); reconnecting")
    }
    signals.push(.disconnected)
  }

  fileprivate func published(_ mid: Int32) { signals.push(.acknowledged(mid)) }

  fileprivate func received(topic: String, payload: [UInt8]) {
    guard topic == settings.topic + "/cmd" else { return }
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

private let onConnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void = {
  _, context, status in publisher(context)?.connected(status)
}

private let onDisconnect: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?, Int32) -> Void =
  { _, context, status in publisher(context)?.disconnected(status) }

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
