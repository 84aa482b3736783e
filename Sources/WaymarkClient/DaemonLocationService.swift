import FoundationEssentials
import Glibc
import WaymarkCore

/// `LocationManager` through `waymarkd`: one connection to the daemon's socket that gives a
/// `FixSource` (the daemon's TPVs, under this process's grant) and the daemon's answer for
/// this process (``authorizationState``). The `Waymark` module adds the `AuthorizationCenter`
/// and the manager on top (`authorization`, `makeManager(clock:)`); this module is only the
/// client side of the socket, so that an application never links the daemon's server.
///
/// ```swift
/// let manager = try LocationManager.throughDaemon()      // or DaemonLocationService()
/// if await manager.requestWhenInUseAuthorization().isAuthorized {   // the daemon's agent asks
///   manager.startUpdatingLocation()
///   for await location in manager.locations { print(location.coordinate) }
/// }
/// ```
///
/// Every other message the daemon sends arrives typed as well: ``messages`` (all of them, as
/// ``DaemonMessage``), ``placeEvents`` (`ARRIVAL`/`DEPARTURE`) and ``visits`` (`VISIT`), both
/// for an `always` grant with full accuracy, ``errors`` (`ERROR`), ``status(timeout:)`` (`STATUS`) and ``version``
/// (`VERSION`).
///
/// The daemon identifies this process itself (`<user>:<exe>`, ``clientID``); grants are changed
/// with `waymark auth` or by an agent, never from here: the center's store reads the daemon's
/// answer and ignores writes. A request without a grant goes to the daemon (`REQUEST`), which
/// asks an agent of this user; "allow once" lasts as long as this connection. When the daemon
/// closes the connection, the source reports it unreachable (the manager's status becomes
/// `restricted`).
public final class DaemonLocationService: Sendable {
  /// The socket.
  public let socketPath: String
  /// This process as the daemon names it (`<user>:<exe>`): the manager's client id.
  public let clientID: String
  private let connection: BrokerConnection
  /// The daemon's `VERSION`: its release and protocol version (major
  /// ``DaemonMessage/protocolMajor``).
  public let version: DaemonMessage.Version
  private let fixes = Broadcast<Fix>(replaysLatest: false, bufferingNewest: 64)
  private let events = Broadcast<PlaceEvent>(replaysLatest: false, bufferingNewest: 256)
  private let stays = Broadcast<Stay>(replaysLatest: false, bufferingNewest: 256)
  private let errorReports = Broadcast<String>(replaysLatest: false, bufferingNewest: 64)
  private let everything = Broadcast<DaemonMessage>(replaysLatest: false, bufferingNewest: 256)
  private let healthReports = Broadcast<SourceHealth>()
  private let state = Locked(State())
  /// What the `Waymark` module attaches to this connection (its authorization center), made
  /// once and kept for the connection's life.
  package let attachment = Locked<(any Sendable)?>(nil)
  /// Called after each `AUTHORIZATION` and when the connection ends (the `Waymark` module's
  /// center re-reads the answer).
  package let authorizationChanged = Locked<(@Sendable () -> Void)?>(nil)

  private struct State {
    var authorization = AuthorizationState(status: .notDetermined)
    /// Iterations of the fix source, of ``placeEvents`` and of ``visits``: the `WATCH` in
    /// force follows them.
    var watchers: [Interest: Int] = [:]
    /// The `WATCH` last sent: the interests it asked for (empty: not watching).
    var sentWatch: Set<Interest> = []
    var requestWaiters: [CheckedContinuation<AuthorizationState, Never>] = []
  }

