// Trust boundary of the Traccar link. waymarkd connects out to one server (`traccar = <url>`);
// nothing listens. What it sends: the OsmAnd query of its own fixes (id, time, position, speed,
// course, altitude, accuracy). What it takes in: only the HTTP status of each request (the body is
// discarded unread). Who can read it: the server the operator configured, and anyone on the path
// of a plain `http://` link (warned about at start). HTTPS is verified against the system's CA
// store (or `traccar-cafile`) and the server's host name; libcurl follows no redirect and speaks
// HTTP and HTTPS only.

import CCurl
import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// Sends the store's `osmand` outbox rows to a Traccar server, one request per location, oldest
/// first, through libcurl (loaded at ``start()``).
///
/// Nothing is lost and nothing is reordered: a row is deleted only once the server answered
/// 2xx, and the next row goes only after that; a failure (no connection, a timeout, a 5xx, a 400
/// for a device the server does not know) is retried, the same row, with a growing delay (1 s
/// doubling to 60 s). Across a restart the rows wait in the store. A `kill -9` between the
/// server's answer and the deletion sends that one location again, the only way a point can
/// arrive twice.
///
/// One thread of its own (`traccar`) owns the libcurl handle and does all of this, so a slow
/// server never delays the daemon.
package final class TraccarSender: @unchecked Sendable {
  // @unchecked: `api` and `handle` are written by `start()` before the thread starts and then
  // used by the thread alone; the rest is immutable or thread-safe.
  /// The settings.
  package let settings: TraccarSettings
  private let database: Database
  private let log: @Sendable (LogPriority, String) -> Void
  private let time: TimeSource
  /// "A new row waits", to the sender's thread; closed by ``stop(timeout:)``. Overflow
  /// `.refuse`: one wake-up waiting covers any number (the thread reads the outbox again).
  private let wakes = Channel<Void>(capacity: 1, overflow: .refuse)
  /// The sender's thread: a ``Worker`` whose one job is the sending loop (it waits on ``wakes``
  /// or a retry's due time, not on the worker's queue); ``stop(timeout:)`` finishes it.
  private var worker: Worker<Void>?
  private var api = waymark_curl_api()
  private var handle: OpaquePointer?
  private let sent = Locked(0)

  /// Why the sender cannot start.
  package struct SetupError: Error, Sendable, CustomStringConvertible {
    /// What went wrong.
    package var description: String
  }

  /// What one request came to.
  enum Outcome: Equatable {
    /// The server took the location (2xx).
    case accepted
    /// It did not; retried after a delay.
    case failed(String)
  }

  /// Prepares a sender; ``start()`` loads libcurl and starts its thread. Its retry delays are
  /// measured on `time`.
  package init(
    settings: TraccarSettings, database: Database,
    log: @escaping @Sendable (LogPriority, String) -> Void, time: TimeSource = .system
  ) {
    self.time = time
    self.settings = settings
    self.database = database
    self.log = log
  }

  /// Locations the server accepted since the start.
  package var sentCount: Int { sent.withLock { $0 } }

  /// Loads libcurl (`libcurl.so.4`, Debian's `libcurl4`), sets up its handle, and starts the
  /// thread.
  ///
  /// - Throws: ``SetupError`` when libcurl is not installed or refuses the settings.
  package func start() throws(SetupError) {
    guard waymark_curl_load(&api) != 0 else {
      throw SetupError(
        description: "Traccar: libcurl.so.4 is not installed (apt install libcurl4)")
    }
    // CURL_GLOBAL_ALL (3): what libcurl's own default initialises.
    guard api.global_init(3) == CURLE_OK,
      let raw = api.easy_init()
    else { throw SetupError(description: "Traccar: libcurl could not be initialised") }
    handle = OpaquePointer(raw)
    try configure(raw)
    if let warning = settings.plaintextWarning { log(.warning, warning) }
    let worker = Worker(threadName: "traccar", capacity: 1, overflow: .refuse) { () }
    self.worker = worker
    worker.perform { [self] _ in run() }
  }

  /// Tells the thread that a new row waits.
  package func wake() { wakes.send(()) }

  /// Stops the thread, waiting at most `timeout` for a request in progress (it is bounded by
  /// libcurl's own timeouts, 10 s). Unsent rows stay in the store.
  package func stop(timeout: Duration = .seconds(2)) {
    guard handle != nil else { return }
    wakes.close()
    worker?.finish(.drain, timeoutMilliseconds: Int(saturating: timeout.seconds * 1000))
  }

  private func configure(_ raw: UnsafeMutableRawPointer) throws(SetupError) {
    func set(_ option: CURLoption, _ value: Int) throws(SetupError) {
      guard waymark_curl_setopt_long(&api, raw, option, value) == CURLE_OK else {
        throw SetupError(description: "Traccar: libcurl refused option \(option.rawValue)")
      }
    }
    func set(_ option: CURLoption, _ value: String) throws(SetupError) {
      let status = value.withCString { waymark_curl_setopt_string(&api, raw, option, $0) }
      guard status == CURLE_OK else {
        throw SetupError(description: "Traccar: libcurl refused option \(option.rawValue)")
      }
    }
    try set(CURLOPT_NOSIGNAL, 1)
    try set(CURLOPT_CONNECTTIMEOUT_MS, 5000)
    try set(CURLOPT_TIMEOUT_MS, 10_000)
    try set(CURLOPT_FOLLOWLOCATION, 0)
    try set(CURLOPT_PROTOCOLS_STR, "http,https")
    try set(CURLOPT_SSL_VERIFYPEER, 1)
    try set(CURLOPT_SSL_VERIFYHOST, 2)
    if let caFile = settings.caFile {
      try set(CURLOPT_CAINFO, caFile)
    } else if access(TraccarSettings.systemCAFile, R_OK) == 0 {
      try set(CURLOPT_CAINFO, TraccarSettings.systemCAFile)
    }
    try set(CURLOPT_USERAGENT, "waymarkd/\(WaymarkRelease.version)")
    // A POST with the parameters in the query and an empty body, as Traccar's phone client sends.
    try set(CURLOPT_POSTFIELDSIZE, 0)
    try set(CURLOPT_COPYPOSTFIELDS, "")
    guard waymark_curl_discard_body(&api, raw) == CURLE_OK else {
      throw SetupError(description: "Traccar: libcurl refused the response handler")
    }
  }

  private func run() {
    let clock = time
    var waiting: [(id: Int64, query: String)] = []
    var delay = 1.0
    var nextAttempt = clock.now
    var failures = 0
    var stopping = false
    while !stopping {
      if waiting.isEmpty {
        do {
          waiting = try database.read { try OutboxRepository($0).nextOsmAnd(limit: 64) }
        } catch {
          log(.error, "Traccar: cannot read the outbox: \(error)")
        }
      }
      let now = clock.now
      if waiting.isEmpty || now < nextAttempt {
        // Nothing to send, or a retry not yet due: sleep until woken, stopped or due.
        let wait =
          waiting.isEmpty
          ? 60_000 : max(1, Int(saturating: now.duration(to: nextAttempt).seconds * 1000))
        _ = wakes.receive(timeoutMilliseconds: wait)
        stopping = wakes.isClosed
        continue
      }
      _ = wakes.receiveIfAvailable()
      if wakes.isClosed { break }
      let row = waiting[0]
      switch send(row.query) {
      case .accepted:
        do {
          try database.write { try OutboxRepository($0).remove([row.id]) }
          waiting.removeFirst()
          sent.withLock { $0 += 1 }
        } catch {
          log(.error, "Traccar: cannot remove a sent location from the outbox: \(error)")
        }
        if failures > 0 {
          log(.notice, "Traccar: \(settings.host) takes locations again")
          failures = 0
        }
        delay = 1
      case .failed(let reason):
        failures += 1
        // Logged at the 1st, 2nd, 4th, 8th … failure in a row: an outage does not flood the log.
        if failures & (failures - 1) == 0 {
          log(
            .warning,
            "Traccar: \(reason); retrying in \(Int(delay)) s (\(failures) failure(s) in a row)")
        }
        nextAttempt = clock.now + .seconds(delay)
        delay = min(60, delay * 2)
      }
    }
  }

  /// One request: `POST <url>?<query>`.
  func send(_ query: String) -> Outcome {
    guard let handle else { return .failed("not started") }
    let raw = UnsafeMutableRawPointer(handle)
    let separator = settings.url.contains("?") ? "&" : "?"
    let url = settings.url + separator + query
    let set = url.withCString { waymark_curl_setopt_string(&api, raw, CURLOPT_URL, $0) }
    guard set == CURLE_OK else { return .failed("libcurl refused the URL") }
    let status = api.easy_perform(raw)
    guard status == CURLE_OK else {
      let reason = api.easy_strerror(status).map { String(cString: $0) } ?? "error \(status)"
      return .failed("cannot reach \(settings.host): \(reason)")
    }
    let code = waymark_curl_response_code(&api, raw)
    switch code {
    case 200..<300: return .accepted
    case 400:
      return .failed(
        "\(settings.host) refused the location (HTTP 400): is the device '\(settings.deviceID)' "
          + "registered on the server?")
    default: return .failed("\(settings.host) answered HTTP \(code)")
    }
  }
}
