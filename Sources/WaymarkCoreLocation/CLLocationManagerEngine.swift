import Foundation
import Waymark

/// The work of a ``CLLocationManager``: one task that opens a Waymark `LocationManager` on the
/// live source and takes, in order, the app's commands and the manager's events, deciding
/// which delegate calls they make. The calls go to the main queue through `deliver`, in the
/// order decided. What the manager reads synchronously (status, latest location) is kept in
/// `snapshot`.
final class CLLocationManagerEngine: Sendable {
  /// What the app asked, in the order it asked.
  enum Command: Sendable {
    case requestAuthorization(GrantLevel)
    case updating(Bool)
    case requestLocation
    case significantChanges(Bool)
    case visits(Bool)
    case startMonitoring(RegionSpec)
    /// A region of a kind that cannot be monitored (not a circle).
    case rejectRegion(String)
    case stopMonitoring(String)
    case requestState(String)
    case configure(desiredAccuracy: Double, distanceFilter: Double)
  }

  /// A region as the app set it when monitoring began.
  struct RegionSpec: Sendable {
    var identifier: String
    var center: Coordinate
    var radius: Double
    var notifyOnEntry: Bool
    var notifyOnExit: Bool
  }

  /// A delegate call.
  enum Callback: Sendable {
    case authorization(CLAuthorizationStatus)
    case locations([CLLocation])
    case failure(CLError)
    case visit(CLVisit)
    case enter(String)
    case exit(String)
    case state(CLRegionState, String)
    case didStartMonitoring(String)
    case monitoringFailed(String, CLError)
    /// Ranging `constraint` is impossible (no beacons).
    case rangingFailed(CLBeaconIdentityConstraint)
    /// Ranging a beacon region is impossible (no beacons).
    case regionRangingFailed(CLBeaconRegion)
    /// Deferred updates are not available.
    case deferredFailed
  }

  /// What the manager reads without waiting.
  struct Snapshot: Sendable {
    var status = CLAuthorizationStatus.notDetermined
    var accuracy = CLAccuracyAuthorization.fullAccuracy
    var location: CLLocation?
  }

  private enum Input: Sendable {
    case command(Command)
    case event(LocationManagerEvent)
    case sourceEnded
  }

  let snapshot = Locked(Snapshot())
  private let input: AsyncStream<Input>.Continuation
  private let task: Task<Void, Never>

  init(source: LiveSource, deliver: @escaping @Sendable (Callback) -> Void) {
    let (inputs, input) = AsyncStream.makeStream(of: Input.self)
    self.input = input
    let snapshot = snapshot
    task = Task {
      await Self.run(
        source: source, inputs: inputs, input: input, snapshot: snapshot, deliver: deliver)
    }
  }

  deinit {
    input.finish()
    task.cancel()
  }

  func send(_ command: Command) { input.yield(.command(command)) }

  // MARK: - The task

  /// The state of the task: what is on and what is pending.
  private struct Work {
    var updating = false
    var oneShot = false
    var oneShotBest: Location?
    var significant: SignificantChangeFilter?
    var visits: StayDetector?
    var desiredAccuracy = kCLLocationAccuracyBest
    var distanceFilter = kCLDistanceFilterNone
    var lastDelivered: Location?
    var regions: [String: RegionSpec] = [:]
    var regionEngine = PlaceMonitorEngine(places: [])
    var regionsLocated: Set<String> = []
    var status = CLAuthorizationStatus.notDetermined
    var accuracy = AccuracyAuthorization.full
    var endPending = false
    var lastLocation: Location?

    var needsSource: Bool {
      updating || oneShot || significant != nil || visits != nil || !regions.isEmpty
    }
  }

