import FoundationEssentials
import WaymarkCore

/// CoreLocation's `CLLocationManager`, on any ``FixSource`` (gpsd, an NMEA replay, a script).
///
/// ```swift
/// let manager = LocationManager(clientID: "org.example.app", source: source)
/// manager.distanceFilter = 10
/// if await manager.requestWhenInUseAuthorization().isAuthorized {
///   manager.startUpdatingLocation()
///   for await location in manager.locations { print(location.coordinate) }
/// }
/// ```
///
/// **Pipeline.** Each fix of the source becomes a ``Location`` (fixes without time or position are
/// skipped and count as a gap). Locations worse than ``maximumHorizontalAccuracy`` are dropped.
/// With reduced accuracy (granted, or asked through ``desiredAccuracy`` `.reduced`) the
/// coordinate is snapped to the ``reducedAccuracy`` grid and at most one location goes out per
/// interval. The ``distanceFilter`` is measured from the last *delivered* location; the first
/// location, and the first after a gap (no usable fix, more than ``gapInterval`` seconds of fix
/// time without one, or a stop), always go out. All of this uses fix timestamps, never the wall
/// clock; only ``requestLocation(timeout:)`` waits, on the injected clock.
///
/// **Streams and delegate.** ``locations``, ``authorizationUpdates`` and ``healthUpdates`` are
/// replaying multicast streams (``Broadcast``): each iteration subscribes, first receives the
/// latest value and then live ones; a slow subscriber drops its own oldest values and never
/// delays the others. The ``delegate`` is fed by the same events, sent in the same critical
/// section, so both styles observe identical sequences. Source health never ends a stream.
///
/// **Authorization.** Nothing is read from the source until the client is authorized; updates
/// begin at once when it already is, or as soon as a grant arrives.
public final class LocationManager: Sendable {
  /// The client id that grants are recorded under.
  public let clientID: String
  /// The fix source.
  public let source: FixSource
  /// Why the client wants locations, shown by the agent.
  public let purpose: String?
  /// The authorization center (grants, agent, system switch).
  public let authorization: AuthorizationCenter
  private let clock: any Clock<Duration>

  private let locationBroadcast: Broadcast<Location>
  private let authorizationBroadcast: Broadcast<AuthorizationState>
  private let healthBroadcast: Broadcast<SourceHealth>
  private let eventBroadcast: Broadcast<LocationManagerEvent>
  private let fixBroadcast: Broadcast<Fix>

  private struct WeakDelegate: Sendable {
    weak var value: (any LocationManagerDelegate)?
  }

  private struct OneShot {
    var continuation: CheckedContinuation<Location, any Error>
    var accuracy: LocationAccuracy
    var bestSeen: Location?
    var timeout: Task<Void, Never>?
  }

  private struct State {
    var desiredAccuracy = LocationAccuracy.best
    var distanceFilter: Double?
    var maximumHorizontalAccuracy: Double?
    var reducedAccuracy = ReducedAccuracy.standard
    var gapInterval: TimeInterval = 10
    var wantsUpdates = false
    var grant: AuthorizationState
    var sourceReachable = true
    var run: Task<Void, Never>?
    var runGeneration = 0
    var lastDeliveredRaw: Location?
    var lastReducedDelivery: Date?
    var lastUsableFixTime: Date?
    var inGap = true
    var nextID = 0
    var oneShots: [Int: OneShot] = [:]
    var authorizationWaiters: [Int: CheckedContinuation<AuthorizationStatus, Never>] = [:]
    var delegate = WeakDelegate()
    var delegatePump: Task<Void, Never>?
    var staleInterval: Duration?
    var usableFixCount = 0
    var isStale = false
    var observerToken: Int?
    var sourceFixHandler: (@Sendable (Fix) -> Void)?
    var toCancel: [Task<Void, Never>] = []

    var effective: AuthorizationState {
      if !sourceReachable && grant.status != .restricted {
        return AuthorizationState(status: .restricted, accuracy: grant.accuracy)
      }
      return grant
    }

    var isReduced: Bool {
      effective.accuracy == .reduced || desiredAccuracy == .reduced
    }
  }

  private let state: Locked<State>

