import FoundationEssentials
import WaymarkCore

/// One iteration of ``LocationUpdate/liveUpdates(_:source:)``: a manager on the source, its
/// events through ``LiveDiagnosis``, the updates out. Ends with the source or the iteration.
enum LiveUpdateSession {
  /// What the session's loop takes, in order.
  private enum Input: Sendable {
    case event(LocationManagerEvent)
    case request(inProgress: Bool)
    case sourceEnded
    case sessions(ServiceSessionRegistry.Need)
  }

  static func start(
    configuration: LocationUpdate.LiveConfiguration, source: LiveSource
  ) -> AsyncThrowingStream<LocationUpdate, any Error> {
    let (stream, continuation) = AsyncThrowingStream.makeStream(of: LocationUpdate.self)
    let task = Task { await run(configuration: configuration, source: source, into: continuation) }
    continuation.onTermination = { _ in task.cancel() }
    return stream
  }

  private static func run(
    configuration: LocationUpdate.LiveConfiguration, source: LiveSource,
    into output: AsyncThrowingStream<LocationUpdate, any Error>.Continuation
  ) async {
    let (inputs, input) = AsyncStream.makeStream(of: Input.self)
    let made: (manager: LocationManager, close: @Sendable () -> Void)
    do {
      made = try await source.makeManager(ended: { input.yield(.sourceEnded) })
    } catch {
      output.finish(throwing: error)
      return
    }
    let manager = made.manager
    manager.distanceFilter = configuration.distanceFilter
    manager.staleInterval = configuration.staleAfter
    // Subscribed before reading the state: every later change arrives as an event.
    let events = manager.events.makeAsyncIterator()
    let forwarder = Task {
      var events = events
      while let event = await events.next() { input.yield(.event(event)) }
    }
    // The held sessions' need (the current one first), then each change.
    let needs = ServiceSessionRegistry.shared.changes.subscribe()
    let sessionWatcher = Task {
      for await need in needs { input.yield(.sessions(need)) }
    }
    let need = ServiceSessionRegistry.shared.need
    let services = manager.authorization.services
    var diagnosis = LiveDiagnosis(configuration: configuration)
    if let update = diagnosis.apply(.sessions(need)) { output.yield(update) }
    let initial = AuthorizationState(
      status: manager.authorizationStatus, accuracy: manager.accuracyAuthorization)
    if let update = diagnosis.apply(
      .authorization(initial, servicesEnabled: services.isEnabled))
    {
      output.yield(update)
    }
    var request: Task<Void, Never>?
    // The implicit session asks for when-in-use; held sessions ask for themselves.
    if initial.status == .notDetermined && !need.isHeld {
      input.yield(.request(inProgress: true))
      request = Task {
        _ = await manager.requestWhenInUseAuthorization()
        input.yield(.request(inProgress: false))
      }
    }
    manager.startUpdatingLocation()

    var endPending = false
    var lastLocation: Location?
    loop: for await next in inputs {
      let diagnosed: LiveDiagnosis.Input
      switch next {
      case .sourceEnded:
        endPending = true
        if manager.location == lastLocation { break loop }
        continue
      case .request(let inProgress):
        diagnosed = .request(inProgress: inProgress)
      case .sessions(let need):
        diagnosed = .sessions(need)
      case .event(.location(let location)):
        lastLocation = location
        diagnosed = .location(location)
      case .event(.authorization(let state)):
        diagnosed = .authorization(state, servicesEnabled: services.isEnabled)
      case .event(.health(let health)):
        diagnosed = .health(health)
      case .event(.failure(.stale)):
        diagnosed = .stale
      case .event(.failure):
        continue
      }
      if let update = diagnosis.apply(diagnosed) { output.yield(update) }
      // The source ended: finish once its last delivered location went out.
      if endPending && manager.location == lastLocation { break }
    }
    if endPending,
      let update = diagnosis.apply(.health(SourceHealth(service: .unreachable)))
    {
      output.yield(update)
    }
    manager.stopUpdatingLocation()
    request?.cancel()
    forwarder.cancel()
    sessionWatcher.cancel()
    made.close()
    output.finish()
  }
}