  private static func run(
    source: LiveSource, inputs: AsyncStream<Input>, input: AsyncStream<Input>.Continuation,
    snapshot: Locked<Snapshot>, deliver: @escaping @Sendable (Callback) -> Void
  ) async {
    let made: (manager: LocationManager, close: @Sendable () -> Void)
    do {
      made = try await source.openLocationManager(sourceEnded: { input.yield(.sourceEnded) })
    } catch {
      // waymarkd named and unreachable: no location can be had.
      snapshot.withLock { $0.status = .restricted }
      deliver(.authorization(.restricted))
      return
    }
    let manager = made.manager
    let events = manager.events.makeAsyncIterator()
    let forwarder = Task {
      var events = events
      while let event = await events.next() { input.yield(.event(event)) }
    }
    var work = Work()
    work.status = manager.authorizationStatus
    work.accuracy = manager.accuracyAuthorization
    snapshot.withLock {
      $0.status = work.status
      $0.accuracy = CLAccuracyAuthorization(work.accuracy)
    }
    deliver(.authorization(work.status))

    for await next in inputs {
      switch next {
      case .command(let command):
        handle(command, &work, manager: manager, deliver: deliver)
      case .event(.authorization(let state)):
        let changed = state.status != work.status || state.accuracy != work.accuracy
        work.status = state.status
        work.accuracy = state.accuracy
        snapshot.withLock {
          $0.status = state.status
          $0.accuracy = CLAccuracyAuthorization(state.accuracy)
        }
        if changed { deliver(.authorization(state.status)) }
        if !state.status.isAuthorized && state.status.isDecided && (work.updating || work.oneShot) {
          work.oneShot = false
          deliver(.failure(CLError(.denied)))
        }
      case .event(.location(let location)):
        work.lastLocation = location
        // Without an error estimate a location's horizontalAccuracy is −1, which marks an
        // invalid location to CoreLocation, and iOS delivers none: gpsd's first report of a
        // session, before it has the dilution of precision, has no estimate.
        guard location.horizontalAccuracy != nil else { break }
        let located = CLLocation(location)
        snapshot.withLock { $0.location = located }
        locate(location, located, &work, deliver: deliver)
      case .event(.failure(.stale)):
        if work.updating || work.significant != nil { deliver(.failure(CLError(.locationUnknown))) }
      case .event:
        break
      case .sourceEnded:
        work.endPending = true
      }
      if work.endPending && manager.location == work.lastLocation {
        work.endPending = false
        sourceEnded(&work, deliver: deliver)
      }
      reconcile(work, manager)
    }
    manager.stopUpdatingLocation()
    forwarder.cancel()
    made.close()
  }

  private static func reconcile(_ work: Work, _ manager: LocationManager) {
    let authorized = work.status.isAuthorized
    if work.needsSource && authorized && !manager.isUpdatingLocation {
      manager.startUpdatingLocation()
    } else if !work.needsSource && manager.isUpdatingLocation {
      manager.stopUpdatingLocation()
    }
  }

  private static func handle(
    _ command: Command, _ work: inout Work, manager: LocationManager,
    deliver: @escaping @Sendable (Callback) -> Void
  ) {
    let refused = work.status == .denied || work.status == .restricted
    switch command {
    case .requestAuthorization(let level):
      let current = work.status
      guard current == .notDetermined || (level == .always && current == .authorizedWhenInUse)
      else { return }
      Task {
        if level == .always {
          await manager.requestAlwaysAuthorization()
        } else {
          await manager.requestWhenInUseAuthorization()
        }
      }
    case .updating(let on):
      work.updating = on
      if on { work.lastDelivered = nil }
      if on && refused { deliver(.failure(CLError(.denied))) }
    case .requestLocation:
      if refused {
        deliver(.failure(CLError(.denied)))
      } else {
        work.oneShot = true
        work.oneShotBest = nil
      }
    case .significantChanges(let on):
      work.significant = on ? SignificantChangeFilter() : nil
      if on && refused { deliver(.failure(CLError(.denied))) }
    case .visits(let on):
      // Waymark's stays, on the delivered locations in order (what `LocationManager.visits`
      // runs), so that a visit comes before any later location's callbacks.
      if !on {
        work.visits = nil
      } else if work.visits == nil {
        work.visits = StayDetector()
      }
    case .startMonitoring(let region):
      startMonitoring(region, &work, deliver: deliver)
    case .rejectRegion(let identifier):
      deliver(.monitoringFailed(identifier, CLError(.regionMonitoringFailure)))
    case .stopMonitoring(let identifier):
      guard work.regions.removeValue(forKey: identifier) != nil else { return }
      work.regionsLocated.remove(identifier)
      rebuildRegions(&work)
    case .requestState(let identifier):
      guard work.regions[identifier] != nil else { return }
      deliver(.state(regionState(identifier, work), identifier))
    case .configure(let desiredAccuracy, let distanceFilter):
      work.desiredAccuracy = desiredAccuracy
      work.distanceFilter = distanceFilter
      manager.desiredAccuracy = desiredAccuracy == kCLLocationAccuracyReduced ? .reduced : .best
    }
  }