  /// Creates a manager. Nothing starts until ``startUpdatingLocation()`` or
  /// ``requestLocation(timeout:)``.
  ///
  /// - Parameters:
  ///   - clientID: the id grants are recorded under, such as `org.example.app`.
  ///   - source: where fixes come from.
  ///   - authorization: the center deciding grants (``AuthorizationCenter/shared`` by default).
  ///   - clock: the clock that request timeouts wait on.
  ///   - purpose: why the client wants locations, shown when a person is asked.
  public init(
    clientID: String,
    source: FixSource,
    authorization: AuthorizationCenter = .shared,
    clock: any Clock<Duration> = ContinuousClock(),
    purpose: String? = nil
  ) {
    self.clientID = clientID
    self.source = source
    self.authorization = authorization
    self.clock = clock
    self.purpose = purpose
    let initial = authorization.state(for: clientID)
    self.locationBroadcast = Broadcast()
    self.authorizationBroadcast = Broadcast(initial: initial)
    self.healthBroadcast = Broadcast()
    self.eventBroadcast = Broadcast(replaysLatest: false, bufferingNewest: Int.max)
    self.fixBroadcast = Broadcast(replaysLatest: false, bufferingNewest: 4096)
    self.state = Locked(State(grant: initial))
    let token = authorization.addObserver { [weak self] client in
      guard let self, client == self.clientID else { return }
      self.refreshAuthorization()
    }
    state.withLock { $0.observerToken = token }
  }

  deinit {
    let (run, token) = state.withLock { ($0.run, $0.observerToken) }
    run?.cancel()
    if let token { authorization.removeObserver(token) }
    locationBroadcast.finish()
    authorizationBroadcast.finish()
    healthBroadcast.finish()
    eventBroadcast.finish()
    fixBroadcast.finish()
  }

  // MARK: Configuration

  /// The accuracy the application wants (default ``LocationAccuracy/best``).
  public var desiredAccuracy: LocationAccuracy {
    get { withState { $0.desiredAccuracy } }
    set { withState { $0.desiredAccuracy = newValue } }
  }

  /// Minimum distance in metres from the last delivered location for a new one to be delivered;
  /// `nil` (the default) delivers every location. Negative or zero values mean none.
  public var distanceFilter: Double? {
    get { withState { $0.distanceFilter } }
    set { withState { $0.distanceFilter = newValue.flatMap { $0 > 0 ? $0 : nil } } }
  }

  /// Locations with a horizontal accuracy worse than this many metres, or unknown, are not
  /// delivered; `nil` (the default) accepts every location.
  public var maximumHorizontalAccuracy: Double? {
    get { withState { $0.maximumHorizontalAccuracy } }
    set { withState { $0.maximumHorizontalAccuracy = newValue } }
  }

  /// How approximate locations are made (default ``ReducedAccuracy/standard``: 5 km, 10 min).
  public var reducedAccuracy: ReducedAccuracy {
    get { withState { $0.reducedAccuracy } }
    set { withState { $0.reducedAccuracy = newValue } }
  }

  /// Seconds of fix time without a usable fix after which the next location counts as the first
  /// after a gap (default 10).
  public var gapInterval: TimeInterval {
    get { withState { $0.gapInterval } }
    set { withState { $0.gapInterval = newValue } }
  }

  /// The delegate, held weakly. Setting one sends it the current authorization first, then
  /// every event from then on, in order (the same sequence as ``events``).
  public var delegate: (any LocationManagerDelegate)? {
    get { state.withLock { $0.delegate.value } }
    set {
      withState { state in
        state.delegate = WeakDelegate(value: newValue)
        if let pump = state.delegatePump { state.toCancel.append(pump) }
        state.delegatePump = nil
        guard newValue != nil else { return }
        // Subscribed under the lock: no event between the current state and the stream is lost.
        let events = eventBroadcast.subscribe(bufferingNewest: Int.max)
        state.delegatePump = startDelegatePump(first: .authorization(state.effective), events)
      }
    }
  }

  /// Every event, in order: the sequence the delegate sees, as a stream. Each iteration is a
  /// subscription of its own that starts with the next event (no replay); it buffers 1,024
  /// events and then drops its own oldest.
  public var events: Broadcast<LocationManagerEvent>.Updates {
    eventBroadcast.updates(bufferingNewest: 1024)
  }