  /// Whether a socket file exists at `path` (the daemon may still not answer).
  public static func socketExists(at path: String = BrokerConnection.defaultPath) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
  }

  /// The daemon's service when a socket exists at `path` and the daemon answers (its `VERSION`
  /// of protocol major ``DaemonMessage/protocolMajor`` and an `AUTHORIZATION`, within
  /// `timeout`), else `nil`: a socket file nobody listens on (a daemon that died) counts as
  /// absent.
  public static func answering(
    at path: String = BrokerConnection.defaultPath, timeout: Duration = .seconds(5)
  ) async -> DaemonLocationService? {
    guard socketExists(at: path) else { return nil }
    return try? await DaemonLocationService(socketPath: path, timeout: timeout)
  }

  /// Connects to the daemon and waits for its `VERSION` and first `AUTHORIZATION` (at most
  /// `timeout`).
  ///
  /// - Throws: ``BrokerError`` when the daemon cannot be reached, does not answer, or speaks a
  ///   protocol major version other than ``DaemonMessage/protocolMajor``.
  public init(
    socketPath: String = BrokerConnection.defaultPath, timeout: Duration = .seconds(5)
  ) async throws {
    self.socketPath = socketPath
    connection = try BrokerConnection(path: socketPath)
    var messages = connection.messages().makeAsyncIterator()
    var first: DaemonMessage.Authorization?
    var version: DaemonMessage.Version?
    let deadline = Task { [connection] in
      try await Task.sleep(for: timeout)
      connection.close()
    }
    while first == nil, let message = await messages.next() {
      switch DaemonMessage.parse(message) {
      case .success(.version(let said)): version = said
      case .success(.authorization(let said)): first = said
      default: continue
      }
    }
    deadline.cancel()
    guard let first, let version else {
      connection.close()
      throw BrokerError("waymarkd at \(socketPath) did not say who this process is")
    }
    guard version.protocolMajor == DaemonMessage.protocolMajor else {
      connection.close()
      throw BrokerError(
        "waymarkd at \(socketPath) speaks protocol \(version.protocolMajor).\(version.protocolMinor), "
          + "this library \(DaemonMessage.protocolMajor).x")
    }
    self.version = version
    clientID = first.clientID
    state.withLock { $0.authorization = first.state }
    healthReports.send(SourceHealth(service: .reachable))
    let remaining = messages
    Task { [self] in await self.read(remaining) }
  }

  /// The daemon's fixes: each iteration watches (the first sends `WATCH`, the last ends it).
  public var fixSource: FixSource {
    FixSource(
      name: "waymarkd \(socketPath)", health: { [self] in healthReports.subscribe() },
      fixes: { [self] in watching(fixes, for: .fixes) })
  }

  /// The daemon's `ARRIVAL`s and `DEPARTURE`s at its own places, in the order it sends them
  /// (times are fix times). Each iteration watches with `events` (the first sends
  /// `WATCH` with `"events":true`, the last takes it back); the daemon sends events only while
  /// this process holds `always` with full accuracy. Ends when the connection does.
  public var placeEvents: AsyncStream<PlaceEvent> { watching(events, for: .events) }

  /// The daemon's stays, like `CLLocationManager.startMonitoringVisits`: each stay once when
  /// it opens (`Stay.departureDate` `nil`, arrival back-dated to its first fix) and once when
  /// it closes (departure: its last fix inside), with its centre, accuracy (metres) and the
  /// declared place it lies in (`Stay.placeID`, `nil` at none). Times are fix times.
  ///
  /// Each iteration watches with `visits` (the first sends `WATCH` with `"visits":true`, the
  /// last takes it back); the daemon sends stays only while this process holds `always` with
  /// full accuracy, when it records stays (`stays = on`) and speaks protocol 1.2 or later
  /// (``version``). Ends when the connection does.
  public var visits: AsyncStream<Stay> { watching(stays, for: .visits) }

  /// The daemon's `ERROR` texts, as it sends them (untrusted text: escape it before it reaches
  /// a terminal). Ends when the connection does.
  public var errors: AsyncStream<String> { errorReports.subscribe() }

  /// Every message the daemon sends from now on, typed (classes this library does not know as
  /// ``DaemonMessage/unknown(class:raw:)``); lines that are not messages are left out. Ends
  /// when the connection does. Iterating does not watch: see ``fixSource``, ``placeEvents``
  /// and ``visits``.
  public var messages: AsyncStream<DaemonMessage> { everything.subscribe() }

  /// Asks the daemon for its `STATUS` and waits for it (at most `timeout`).
  ///
  /// - Returns: the status, or `nil` when the daemon has gone or did not answer in time.
  public func status(timeout: Duration = .seconds(5)) async -> DaemonMessage.Status? {
    let answers = everything.subscribe()
    guard (try? connection.send(DaemonRequest.status)) != nil else { return nil }
    return await withTaskGroup(of: DaemonMessage.Status?.self) { group in
      group.addTask {
        for await message in answers { if case .status(let status) = message { return status } }
        return nil
      }
      group.addTask {
        try? await Task.sleep(for: timeout)
        return nil
      }
      let first = await group.next() ?? nil
      group.cancelAll()
      return first
    }
  }

  /// The daemon's latest answer for this process.
  public var authorizationState: AuthorizationState { state.withLock { $0.authorization } }

  /// Ends the connection.
  public func close() { connection.close() }

  // MARK: Internals

  /// What an iteration watches.
  private enum Interest: Hashable {
    case fixes, events, visits
  }

  /// `broadcast`'s values while the stream is iterated, counted as a watcher of `interest`.
  private func watching<Element: Sendable>(_ broadcast: Broadcast<Element>, for interest: Interest)
    -> AsyncStream<Element>
  {
    let inner = broadcast.subscribe()
    watch(delta: 1, interest)
    return AsyncStream { continuation in
      let task = Task {
        for await value in inner { continuation.yield(value) }
        continuation.finish()
      }
      continuation.onTermination = { _ in
        task.cancel()
        self.watch(delta: -1, interest)
      }
    }
  }

  /// Counts a watcher in or out and sends the `WATCH` the counts call for, when it changes.
  private func watch(delta: Int, _ interest: Interest) {
    let request: DaemonRequest? = state.withLock { state in
      state.watchers[interest, default: 0] += delta
      let wanted = Set(state.watchers.filter { $0.value > 0 }.keys)
      guard wanted != state.sentWatch else { return nil }
      state.sentWatch = wanted
      guard !wanted.isEmpty else { return .unwatch }
      return .watch(
        DaemonRequest.Watch(events: wanted.contains(.events), visits: wanted.contains(.visits)))
    }
    if let request { try? connection.send(request) }
  }

  /// Sends `SESSION` (protocol 1.3): this connection holds a service session needing `level`
  /// (`nil` for none), with full accuracy for `purpose`. The daemon answers with `SESSION` (see
  /// ``messages``), and again after each change.
  package func holdSession(level: GrantLevel?, fullAccuracy: Bool, purpose: String?) {
    try? connection.send(
      DaemonRequest.session(
        DaemonRequest.SessionOptions(level: level, fullAccuracy: fullAccuracy, purpose: purpose)))
  }

  /// Sends `REQUEST` and waits for the daemon's next `AUTHORIZATION`.
  package func request(_ level: GrantLevel) async -> AuthorizationState {
    await withCheckedContinuation { continuation in
      state.withLock { $0.requestWaiters.append(continuation) }
      do {
        try connection.send(DaemonRequest.request(level: level))
      } catch {
        let waiters = state.withLock { state in
          defer { state.requestWaiters.removeAll() }
          return state.requestWaiters
        }
        for waiter in waiters { waiter.resume(returning: AuthorizationState(status: .restricted)) }
      }
    }
  }

  private func read(_ messages: AsyncStream<BrokerMessage>.Iterator) async {
    var messages = messages
    while let line = await messages.next() {
      guard case .success(let message) = DaemonMessage.parse(line) else { continue }
      everything.send(message)
      switch message {
      case .location(let fix):
        fixes.send(fix)
      case .placeEvent(let event):
        events.send(event)
      case .visit(let stay):
        stays.send(stay)
      case .error(let text):
        errorReports.send(text)
      case .authorization(let said):
        let waiters = state.withLock { state in
          state.authorization = said.state
          defer { state.requestWaiters.removeAll() }
          return state.requestWaiters
        }
        for waiter in waiters { waiter.resume(returning: said.state) }
        authorizationChanged.withLock { $0 }?()
      default:
        break
      }
    }
    let waiters = state.withLock { state in
      state.authorization = AuthorizationState(status: .restricted)
      defer { state.requestWaiters.removeAll() }
      return state.requestWaiters
    }
    for waiter in waiters { waiter.resume(returning: AuthorizationState(status: .restricted)) }
    healthReports.send(SourceHealth(service: .unreachable, lastError: "waymarkd closed"))
    authorizationChanged.withLock { $0 }?()
    fixes.finish()
    events.finish()
    stays.finish()
    errorReports.finish()
    everything.finish()
  }
}
