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
package final class MQTTPublisher: @unchecked Sendable {
  // @unchecked: `handle` and the `Link` state are used by the publisher's thread alone (the
  // callbacks run on it, inside `mosquitto_loop`); the rest is immutable or locked.
  /// The settings.
  package let settings: MQTTSettings
  let database: Database
  let log: @Sendable (LogPriority, String) -> Void
  let onWaypoints: @Sendable ([Place]) -> Void
  /// "New rows wait", to the publisher's thread; closed by ``stop()``. Overflow `.refuse`: one
  /// wake-up waiting covers any number (the thread reads the outbox to its end).
  let wakes = Channel<Void>(capacity: 1, overflow: .refuse)
  let takenOverFlag = Locked(false)
  /// The publisher's thread: a ``Worker`` whose one job is libmosquitto's network loop. It
  /// cannot take each message as a job: libmosquitto owns the loop (`mosquitto_loop` must run
  /// every few milliseconds for keep-alives, acknowledgements and resends), so the thread polls
  /// ``wakes`` between turns instead of sleeping in the worker's queue; the worker gives it its
  /// name and ``stop()`` its end (`finish(.drain)` returns once the thread ended).
  var worker: Worker<Void>?
  /// Pulsed by the publisher's thread when the outbox shrank or the session was taken over:
  /// what ``waitUntilEmpty(timeout:)`` waits on. Overflow `.refuse`: one pulse waiting is enough
  /// (the waiter reads the outbox again).
  let progress = Channel<Void>(capacity: 1, overflow: .refuse)
  var handle: OpaquePointer?
  /// What proves a broker on this machine is the broker (``LocalBroker``).
  let localBroker: LocalBroker
  private var context: Unmanaged<CallbackContext>?
  var link: Link
  /// The publisher's time: back-off, takeovers and waits on its monotonic reading, the last
  /// will's `tst` on the wall clock.
  let time: TimeSource

  /// Messages in flight at once (published, not yet acknowledged).
  static let window = 2048

  /// Why the client could not be set up.
  package struct SetupError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package var description: String
  }

  /// Prepares a publisher; ``start()`` connects.
  ///
  /// - Parameters:
  ///   - settings: the broker and the topics.
  ///   - database: the store (the outbox); the daemon's one `Database`, whose writer also runs
  ///     the publisher's deletions.
  ///   - log: where its log lines go.
  ///   - onWaypoints: called (on the publisher's thread) with the places of a valid
  ///     `setWaypoints` command.
  ///   - time: what back-off and waits are measured on, and what dates the last will.
  package init(
    settings: MQTTSettings, database: Database,
    log: @escaping @Sendable (LogPriority, String) -> Void,
    onWaypoints: @escaping @Sendable ([Place]) -> Void = { _ in },
    time: TimeSource = .system
  ) {
    self.time = time
    link = Link(now: time.now)
    self.settings = settings
    self.database = database
    self.log = log
    self.onWaypoints = onWaypoints
    localBroker = LocalBroker(userName: settings.brokerUser)
  }

  deinit {
    if let handle { MosquittoLibrary.loaded.destroy(handle) }
    context?.release()
  }

  /// Whether the broker ever closed this client's session because another client connected
  /// with the same client id.
  package var wasTakenOver: Bool { takenOverFlag.withLock { $0 } }

  /// Seconds a broker keeps this client's session (and the QoS 2 messages in it) while the link
  /// is down: 7 days.
  static let sessionExpirySeconds: UInt32 = 7 * 86_400

  /// Loads libmosquitto (`libmosquitto.so.1`, Debian's `libmosquitto1`), creates the client
  /// (last will, TLS, credentials) and starts the publisher's thread, which connects.
  ///
  /// - Throws: ``SetupError`` when libmosquitto is not installed, or for settings it refuses (a
  ///   CA file it cannot use, say).
  package func start() throws(SetupError) {
    guard let library = MosquittoLibrary.shared else {
      throw SetupError(
        description: "MQTT: libmosquitto.so.1 is not installed (apt install libmosquitto1)")
    }
    _ = library.lib_init()
    let context = Unmanaged.passRetained(CallbackContext(publisher: self))
    self.context = context
    // A persistent session (clean start off): across a broker restart or a network cut the
    // broker keeps the QoS 2 state of each message, libmosquitto resends with the same packet
    // id, and the broker recognises the resend.
    guard let handle = MosquittoLibrary.loaded.new(settings.clientID, false, context.toOpaque())
    else {
      throw SetupError(description: "mosquitto_new failed: \(String(cString: strerror(errno)))")
    }
    self.handle = handle
    try configure(handle)
    MosquittoLibrary.loaded.connect_v5_callback_set(handle, connectCallback)
    MosquittoLibrary.loaded.disconnect_v5_callback_set(handle, disconnectCallback)
    MosquittoLibrary.loaded.publish_callback_set(handle, publishCallback)
    MosquittoLibrary.loaded.message_callback_set(handle, messageCallback)
    // One will per connection: Home Assistant's availability when its discovery is on (retained,
    // so that Home Assistant started later sees it), else OwnTracks' lwt.
    if settings.publishesHomeAssistant {
      let topic = settings.homeAssistant.availabilityTopic
      let will = HomeAssistant.offline
      try check(
        MosquittoLibrary.loaded.will_set(handle, topic, Int32(will.utf8.count), will, 1, true),
        "the last will")
    } else {
      let will = #"{"_type":"lwt","tst":\#(Int(saturating: time.date().timeIntervalSince1970))}"#
      try check(
        MosquittoLibrary.loaded.will_set(
          handle, settings.topic, Int32(will.utf8.count), will, 1, false),
        "the last will")
    }
    if let warning = settings.plaintextWarning { log(.warning, warning) }
    if !settings.acceptsCommands {
      log(
        .notice,
        "MQTT: commands on \(settings.topic)/cmd are ignored: plaintext link to a broker "
          + "that is not on a loopback address (mqtt-remote-commands = yes takes them)")
    }
    let worker = Worker(threadName: "mqtt", capacity: 1, overflow: .refuse) { () }
    self.worker = worker
    worker.perform { [self] _ in
      if let handle = self.handle { run(handle) }
    }
  }

  /// MQTT 5 (for the broker's reasons, "session taken over" among them), credentials and TLS.
  func configure(_ handle: OpaquePointer) throws(SetupError) {
    try check(
      MosquittoLibrary.loaded.int_option(handle, MOSQ_OPT_PROTOCOL_VERSION, MQTT_PROTOCOL_V5),
      "MQTT 5")
    if let username = settings.username {
      try check(
        MosquittoLibrary.loaded.username_pw_set(handle, username, settings.password),
        "the credentials")
    }
    if settings.usesTLS {
      let anchors = settings.trustAnchors
      let what = anchors.file ?? anchors.directory ?? ""
      try check(
        MosquittoLibrary.loaded.tls_set(handle, anchors.file, anchors.directory, nil, nil, nil),
        "TLS with the CAs of \(what)")
      // Verify the certificate and that it names the broker (libmosquitto's default, made
      // explicit).
      try check(MosquittoLibrary.loaded.tls_opts_set(handle, 1, nil, nil), "TLS peer verification")
      try check(
        MosquittoLibrary.loaded.tls_insecure_set(handle, false), "TLS host name verification")
    }
  }

  /// Tells the publisher's thread that new rows wait.
  package func wake() { wakes.send(()) }

  /// Waits at most `timeout` for the outbox to empty (for `waymark replay --mqtt`), or until
  /// another client took the session (``wasTakenOver``).
  ///
  /// Blocks the calling thread on a condition that the publisher's thread signals when it
  /// removes acknowledged messages or loses the session: no polling.
  ///
  /// - Returns: whether it is empty.
  package func waitUntilEmpty(timeout: Duration) -> Bool {
    let clock = time
    let deadline = clock.now + timeout
    while true {
      if (try? database.read { try OutboxRepository($0).isEmpty() }) == true { return true }
      if wasTakenOver { return false }
      let left = clock.now.duration(to: deadline)
      guard left > .zero else { return false }
      _ = progress.receive(
        timeoutMilliseconds: max(1, Int(saturating: (left.seconds * 1000).rounded(.up))))
    }
  }

  /// Disconnects (the broker does not send the last will for a clean disconnect) and stops the
  /// thread. Unacknowledged messages stay in the outbox for the next start.
  package func stop() {
    guard handle != nil else { return }
    wakes.close()
    worker?.finish(.drain)
  }

  var endpoint: String { settings.endpoint }

  func check(_ status: Int32, _ what: String) throws(SetupError) {
    guard status == MOSQ_ERR_SUCCESS.rawValue else {
      throw SetupError(description: "MQTT: cannot set up \(what): \(describe(status))")
    }
  }

  func describe(_ status: Int32) -> String {
    if status == MOSQ_ERR_ERRNO.rawValue { return String(cString: strerror(errno)) }
    return MosquittoLibrary.loaded.strerror(status).map { String(cString: $0) } ?? "error \(status)"
  }
}