  /// When set, a ``LocationError/stale(lastFixTime:)`` event is sent (to the delegate and
  /// ``events``) after this long without a usable fix while the source runs, measured on the
  /// manager's clock (fix time stops when fixes stop). Streams go on; the next fix clears it.
  /// Default `nil`: no watchdog.
  public var staleInterval: Duration? {
    get { state.withLock { $0.staleInterval } }
    set { state.withLock { $0.staleInterval = newValue } }
  }

  // MARK: Updates

  /// Whether ``startUpdatingLocation()`` is in effect.
  public var isUpdatingLocation: Bool { withState { $0.wantsUpdates } }

  /// Starts delivering locations; at once when authorized, else as soon as a grant arrives.
  public func startUpdatingLocation() {
    withState { state in
      if !state.wantsUpdates { state.inGap = true }
      state.wantsUpdates = true
      reconcile(&state)
    }
  }

  /// Stops delivering locations. The next start counts as after a gap.
  public func stopUpdatingLocation() {
    withState { state in
      state.wantsUpdates = false
      reconcile(&state)
    }
  }

  /// The latest delivered location.
  public var location: Location? { locationBroadcast.latest }

  /// Delivered locations. Each iteration is a subscription that first receives the latest
  /// location (if any), then live ones; it buffers 64 and then drops its own oldest.
  public var locations: Broadcast<Location>.Updates { locationBroadcast.subscription }

  /// Where the device stayed, from the delivered locations, like
  /// `CLLocationManager.startMonitoringVisits`: ``VisitMonitor/visits(of:)`` with the
  /// detector's defaults (a stay lasts two minutes or more of fix time), each stay when it
  /// opens and when it closes. Subscribed when this is called (the locations delivered from
  /// then on; 10,000 buffered, about 17 minutes at 10 Hz); ends when the manager does. A
  /// distance filter or a reduced grant thins the locations, and so the visits: use a
  /// ``VisitMonitor`` on ``locations`` for other settings or to name declared places.
  public var visits: AsyncStream<Stay> {
    VisitMonitor().visits(of: locationBroadcast.subscribe(bufferingNewest: 10_000))
  }

  /// Delivered locations, buffering `size` per subscription before dropping its oldest.
  public func locations(bufferingNewest size: Int) -> Broadcast<Location>.Updates {
    locationBroadcast.updates(bufferingNewest: size)
  }

  /// The source's fixes as the manager reads them: every fix, usable or not, in order, before
  /// the accuracy and distance filters, while the client is authorized with full accuracy and
  /// updates are on. For a composition that needs the source's own values (waymarkd's visit
  /// recorder and location socket); a reduced-accuracy client gets nothing here. Each iteration
  /// is a subscription of its own, without replay, that buffers `size` fixes and then drops
  /// its own oldest.
  public func sourceFixes(bufferingNewest size: Int = 4096) -> Broadcast<Fix>.Updates {
    fixBroadcast.updates(bufferingNewest: size)
  }

  /// Calls `handler` with each fix that ``sourceFixes(bufferingNewest:)`` delivers, on the task
  /// that reads the source, right after the manager took it (outside its lock), with no stream
  /// in between: for an output whose latency matters (waymarkd's location socket). `nil`
  /// removes it. The handler must return quickly.
  public func onSourceFix(_ handler: (@Sendable (Fix) -> Void)?) {
    withState { $0.sourceFixHandler = handler }
  }

  /// How many ``locations`` subscriptions are live (a diagnostic: goes down when one ends).
  public var locationSubscriberCount: Int { locationBroadcast.subscriberCount }

  /// The latest health the source reported.
  public var health: SourceHealth? { healthBroadcast.latest }

  /// Health reports of the source, latest first. They never end a location stream.
  public var healthUpdates: Broadcast<SourceHealth>.Updates { healthBroadcast.subscription }