  private static func startMonitoring(
    _ region: RegionSpec, _ work: inout Work, deliver: @escaping @Sendable (Callback) -> Void
  ) {
    guard region.radius > 0, region.radius.isFinite, region.center.isValid else {
      deliver(.monitoringFailed(region.identifier, CLError(.regionMonitoringFailure)))
      return
    }
    guard work.accuracy == .full else {
      deliver(.monitoringFailed(region.identifier, CLError(.regionMonitoringDenied)))
      return
    }
    work.regions[region.identifier] = region
    work.regionsLocated.remove(region.identifier)
    rebuildRegions(&work)
    deliver(.didStartMonitoring(region.identifier))
  }

  /// A new place engine for the regions, keeping the states of those it had.
  private static func rebuildRegions(_ work: inout Work) {
    let snapshot = work.regionEngine.snapshot()
    work.regionEngine = PlaceMonitorEngine(
      places: work.regions.values.sorted { $0.identifier < $1.identifier }.map {
        Place(
          id: $0.identifier, name: $0.identifier, coordinate: $0.center, radiusMeters: $0.radius)
      })
    var kept = snapshot
    kept.places = snapshot.places.filter { work.regions[$0.key] != nil }
    work.regionEngine.restore(kept)
  }

  private static func regionState(_ identifier: String, _ work: Work) -> CLRegionState {
    guard work.regionsLocated.contains(identifier),
      let state = work.regionEngine.state(for: identifier)
    else { return .unknown }
    return state.isInside ? .inside : .outside
  }

  /// A delivered location: regions, the one-shot request, updates or significant changes.
  private static func locate(
    _ location: Location, _ located: CLLocation, _ work: inout Work,
    deliver: @escaping @Sendable (Callback) -> Void
  ) {
    if !work.regions.isEmpty {
      for event in work.regionEngine.process(location) {
        switch event {
        case .arrival(let arrival):
          let region = work.regions[arrival.placeID]
          if region?.notifyOnEntry == true { deliver(.enter(arrival.placeID)) }
          deliver(.state(.inside, arrival.placeID))
        case .departure(let departure):
          let region = work.regions[departure.placeID]
          if region?.notifyOnExit == true { deliver(.exit(departure.placeID)) }
          deliver(.state(.outside, departure.placeID))
        }
      }
      work.regionsLocated.formUnion(work.regions.keys)
    }
    for event in work.visits?.process(location) ?? [] { deliver(.visit(CLVisit(event.stay))) }
    if work.oneShot {
      let best = work.oneShotBest.map { $0.horizontalAccuracy ?? .infinity } ?? .nan
      if !((location.horizontalAccuracy ?? .infinity) >= best) { work.oneShotBest = location }
      let wanted = work.desiredAccuracy
      let accuracy = location.horizontalAccuracy ?? .infinity
      if wanted <= 0 || accuracy <= wanted {
        work.oneShot = false
        work.oneShotBest = nil
        if !work.updating {
          deliver(.locations([located]))
          return
        }
      }
    }
    if work.updating {
      let filter = work.distanceFilter
      if filter > 0, let last = work.lastDelivered, last.distance(from: location) < filter {
        return
      }
      work.lastDelivered = location
      deliver(.locations([located]))
    } else if work.significant?.admit(location) != nil {
      deliver(.locations([located]))
    }
  }

  /// The source ended (a log at its end, the daemon gone): a pending request gets the best
  /// location seen or `locationUnknown`; running updates get `locationUnknown`.
  private static func sourceEnded(
    _ work: inout Work, deliver: @escaping @Sendable (Callback) -> Void
  ) {
    if work.oneShot {
      work.oneShot = false
      if let best = work.oneShotBest {
        deliver(.locations([CLLocation(best)]))
      } else {
        deliver(.failure(CLError(.locationUnknown)))
      }
      work.oneShotBest = nil
    }
    if work.updating || work.significant != nil {
      deliver(.failure(CLError(.locationUnknown)))
    }
  }
}
