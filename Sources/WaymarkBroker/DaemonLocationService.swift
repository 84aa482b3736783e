import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore

/// `LocationManager` through `waymarkd`: one connection to the daemon's socket that gives a
/// ``FixSource`` (the daemon's TPVs, under this process's grant) and an
/// ``AuthorizationCenter`` whose status is the daemon's answer for this process.
///
/// ```swift
/// let manager = try LocationManager.throughDaemon()      // or DaemonLocationService()
/// if await manager.requestWhenInUseAuthorization().isAuthorized {   // the daemon's agent asks
///   manager.startUpdatingLocation()
///   for await location in manager.locations { print(location.coordinate) }
/// }
/// ```
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
  private let fixes = Broadcast<Fix>(replaysLatest: false, bufferingNewest: 64)
  private let healthReports = Broadcast<SourceHealth>()
  private let state = Locked(State())
  private let center = Locked<AuthorizationCenter?>(nil)

  private struct State {
    var authorization = AuthorizationState(status: .notDetermined)
    var watchers = 0
    var requestWaiters: [CheckedContinuation<AuthorizationState, Never>] = []
  }

  /// Whether a socket file exists at `path` (the daemon may still not answer).
  public static func socketExists(at path: String = BrokerConnection.defaultPath) -> Bool {
    var status = stat()
    return stat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFSOCK
  }

  /// Connects to the daemon and waits for its first `AUTHORIZATION` (at most `timeout`).
  ///
  /// - Throws: ``BrokerError`` when the daemon cannot be reached or does not answer.
  public init(
    socketPath: String = BrokerConnection.defaultPath, timeout: Duration = .seconds(5)
  ) async throws {
    self.socketPath = socketPath
    connection = try BrokerConnection(path: socketPath)
    var messages = connection.messages().makeAsyncIterator()
    var first: (String, AuthorizationState)?
    let deadline = Task { [connection] in
      try await Task.sleep(for: timeout)
      connection.close()
    }
    while first == nil, let message = await messages.next() {
      if message.className == "AUTHORIZATION", let parsed = Self.parse(message) {
        first = (message.string("client") ?? "", parsed)
      }
    }
    deadline.cancel()
    guard let first else {
      throw BrokerError("waymarkd at \(socketPath) did not say who this process is")
    }
    clientID = first.0
    state.withLock { $0.authorization = first.1 }
    healthReports.send(SourceHealth(service: .reachable))
    let remaining = messages
    Task { [self] in await self.read(remaining) }
  }

  /// The authorization center for managers of this process: its store is the daemon's answer,
  /// its agent the daemon's `REQUEST`.
  public var authorization: AuthorizationCenter {
    center.withLock { center in
      if let center { return center }
      let made = AuthorizationCenter(
        store: DaemonGrantStore(service: self), agent: DaemonRequestAgent(service: self),
        services: .enabled)
      center = made
      return made
    }
  }

  /// The daemon's fixes: each iteration watches (the first sends `WATCH`, the last ends it).
  public var fixSource: FixSource {
    FixSource(
      name: "waymarkd \(socketPath)", health: { [self] in healthReports.subscribe() },
      fixes: { [self] in
        let inner = fixes.subscribe()
        watch(delta: 1)
        return AsyncStream { continuation in
          let task = Task {
            for await fix in inner { continuation.yield(fix) }
            continuation.finish()
          }
          continuation.onTermination = { _ in
            task.cancel()
            self.watch(delta: -1)
          }
        }
      })
  }

  /// A manager named after this process, on the daemon's fixes and answers.
  public func makeManager(clock: any Clock<Duration> = ContinuousClock()) -> LocationManager {
    LocationManager(
      clientID: clientID, source: fixSource, authorization: authorization, clock: clock)
  }

  /// The daemon's latest answer for this process.
  public var authorizationState: AuthorizationState { state.withLock { $0.authorization } }

  /// Ends the connection.
  public func close() { connection.close() }

  // MARK: Internals

  private func watch(delta: Int) {
    let line: String? = state.withLock { state in
      let before = state.watchers
      state.watchers += delta
      if before == 0 && state.watchers == 1 { return #"{"class":"WATCH","enable":true}"# }
      if before == 1 && state.watchers == 0 { return #"{"class":"WATCH","enable":false}"# }
      return nil
    }
    if let line { try? connection.send(line) }
  }

  /// Sends `REQUEST` and waits for the daemon's next `AUTHORIZATION`.
  func request(_ level: GrantLevel) async -> AuthorizationState {
    await withCheckedContinuation { continuation in
      state.withLock { $0.requestWaiters.append(continuation) }
      do {
        try connection.send(#"{"class":"REQUEST","level":"\#(level.rawValue)"}"#)
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
    while let message = await messages.next() {
      switch message.className {
      case "TPV":
        if let fix = message.fix { fixes.send(fix) }
      case "AUTHORIZATION":
        guard let parsed = Self.parse(message) else { continue }
        let waiters = state.withLock { state in
          state.authorization = parsed
          defer { state.requestWaiters.removeAll() }
          return state.requestWaiters
        }
        for waiter in waiters { waiter.resume(returning: parsed) }
        center.withLock { $0 }?.notify(clientID)
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
    center.withLock { $0 }?.notify(clientID)
    fixes.finish()
  }

  private static func parse(_ message: BrokerMessage) -> AuthorizationState? {
    guard let status = message.string("status").flatMap(AuthorizationStatus.init(rawValue:))
    else { return nil }
    let accuracy =
      message.string("accuracy").flatMap(AccuracyAuthorization.init(rawValue:)) ?? .full
    return AuthorizationState(status: status, accuracy: accuracy)
  }
}

/// The daemon's answer for this process, as a read-only grant store.
struct DaemonGrantStore: GrantStore {
  let service: DaemonLocationService

  func grant(for clientID: String) throws -> Grant? {
    let state = service.authorizationState
    let level: GrantLevel
    switch state.status {
    case .notDetermined: return nil
    case .restricted:
      throw GrantStoreError.unreadable(path: service.socketPath, reason: "waymarkd restricts")
    case .denied: level = .never
    case .authorizedWhenInUse: level = .whenInUse
    case .authorizedAlways: level = .always
    }
    return Grant(
      clientID: service.clientID, level: level, accuracy: state.accuracy,
      grantedAt: Date(timeIntervalSince1970: 0))
  }

  func allGrants() throws -> [Grant] { try grant(for: service.clientID).map { [$0] } ?? [] }
  // The daemon records decisions itself; changes go through `waymark auth` or an agent.
  func save(_ grant: Grant) throws {}
  @discardableResult func removeGrant(for clientID: String) throws -> Bool { false }
  func removeAll() throws {}
}

/// Asks the daemon (which asks an agent of this user) and reports its answer.
struct DaemonRequestAgent: AuthorizationAgent {
  let service: DaemonLocationService

  func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer {
    let state = await service.request(request.level)
    switch state.status {
    case .authorizedAlways: return .allow(.always, state.accuracy)
    case .authorizedWhenInUse: return .allow(.whenInUse, state.accuracy)
    case .notDetermined, .restricted, .denied: return .deny
    }
  }
}

extension LocationManager {
  /// A manager that gets locations and authorization from `waymarkd`'s socket at `path`.
  ///
  /// - Throws: ``BrokerError`` when the daemon cannot be reached.
  public static func throughDaemon(socketPath path: String = BrokerConnection.defaultPath)
    async throws -> LocationManager
  {
    try await DaemonLocationService(socketPath: path).makeManager()
  }

  /// The daemon's manager when its socket exists and answers, else `fallback()` (for example a
  /// manager on a `GPSDSource`, for a machine without waymarkd).
  public static func preferringDaemon(
    socketPath path: String = BrokerConnection.defaultPath,
    otherwise fallback: () -> LocationManager
  ) async -> LocationManager {
    if DaemonLocationService.socketExists(at: path),
      let service = try? await DaemonLocationService(socketPath: path)
    {
      return service.makeManager()
    }
    return fallback()
  }
}