  /// One location at ``desiredAccuracy``.
  ///
  /// Starts the source if needed (and stops it afterwards unless updates are on). Locations for
  /// the request pass ``maximumHorizontalAccuracy`` and the reduced-accuracy grid, but not the
  /// distance filter nor the rate limit.
  ///
  /// - Parameter timeout: how long to wait on the manager's clock.
  /// - Returns: the first location at the desired accuracy.
  /// - Throws: ``LocationError/notAuthorized(_:)``, ``LocationError/timedOut(bestSeen:)`` (with
  ///   the most accurate location seen), ``LocationError/sourceEnded(bestSeen:)``, or
  ///   `CancellationError`.
  public func requestLocation(timeout: Duration) async throws -> Location {
    let status = authorizationStatus
    guard status.isAuthorized else {
      let error = LocationError.notAuthorized(status)
      emitFailure(error)
      throw error
    }
    let id = makeID()
    return try await withTaskCancellationHandler {
      try await withCheckedThrowingContinuation { continuation in
        let clock = clock
        let timeoutTask = Task { [weak self] in
          do { try await clock.sleep(for: timeout) } catch { return }
          self?.finishOneShot(id)
        }
        let cancelled = withState { state -> Bool in
          if Task.isCancelled { return true }
          state.oneShots[id] = OneShot(
            continuation: continuation, accuracy: state.desiredAccuracy, timeout: timeoutTask)
          reconcile(&state)
          return false
        }
        if cancelled {
          timeoutTask.cancel()
          continuation.resume(throwing: CancellationError())
        }
      }
    } onCancel: {
      cancelOneShot(id)
    }
  }

  // MARK: Authorization

  /// The current authorization status.
  public var authorizationStatus: AuthorizationStatus { withState { $0.effective.status } }

  /// The accuracy granted.
  public var accuracyAuthorization: AccuracyAuthorization {
    withState { $0.effective.accuracy }
  }

  /// Authorization states: the current one first, then every change. Never ends while the
  /// manager lives.
  public var authorizationUpdates: Broadcast<AuthorizationState>.Updates {
    authorizationBroadcast.subscription
  }

  /// Asks for when-in-use authorization when undecided, and resolves with the first decided
  /// status (at once when already decided).
  @discardableResult
  public func requestWhenInUseAuthorization() async -> AuthorizationStatus {
    await requestAuthorization(.whenInUse)
  }

  /// Asks for always authorization (also as an upgrade from when-in-use, once), and resolves
  /// with the first decided status.
  @discardableResult
  public func requestAlwaysAuthorization() async -> AuthorizationStatus {
    await requestAuthorization(.always)
  }

  /// Reads the grant again (after `waymark auth` changed it in another process, or the system
  /// switch changed) and emits the change, if any.
  public func refreshAuthorization() {
    let grant = authorization.state(for: clientID)
    let waiters = withState { state in
      state.grant = grant
      return applyAuthorization(&state)
    }
    for (continuation, status) in waiters { continuation.resume(returning: status) }
  }

  private func requestAuthorization(_ level: GrantLevel) async -> AuthorizationStatus {
    refreshAuthorization()
    let current = authorizationStatus
    if current == .authorizedWhenInUse && level == .always {
      _ = await authorization.request(level, for: clientID, purpose: purpose)
      refreshAuthorization()
      return authorizationStatus
    }
    if current.isDecided { return current }
    let id = makeID()
    return await withCheckedContinuation { continuation in
      let decided = withState { state -> AuthorizationStatus? in
        if state.effective.status.isDecided { return state.effective.status }
        state.authorizationWaiters[id] = continuation
        return nil
      }
      if let decided {
        continuation.resume(returning: decided)
        return
      }
      let authorization = authorization
      let clientID = clientID
      let purpose = purpose
      Task {
        _ = await authorization.request(level, for: clientID, purpose: purpose)
        self.refreshAuthorization()
        // The answer may leave the status where it was; waiters never hang.
        let waiter = self.withState { state in
          (state.authorizationWaiters.removeValue(forKey: id), state.effective.status)
        }
        waiter.0?.resume(returning: waiter.1)
      }
    }
  }

  // MARK: Internals (all under the state lock unless said otherwise)

  /// Runs `body` under the state lock, then cancels the tasks it retired (outside the lock).
  private func withState<R>(_ body: (inout State) -> R) -> R {
    let (result, retired) = state.withLock { state in
      let result = body(&state)
      defer { state.toCancel.removeAll() }
      return (result, state.toCancel)
    }
    for task in retired { task.cancel() }
    return result
  }

