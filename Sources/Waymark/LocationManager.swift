import FoundationEssentials
import WaymarkCore

/// CoreLocation's `CLLocationManager`, on any `FixSource` (gpsd, an NMEA replay, a script).
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
/// **Pipeline.** Each fix of the source becomes a `Location` (fixes without time or position are
/// skipped and count as a gap). Locations worse than ``maximumHorizontalAccuracy`` are dropped.
/// With reduced accuracy (granted, or asked through ``desiredAccuracy`` `.reduced`) the
/// coordinate is snapped to the ``reducedAccuracy`` grid and at most one location goes out per
/// interval. The ``distanceFilter`` is measured from the last *delivered* location; the first
/// location, and the first after a gap (no usable fix, more than ``gapInterval`` seconds of fix
/// time without one, or a stop), always go out. All of this uses fix timestamps, never the wall
/// clock; only ``requestLocation(timeout:)`` waits, on the injected clock.
///
/// **Streams and delegate.** ``locations``, ``authorizationUpdates`` and ``healthUpdates`` are
/// replaying multicast streams (`Broadcast`): each iteration subscribes, first receives the
/// latest value and then live ones; a slow subscriber drops its own oldest values and never
/// delays the others. The ``delegate`` is fed by the same events, sent in the same critical
/// section, so both styles observe identical sequences. Source health never ends a stream.
///
/// **State.** What becomes of each fix is decided by a value, `LocationDelivery` (stopped,
/// after a gap, delivering: an enum state machine on fix time); this class is the thread-safe
/// shell around it that runs the source, answers one-shot requests and sends the events.
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
  let clock: any Clock<Duration>

  let locationBroadcast: Broadcast<Location>
  let authorizationBroadcast: Broadcast<AuthorizationState>
  let healthBroadcast: Broadcast<SourceHealth>
  let eventBroadcast: Broadcast<LocationManagerEvent>
  let fixBroadcast: Broadcast<Fix>

  struct WeakDelegate: Sendable {
    weak var value: (any LocationManagerDelegate)?
  }

  struct OneShot {
    var continuation: CheckedContinuation<Location, any Error>
    var accuracy: LocationAccuracy
    var bestSeen: Location?
    var timeout: Task<Void, Never>?
  }

  /// Whether the source is being read.
  enum Run {
    case idle
    /// The task reading the source; `generation` tells a run that ended from its successor.
    case running(Task<Void, Never>, generation: Int)
    /// The source is driven by its owner (`FixSource.isDriven`): fixes arrive through
    /// `ingest` on the owner's thread, and no task runs.
    case driven
  }

  /// The manager's state: the pure decisions about fixes (``LocationDelivery``), the grant, the
  /// run, and who waits for what.
  struct State {
    var delivery = LocationDelivery()
    var grant: AuthorizationState
    var sourceReachable = true
    var run = Run.idle
    var runGeneration = 0
    var nextID = 0
    var oneShots: [Int: OneShot] = [:]
    var authorizationWaiters: [Int: CheckedContinuation<AuthorizationStatus, Never>] = [:]
    var delegate = WeakDelegate()
    var delegatePump: Task<Void, Never>?
    var staleInterval: Duration?
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
      effective.accuracy == .reduced || delivery.desiredAccuracy == .reduced
    }

    /// Whether a fix of the source goes on to the source-fix subscribers and output: the client
    /// is authorized with full accuracy and updating.
    var passesSourceFixes: Bool {
      effective.status.isAuthorized && delivery.isUpdating && !isReduced
    }
  }

  let state: Locked<State>

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
    if case .running(let task, _) = run { task.cancel() }
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
    get { withState { $0.delivery.desiredAccuracy } }
    set { withState { $0.delivery.desiredAccuracy = newValue } }
  }

  /// Minimum distance in metres from the last delivered location for a new one to be delivered;
  /// `nil` (the default) delivers every location. Negative or zero values mean none.
  public var distanceFilter: Double? {
    get { withState { $0.delivery.distanceFilter } }
    set { withState { $0.delivery.distanceFilter = newValue.flatMap { $0 > 0 ? $0 : nil } } }
  }

  /// Locations with a horizontal accuracy worse than this many metres, or unknown, are not
  /// delivered; `nil` (the default) accepts every location.
  public var maximumHorizontalAccuracy: Double? {
    get { withState { $0.delivery.maximumHorizontalAccuracy } }
    set { withState { $0.delivery.maximumHorizontalAccuracy = newValue } }
  }

  /// How approximate locations are made (default ``ReducedAccuracy/standard``: 5 km, 10 min).
  public var reducedAccuracy: ReducedAccuracy {
    get { withState { $0.delivery.reducedAccuracy } }
    set { withState { $0.delivery.reducedAccuracy = newValue } }
  }

  /// Seconds of fix time without a usable fix after which the next location counts as the first
  /// after a gap (default 10).
  public var gapInterval: TimeInterval {
    get { withState { $0.delivery.gapInterval } }
    set { withState { $0.delivery.gapInterval = newValue } }
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
  public var isUpdatingLocation: Bool { withState { $0.delivery.isUpdating } }

  /// Starts delivering locations; at once when authorized, else as soon as a grant arrives.
  public func startUpdatingLocation() {
    withState { state in
      state.delivery.start()
      reconcile(&state)
    }
  }

  /// Stops delivering locations. The next start counts as after a gap.
  public func stopUpdatingLocation() {
    withState { state in
      state.delivery.stop()
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

  // MARK: Internals (all under the state lock unless said otherwise)

  /// Runs `body` under the state lock, then cancels the tasks it retired (outside the lock).
  func withState<R>(_ body: (inout State) -> R) -> R {
    let (result, retired) = state.withLock { state in
      let result = body(&state)
      defer { state.toCancel.removeAll() }
      return (result, state.toCancel)
    }
    for task in retired { task.cancel() }
    return result
  }

  /// Starts or stops the source run to match demand and grant.
  func reconcile(_ state: inout State) {
    let demand = state.delivery.isUpdating || !state.oneShots.isEmpty
    let shouldRun = demand && state.grant.status.isAuthorized
    if shouldRun, case .idle = state.run, source.isDriven {
      state.delivery.gap()
      state.run = .driven
    } else if shouldRun, case .idle = state.run {
      state.runGeneration += 1
      state.delivery.gap()
      let generation = state.runGeneration
      let source = source
      let staleInterval = state.staleInterval
      let clock = clock
      let task = Task { [weak self] in
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
      state.run = .running(task, generation: generation)
    } else if !shouldRun, case .running(let task, _) = state.run {
      // Cancelled by `withState` after unlocking: cancellation runs the source's handlers.
      state.toCancel.append(task)
      state.run = .idle
    } else if !shouldRun, case .driven = state.run {
      state.run = .idle
    }
  }

  func runEnded(_ generation: Int) {
    let failed = withState { state -> [(OneShot, LocationError)] in
      guard case .running(_, generation) = state.run else { return [] }
      state.run = .idle
      defer { state.oneShots.removeAll() }
      return state.oneShots.values.map { ($0, .sourceEnded(bestSeen: $0.bestSeen)) }
    }
    for (oneShot, error) in failed {
      oneShot.timeout?.cancel()
      emitFailure(error)
      oneShot.continuation.resume(throwing: error)
    }
  }

  /// Runs one fix through the pipeline. Called from the run task, or by a caller that drives
  /// the manager itself (the owner of a driven source, `FixSource.driven(name:)`, such as
  /// `waymarkd` on gpsd's reader thread; a log replayed inline); one caller at a time.
  package func ingest(_ fix: Fix) {
    var resolved: [(OneShot, Location)] = []
    var handler: (@Sendable (Fix) -> Void)?
    defer { handler?(fix) }
    withState { state in
      guard state.effective.status.isAuthorized else { return }
      if state.passesSourceFixes {
        fixBroadcast.send(fix)
        handler = state.sourceFixHandler
      }
      let outcome = state.delivery.take(fix, reduced: state.isReduced)
      if let location = outcome.location, !state.oneShots.isEmpty {
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
      guard case .delivered(let location) = outcome else { return }
      // Same critical section for stream and delegate: identical order for both.
      locationBroadcast.send(location)
      eventBroadcast.send(.location(location))
    }
    for (oneShot, location) in resolved {
      oneShot.timeout?.cancel()
      oneShot.continuation.resume(returning: location)
    }
  }

  /// The authorization gate alone, for a driven manager whose locations nobody reads
  /// (`waymarkd`'s over gpsd, `waymark replay`'s over a log: both take the source fixes,
  /// ``onSourceFix(_:)``): when the client is authorized with full accuracy and updating (the
  /// condition under which ``ingest(_:)`` passes a source fix on), sends `fix` to the
  /// source-fix subscribers and hands it to the source-fix output, on the calling thread,
  /// before returning. It computes no location: the filters, ``location``, the location and
  /// event streams, the delegate and one-shot requests see nothing of it. One caller at a time.
  package func gate(_ fix: Fix) {
    // Set inside, not returned: a closure returned through `withLock`'s generic result is
    // re-wrapped (an allocation a fix).
    var handler: (@Sendable (Fix) -> Void)?
    state.withLock { state in
      guard state.passesSourceFixes else { return }
      fixBroadcast.send(fix)
      handler = state.sourceFixHandler
    }
    handler?(fix)
  }

  /// Records a health report: sent to the streams and the delegate; an unreachable source makes
  /// the status ``AuthorizationStatus/restricted`` until it is reachable again. Called from the
  /// run task, or by the owner of a driven source.
  package func ingest(_ health: SourceHealth) {
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
  func checkStale(previousCount: Int) -> Int {
    state.withLock { state in
      let check = state.delivery.checkStale(previousCount: previousCount)
      if check.becameStale {
        eventBroadcast.send(.failure(.stale(lastFixTime: state.delivery.lastUsableFixTime)))
      }
      return check.count
    }
  }

  /// A new id for a one-shot request or an authorization waiter.
  func makeID() -> Int {
    withState { state in
      defer { state.nextID += 1 }
      return state.nextID
    }
  }

  func emitFailure(_ error: LocationError) {
    // Under the lock, like every other event, so that all subscribers see one order.
    state.withLock { _ in eventBroadcast.send(.failure(error)) }
  }
}