  /// Emits an authorization change if the effective state changed; returns waiters to resume.
  private func applyAuthorization(
    _ state: inout State
  ) -> [(CheckedContinuation<AuthorizationStatus, Never>, AuthorizationStatus)] {
    let effective = state.effective
    if authorizationBroadcast.latest != effective {
      authorizationBroadcast.send(effective)
      eventBroadcast.send(.authorization(effective))
    }
    reconcile(&state)
    guard effective.status.isDecided else { return [] }
    defer { state.authorizationWaiters.removeAll() }
    return state.authorizationWaiters.values.map { ($0, effective.status) }
  }

  /// Starts or stops the source run to match demand and grant.
  private func reconcile(_ state: inout State) {
    let demand = state.wantsUpdates || !state.oneShots.isEmpty
    let shouldRun = demand && state.grant.status.isAuthorized
    if shouldRun && state.run == nil {
      state.runGeneration += 1
      state.inGap = true
      let generation = state.runGeneration
      let source = source
      let staleInterval = state.staleInterval
      let clock = clock
      state.run = Task { [weak self] in
        await withTaskGroup(of: Void.self) { group in
          group.addTask { [weak self] in
            for await health in source.health() {
              guard let self else { return }
              self.ingest(health)
            }
          }
          if let interval = staleInterval {
            group.addTask { [weak self] in
              var seen = 0
              while true {
                do { try await clock.sleep(for: interval) } catch { return }
                guard let self else { return }
                seen = self.checkStale(previousCount: seen)
              }
            }
          }
          for await fix in source.fixes() {
            guard let self else { break }
            self.ingest(fix)
          }
          group.cancelAll()
        }
        self?.runEnded(generation)
      }
    } else if !shouldRun, let run = state.run {
      // Cancelled by `withState` after unlocking: cancellation runs the source's handlers.
      state.toCancel.append(run)
      state.run = nil
    }
  }

  private func runEnded(_ generation: Int) {
    let failed = withState { state -> [(OneShot, LocationError)] in
      guard state.runGeneration == generation, state.run != nil else { return [] }
      state.run = nil
      defer { state.oneShots.removeAll() }
      return state.oneShots.values.map { ($0, .sourceEnded(bestSeen: $0.bestSeen)) }
    }
    for (oneShot, error) in failed {
      oneShot.timeout?.cancel()
      emitFailure(error)
      oneShot.continuation.resume(throwing: error)
    }
  }

  /// Runs one fix through the pipeline. Called from the run task only.
  func ingest(_ fix: Fix) {
    var resolved: [(OneShot, Location)] = []
    var handler: (@Sendable (Fix) -> Void)?
    defer { handler?(fix) }
    withState { state in
      guard state.effective.status.isAuthorized else { return }
      if state.wantsUpdates && !state.isReduced {
        fixBroadcast.send(fix)
        handler = state.sourceFixHandler
      }
      guard let raw = Location(fix) else {
        if fix.mode == .noFix { state.inGap = true }
        return
      }
      if let last = state.lastUsableFixTime,
        raw.timestamp.timeIntervalSince(last) > state.gapInterval
      {
        state.inGap = true
      }
      state.lastUsableFixTime = raw.timestamp
      state.usableFixCount &+= 1
      state.isStale = false
      if let maximum = state.maximumHorizontalAccuracy {
        guard let accuracy = raw.horizontalAccuracy, accuracy <= maximum else { return }
      }
      let reduced = state.isReduced
      let location = reduced ? state.reducedAccuracy.snap(raw) : raw
      if !state.oneShots.isEmpty {
        for (id, var oneShot) in state.oneShots {
          if oneShot.accuracy.isSatisfied(by: location) {
            state.oneShots[id] = nil
            resolved.append((oneShot, location))
          } else if Self.isBetter(location, than: oneShot.bestSeen) {
            oneShot.bestSeen = location
            state.oneShots[id] = oneShot
          }
        }
        if !resolved.isEmpty { reconcile(&state) }
      }
      guard state.wantsUpdates else { return }
      let isFirst = state.inGap || state.lastDeliveredRaw == nil
      if !isFirst, let filter = state.distanceFilter, let last = state.lastDeliveredRaw,
        raw.distance(from: last) < filter
      {
        return
      }
      if reduced, let last = state.lastReducedDelivery,
        raw.timestamp.timeIntervalSince(last) < state.reducedAccuracy.minimumInterval
      {
        return
      }
      state.inGap = false
      state.lastDeliveredRaw = raw
      state.lastReducedDelivery = reduced ? raw.timestamp : nil
      // Same critical section for stream and delegate: identical order for both.
      locationBroadcast.send(location)
      eventBroadcast.send(.location(location))
    }
    for (oneShot, location) in resolved {
      oneShot.timeout?.cancel()
      oneShot.continuation.resume(returning: location)
    }
  }

  /// Records a health report: sent to the streams and the delegate; an unreachable source makes
  /// the status ``AuthorizationStatus/restricted`` until it is reachable again.
  func ingest(_ health: SourceHealth) {
    let waiters = withState { state in
      healthBroadcast.send(health)
      eventBroadcast.send(.health(health))
      let reachable = health.service != .unreachable
      guard reachable != state.sourceReachable else {
        return [(CheckedContinuation<AuthorizationStatus, Never>, AuthorizationStatus)]()
      }
      state.sourceReachable = reachable
      return applyAuthorization(&state)
    }
    for (continuation, status) in waiters { continuation.resume(returning: status) }
  }

  /// Called by the watchdog every ``staleInterval``: emits a stale event when no usable fix came
  /// since the previous check. Returns the count to compare with next time.
  private func checkStale(previousCount: Int) -> Int {
    state.withLock { state in
      let count = state.usableFixCount
      if count == previousCount, !state.isStale {
        state.isStale = true
        eventBroadcast.send(.failure(.stale(lastFixTime: state.lastUsableFixTime)))
      }
      return count
    }
  }

  private static func isBetter(_ location: Location, than other: Location?) -> Bool {
    guard let other else { return true }
    guard let accuracy = location.horizontalAccuracy else { return false }
    guard let otherAccuracy = other.horizontalAccuracy else { return true }
    return accuracy < otherAccuracy
  }

  /// A new id for a one-shot request or an authorization waiter.
  private func makeID() -> Int {
    withState { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
  }

  /// Removes the one-shot request `id` (a timeout and a cancellation may race; one finds it).
  private func takeOneShot(_ id: Int) -> OneShot? {
    withState { state -> OneShot? in
      guard let oneShot = state.oneShots.removeValue(forKey: id) else { return nil }
      reconcile(&state)
      return oneShot
    }
  }

  /// Ends the one-shot request `id` with its timeout error.
  private func finishOneShot(_ id: Int) {
    guard let oneShot = takeOneShot(id) else { return }
    let error = LocationError.timedOut(bestSeen: oneShot.bestSeen)
    emitFailure(error)
    oneShot.continuation.resume(throwing: error)
  }

  private func cancelOneShot(_ id: Int) {
    let oneShot = takeOneShot(id)
    oneShot?.timeout?.cancel()
    oneShot?.continuation.resume(throwing: CancellationError())
  }

  private func emitFailure(_ error: LocationError) {
    // Under the lock, like every other event, so that all subscribers see one order.
    state.withLock { _ in eventBroadcast.send(.failure(error)) }
  }

  private func startDelegatePump(
    first: LocationManagerEvent, _ events: AsyncStream<LocationManagerEvent>
  ) -> Task<Void, Never> {
    // Holds the manager only while dispatching one event, never while waiting.
    Task { [weak self] in
      self?.dispatch(first)
      for await event in events {
        guard let manager = self else { return }
        manager.dispatch(event)
      }
    }
  }

  private func dispatch(_ event: LocationManagerEvent) {
    guard let delegate else { return }
    switch event {
    case .location(let location):
      delegate.locationManager(self, didUpdateLocations: [location])
    case .authorization(let authorization):
      delegate.locationManager(self, didChangeAuthorization: authorization)
    case .health(let health):
      delegate.locationManager(self, didChangeHealth: health)
    case .failure(let error):
      delegate.locationManager(self, didFailWithError: error)
    }
  }
}
