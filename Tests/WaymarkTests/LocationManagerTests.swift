import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

let origin = Coordinate(latitude: 48.8566, longitude: 2.3522)
let t0 = Date(timeIntervalSince1970: 1_796_000_000)

/// A manager on a scripted source with an in-memory grant, and its parts.
struct Harness {
  let manager: LocationManager
  let scripted: ScriptedSource
  let center: AuthorizationCenter
  let clock: ManualClock

  init(
    grant: GrantLevel? = .whenInUse, accuracy: AccuracyAuthorization = .full,
    agent: any AuthorizationAgent = PolicyAuthorizationAgent(),
    store: (any GrantStore)? = nil, services: LocationServicesSwitch = .enabled
  ) {
    let grants = grant.map {
      [Grant(clientID: "test.client", level: $0, accuracy: accuracy, grantedAt: t0)]
    }
    let store = store ?? InMemoryGrantStore(grants ?? [])
    center = AuthorizationCenter(store: store, agent: agent, services: services)
    scripted = ScriptedSource()
    clock = ManualClock()
    manager = LocationManager(
      clientID: "test.client", source: scripted.source, authorization: center, clock: clock)
  }

  /// Starts updates and waits until the source run is live.
  func start() async {
    let runs = scripted.runsStarted
    manager.startUpdatingLocation()
    await scripted.waitForRuns(runs + 1)
  }
}

/// A fix `meters` east of the origin at `seconds` after t0.
func fix(_ meters: Double, at seconds: Double, accuracy: Double? = 5) -> Fix {
  ScriptedSource.fix(
    at: origin.offset(by: meters, bearingDegrees: 90), time: t0.addingTimeInterval(seconds),
    accuracy: accuracy)
}

extension AsyncIteratorProtocol {
  /// The next `count` elements.
  mutating func take(_ count: Int) async throws -> [Element] {
    var values: [Element] = []
    while values.count < count, let value = try await next() { values.append(value) }
    return values
  }
}

func seconds(_ locations: [Location]) -> [Double] {
  locations.map { $0.timestamp.timeIntervalSince(t0) }
}

@Suite struct LocationManagerStreamTests {
  @Test func lateSubscriberGetsLatestThenLive() async throws {
    let h = Harness()
    await h.start()
    var early = h.manager.locations.makeAsyncIterator()
    h.scripted.send([fix(0, at: 0), fix(20, at: 1)])
    #expect(seconds(try await early.take(2)) == [0, 1])
    var late = h.manager.locations.makeAsyncIterator()
    h.scripted.send(fix(40, at: 2))
    #expect(seconds(try await late.take(2)) == [1, 2])
    #expect(seconds(try await early.take(1)) == [2])
    #expect(h.manager.location?.timestamp == t0.addingTimeInterval(2))
  }

  @Test func hundredSubscribersOneStalledOthersGetEveryValue() async throws {
    let h = Harness()
    await h.start()
    let count = 200
    var stalled = h.manager.locations.makeAsyncIterator()  // default buffer: 64
    let collectors = (0..<99).map { _ in
      let updates = h.manager.locations(bufferingNewest: 1000)
      var iterator = updates.makeAsyncIterator()
      return Task { try await iterator.take(count) }
    }
    #expect(h.manager.locationSubscriberCount == 100)
    h.scripted.send((0..<count).map { fix(Double($0) * 20, at: Double($0)) })
    for collector in collectors {
      #expect(seconds(try await collector.value) == (0..<count).map(Double.init))
    }
    // The stalled subscriber kept only its newest 64 and delayed nobody.
    let kept = try await stalled.take(64)
    #expect(seconds(kept) == (count - 64..<count).map(Double.init))
  }

  @Test func cancellingASubscriptionRemovesIt() async throws {
    let h = Harness()
    await h.start()
    h.scripted.send(fix(0, at: 0))
    let (seen, seenContinuation) = AsyncStream.makeStream(of: Location.self)
    let task = Task {
      for await location in h.manager.locations { seenContinuation.yield(location) }
    }
    var seenIterator = seen.makeAsyncIterator()
    _ = await seenIterator.next()
    #expect(h.manager.locationSubscriberCount == 1)
    task.cancel()
    await task.value
    #expect(h.manager.locationSubscriberCount == 0)
    do {
      var iterator = h.manager.locations.makeAsyncIterator()
      _ = await iterator.next()
      #expect(h.manager.locationSubscriberCount == 1)
    }
    #expect(h.manager.locationSubscriberCount == 0)
  }

  @Test func managerGoingAwayEndsStreamsAndStopsTheSource() async throws {
    let scripted = ScriptedSource()
    let center = AuthorizationCenter(
      store: InMemoryGrantStore([Grant(clientID: "c", level: .always, grantedAt: t0)]),
      services: .enabled)
    var manager: LocationManager? = LocationManager(
      clientID: "c", source: scripted.source, authorization: center)
    var iterator = manager!.locations.makeAsyncIterator()
    let delegate = RecordingDelegate()
    manager!.delegate = delegate  // the delegate's task must not keep the manager alive
    var delegateEvents = delegate.events.makeAsyncIterator()
    #expect(
      await delegateEvents.next() == .authorization(AuthorizationState(status: .authorizedAlways)))
    weak let weakManager = manager
    manager!.startUpdatingLocation()
    await scripted.waitForRuns(1)
    scripted.send(fix(0, at: 0))
    #expect(await iterator.next() != nil)
    manager = nil
    // The stream ends when the manager is deinitialized (a task may hold it for the instant
    // of one fix); nothing else keeps it: not the run, not the delegate's task.
    #expect(await iterator.next() == nil)
    #expect(weakManager == nil)
  }
}

@Suite struct LocationManagerFilterTests {
  @Test func distanceFilterNeverSuppressesFirstFixNorFirstAfterGap() async throws {
    let h = Harness()
    h.manager.distanceFilter = 10
    h.manager.gapInterval = 10
    await h.start()
    var locations = h.manager.locations.makeAsyncIterator()
    h.scripted.send([
      fix(0, at: 0),  // first: delivered
      fix(6, at: 1),  // 6 m from the last delivered: suppressed
      fix(12, at: 2),  // 12 m from the last *delivered* (not from the 6 m one): delivered
      fix(15, at: 3),  // 3 m: suppressed
      fix(16, at: 30),  // 27 s without a fix: first after a gap, delivered although 4 m
      Fix(time: t0.addingTimeInterval(31), mode: .noFix),  // fix lost: a gap
      fix(16.5, at: 32),  // first after the gap: delivered although 0.5 m
      fix(17, at: 33),  // suppressed
      fix(100, at: 34),  // marker
    ])
    #expect(seconds(try await locations.take(5)) == [0, 2, 30, 32, 34])
  }

  @Test func restartCountsAsAGap() async throws {
    let h = Harness()
    h.manager.distanceFilter = 100
    await h.start()
    var locations = h.manager.locations.makeAsyncIterator()
    h.scripted.send(fix(0, at: 0))
    #expect(seconds(try await locations.take(1)) == [0])
    h.manager.stopUpdatingLocation()
    await h.start()
    h.scripted.send(fix(1, at: 1))
    #expect(seconds(try await locations.take(1)) == [1])
  }

  @Test func worseThanMaximumAccuracyIsNotDelivered() async throws {
    let h = Harness()
    h.manager.maximumHorizontalAccuracy = 20
    await h.start()
    var locations = h.manager.locations.makeAsyncIterator()
    h.scripted.send([
      fix(0, at: 0, accuracy: 50), fix(1, at: 1, accuracy: nil), fix(2, at: 2, accuracy: 20),
      fix(3, at: 3, accuracy: 21), fix(4, at: 4, accuracy: 3),
    ])
    let delivered = try await locations.take(2)
    #expect(seconds(delivered) == [2, 4])
    #expect(delivered.map(\.horizontalAccuracy) == [20, 3])
  }

  @Test func locationCarriesFixFields() async throws {
    let h = Harness()
    await h.start()
    var locations = h.manager.locations.makeAsyncIterator()
    var input = fix(0, at: 0)
    input.speed = 1.5
    input.track = 90
    h.scripted.send(input)
    let location = try #require(await locations.next())
    #expect(location.altitude == 50)
    #expect(location.ellipsoidalAltitude == 97)
    #expect(location.speed == 1.5)
    #expect(location.course == 90)
    #expect(location.source == .simulated("scripted"))
  }

  @Test func reducedAccuracySnapsToTheGridAndLimitsTheRate() async throws {
    let h = Harness(accuracy: .reduced)
    #expect(h.manager.accuracyAuthorization == .reduced)
    await h.start()
    var locations = h.manager.locations.makeAsyncIterator()
    // One fix a minute for 25 minutes, walking east 10 m a minute.
    h.scripted.send((0...25).map { fix(Double($0) * 10, at: Double($0) * 60) })
    h.scripted.send(fix(20_000, at: 1800))  // 20 km away, 10 min later: delivered
    let delivered = try await locations.take(4)
    #expect(seconds(delivered) == [0, 600, 1200, 1800])
    let policy = ReducedAccuracy.standard
    for location in delivered {
      #expect(location.altitude == nil)
      #expect(location.speed == nil)
      #expect((location.horizontalAccuracy ?? 0) >= policy.gridMeters)
    }
    // The first three are in the same 5 km cell: the same snapped coordinate.
    #expect(delivered[0].coordinate == delivered[1].coordinate)
    #expect(delivered[1].coordinate == delivered[2].coordinate)
    #expect(delivered[0].coordinate != origin)
    #expect(delivered[0].coordinate.distance(to: origin) <= policy.gridMeters * 0.75)
    #expect(delivered[3].coordinate != delivered[0].coordinate)
  }

  @Test func gridSnappingIsStableAndBounded() {
    let policy = ReducedAccuracy(gridMeters: 2000, minimumInterval: 0)
    for latitude in stride(from: -80.0, through: 80, by: 7.3) {
      for longitude in stride(from: -179.0, through: 179, by: 13.7) {
        let point = Location(
          coordinate: Coordinate(latitude: latitude, longitude: longitude), timestamp: t0)
        let snapped = policy.snap(point)
        #expect(snapped.coordinate.distance(to: point.coordinate) <= 2000 * 0.75)
        #expect(policy.snap(snapped).coordinate == snapped.coordinate)
      }
    }
  }

  @Test func desiredReducedAccuracyWithFullGrant() async throws {
    let h = Harness()
    h.manager.desiredAccuracy = .reduced
    h.manager.reducedAccuracy = ReducedAccuracy(gridMeters: 1000, minimumInterval: 60)
    await h.start()
    var locations = h.manager.locations.makeAsyncIterator()
    h.scripted.send([fix(0, at: 0), fix(10, at: 30), fix(20, at: 60)])
    let delivered = try await locations.take(2)
    #expect(seconds(delivered) == [0, 60])
    #expect(delivered.allSatisfy { $0.horizontalAccuracy == 1000 })
  }
}

@Suite struct LocationManagerRequestTests {
  @Test func requestLocationResolvesAtTheDesiredAccuracy() async throws {
    let h = Harness()
    h.manager.desiredAccuracy = .nearestTenMeters
    let request = Task { try await h.manager.requestLocation(timeout: .seconds(30)) }
    await h.scripted.waitForRuns(1)
    h.scripted.send([fix(0, at: 0, accuracy: 50), fix(1, at: 1, accuracy: 8)])
    let location = try await request.value
    #expect(location.horizontalAccuracy == 8)
    #expect(h.manager.location == nil)  // one-shot requests do not feed the stream
  }

  @Test func requestLocationTimesOutWithTheBestSeen() async throws {
    let h = Harness()
    h.manager.desiredAccuracy = .nearestTenMeters
    var locations = h.manager.locations.makeAsyncIterator()
    await h.start()
    let request = Task { try await h.manager.requestLocation(timeout: .seconds(5)) }
    await h.clock.waitForSleepers(1)
    h.scripted.send([fix(0, at: 0, accuracy: 50), fix(1, at: 1, accuracy: 30)])
    _ = try await locations.take(2)  // both went through the pipeline
    h.clock.advance(by: .seconds(4))
    #expect(h.clock.sleeperCount == 1)
    h.clock.advance(by: .seconds(1))
    let error = await #expect(throws: LocationError.self) { try await request.value }
    guard case .timedOut(let best)? = error else {
      Issue.record("expected a timeout, got \(String(describing: error))")
      return
    }
    #expect(best?.horizontalAccuracy == 30)
  }

  @Test func requestLocationNeedsAuthorization() async {
    let h = Harness(grant: .never)
    await #expect(throws: LocationError.notAuthorized(.denied)) {
      try await h.manager.requestLocation(timeout: .seconds(1))
    }
    #expect(h.scripted.runsStarted == 0)
  }

  @Test func requestLocationFailsWhenTheSourceEnds() async throws {
    let center = AuthorizationCenter(
      store: InMemoryGrantStore([Grant(clientID: "c", level: .whenInUse, grantedAt: t0)]),
      services: .enabled)
    let manager = LocationManager(
      clientID: "c", source: ScriptedSource.finite([fix(0, at: 0, accuracy: 40)]),
      authorization: center, clock: ManualClock())
    manager.desiredAccuracy = .nearestTenMeters
    await #expect(
      throws: LocationError.sourceEnded(bestSeen: Location(fix(0, at: 0, accuracy: 40)))
    ) {
      try await manager.requestLocation(timeout: .seconds(10))
    }
  }

  @Test func cancellingARequestThrowsCancellation() async {
    let h = Harness()
    let request = Task { try await h.manager.requestLocation(timeout: .seconds(60)) }
    await h.clock.waitForSleepers(1)
    request.cancel()
    await #expect(throws: CancellationError.self) { try await request.value }
  }
}

/// Records delegate calls as events, in order.
final class RecordingDelegate: LocationManagerDelegate {
  let events: AsyncStream<LocationManagerEvent>
  private let continuation: AsyncStream<LocationManagerEvent>.Continuation

  init() {
    (events, continuation) = AsyncStream.makeStream(of: LocationManagerEvent.self)
  }

  func locationManager(_ manager: LocationManager, didUpdateLocations locations: [Location]) {
    for location in locations { continuation.yield(.location(location)) }
  }

  func locationManager(
    _ manager: LocationManager, didChangeAuthorization state: AuthorizationState
  ) {
    continuation.yield(.authorization(state))
  }

  func locationManager(_ manager: LocationManager, didChangeHealth health: SourceHealth) {
    continuation.yield(.health(health))
  }

  func locationManager(_ manager: LocationManager, didFailWithError error: LocationError) {
    continuation.yield(.failure(error))
  }
}

@Suite struct LocationManagerDelegateTests {
  @Test func delegateAndStreamsSeeIdenticalSequences() async throws {
    let h = Harness()
    let delegate = RecordingDelegate()
    h.manager.delegate = delegate
    h.manager.distanceFilter = 10
    var locations = h.manager.locations.makeAsyncIterator()
    var authorizations = h.manager.authorizationUpdates.makeAsyncIterator()
    await h.start()
    h.scripted.send([fix(0, at: 0), fix(5, at: 1), fix(30, at: 2), fix(31, at: 3)])
    let firstBatch = try await locations.take(2)
    try h.center.revoke("test.client")
    try h.center.setGrant(
      Grant(clientID: "test.client", level: .always, accuracy: .full, grantedAt: t0))
    await h.scripted.waitForRuns(2)
    h.scripted.send([fix(60, at: 4), fix(65, at: 5), fix(90, at: 6)])
    let secondBatch = try await locations.take(2)
    let streamLocations = firstBatch + secondBatch
    let streamAuthorizations = try await authorizations.take(3)
    #expect(seconds(streamLocations) == [0, 2, 4, 6])
    #expect(
      streamAuthorizations.map(\.status) == [
        .authorizedWhenInUse, .notDetermined, .authorizedAlways,
      ])

    var delegateEvents = delegate.events.makeAsyncIterator()
    let recorded = try await delegateEvents.take(7)
    let delegateLocations = recorded.compactMap { event -> Location? in
      if case .location(let location) = event { return location }
      return nil
    }
    let delegateAuthorizations = recorded.compactMap { event -> AuthorizationState? in
      if case .authorization(let state) = event { return state }
      return nil
    }
    #expect(delegateLocations == streamLocations)
    #expect(delegateAuthorizations == streamAuthorizations)
    withExtendedLifetime(delegate) {}
  }

  @Test func delegateIsHeldWeakly() {
    let h = Harness()
    do {
      let delegate = RecordingDelegate()
      h.manager.delegate = delegate
      let isSet = h.manager.delegate === delegate
      #expect(isSet)
    }
    // A delivery in flight on another thread may hold the delegate for a moment; once it is
    // done, nothing else does. Bounded wait for that, not a timing assertion.
    var attempts = 0
    while h.manager.delegate != nil && attempts < 2_000 {
      usleep(1_000)
      attempts += 1
    }
    let isCleared = h.manager.delegate == nil
    #expect(isCleared)
  }
}

@Suite struct LocationManagerHealthTests {
  @Test func unreachableSourceRestrictsWithoutEndingStreams() async throws {
    let h = Harness()
    let delegate = RecordingDelegate()
    h.manager.delegate = delegate
    var locations = h.manager.locations.makeAsyncIterator()
    var authorizations = h.manager.authorizationUpdates.makeAsyncIterator()
    var healths = h.manager.healthUpdates.makeAsyncIterator()
    await h.start()
    h.scripted.send(fix(0, at: 0))
    #expect(seconds(try await locations.take(1)) == [0])
    #expect(await authorizations.next()?.status == .authorizedWhenInUse)

    let down = SourceHealth(service: .unreachable, lastError: "connection refused")
    h.scripted.send(health: down)
    #expect(await healths.next() == down)
    #expect(await authorizations.next()?.status == .restricted)
    #expect(h.manager.authorizationStatus == .restricted)

    let up = SourceHealth(service: .reachable, devicePresent: true, device: "/dev/ttyACM0")
    h.scripted.send(health: up)
    #expect(await healths.next() == up)
    #expect(await authorizations.next()?.status == .authorizedWhenInUse)
    h.scripted.send(fix(100, at: 10))
    #expect(seconds(try await locations.take(1)) == [10])

    var events = delegate.events.makeAsyncIterator()
    let recorded = try await events.take(7)
    #expect(recorded.contains(.health(down)))
    #expect(recorded.contains(.health(up)))
    withExtendedLifetime(delegate) {}
  }

  @Test func staleWatchdogReportsWithoutEndingStreams() async throws {
    let h = Harness()
    h.manager.staleInterval = .seconds(5)
    var events = h.manager.events.makeAsyncIterator()
    var locations = h.manager.locations.makeAsyncIterator()
    await h.start()
    h.scripted.send(fix(0, at: 0))
    #expect(seconds(try await locations.take(1)) == [0])
    #expect(await events.next() == .location(Location(fix(0, at: 0))!))
    await h.clock.waitForSleepers(1)
    h.clock.advance(by: .seconds(5))  // a fix came during this period: not stale
    await h.clock.waitForSleepers(1)
    h.clock.advance(by: .seconds(5))  // nothing for 5 s: stale
    #expect(await events.next() == .failure(.stale(lastFixTime: t0)))
    await h.clock.waitForSleepers(1)
    h.clock.advance(by: .seconds(5))  // still nothing: reported once only
    await h.clock.waitForSleepers(1)
    h.scripted.send(fix(100, at: 30))
    #expect(seconds(try await locations.take(1)) == [30])  // the stream went on
    #expect(await events.next() == .location(Location(fix(100, at: 30))!))
    h.clock.advance(by: .seconds(5))
    await h.clock.waitForSleepers(1)
    h.clock.advance(by: .seconds(5))
    #expect(
      await events.next() == .failure(.stale(lastFixTime: t0.addingTimeInterval(30))))
  }

  @Test func eventsStreamIsTheDelegateSequence() async throws {
    let h = Harness()
    let delegate = RecordingDelegate()
    var events = h.manager.events.makeAsyncIterator()
    h.manager.delegate = delegate
    var locations = h.manager.locations.makeAsyncIterator()
    await h.start()
    h.scripted.send([fix(0, at: 0), fix(10, at: 1)])
    _ = try await locations.take(2)
    try h.center.revoke("test.client")
    let streamed = try await events.take(3)
    var recorded = delegate.events.makeAsyncIterator()
    let delegated = try await recorded.take(4)
    // The delegate first gets the state current when it was set, then the same events.
    #expect(delegated.first == .authorization(AuthorizationState(status: .authorizedWhenInUse)))
    #expect(Array(delegated.dropFirst()) == streamed)
    #expect(streamed.last == .authorization(AuthorizationState(status: .notDetermined)))
    withExtendedLifetime(delegate) {}
  }
}

@Suite struct LocationManagerSourceFixesTests {
  @Test func everyFixInOrderBeforeTheFiltersWhileAuthorized() async throws {
    let h = Harness()
    h.manager.distanceFilter = 100
    h.manager.maximumHorizontalAccuracy = 10
    var fixes = h.manager.sourceFixes().makeAsyncIterator()
    await h.start()
    let noFix = Fix(time: t0.addingTimeInterval(1), mode: .noFix)
    h.scripted.send([fix(0, at: 0), noFix, fix(5, at: 2), fix(10, at: 3, accuracy: 40)])
    let received = try await fixes.take(4)
    #expect(received == [fix(0, at: 0), noFix, fix(5, at: 2), fix(10, at: 3, accuracy: 40)])
  }

  @Test func nothingWithReducedAccuracy() async throws {
    let h = Harness(accuracy: .reduced)
    var fixes = h.manager.sourceFixes().makeAsyncIterator()
    var locations = h.manager.locations.makeAsyncIterator()
    await h.start()
    h.scripted.send([fix(0, at: 0)])
    _ = try await locations.take(1)  // the reduced location went out; no source fix did
    h.manager.stopUpdatingLocation()
    let ended = Task { try await fixes.take(1) }
    try await Task.sleep(for: .milliseconds(50))
    ended.cancel()
    #expect((try? await ended.value)?.isEmpty ?? true)
  }
}

@Suite struct LocationManagerSourceFixHandlerTests {
  @Test func theHandlerSeesWhatSourceFixesDelivers() async throws {
    let h = Harness()
    let seen = Locked<[Fix]>([])
    h.manager.onSourceFix { fix in seen.withLock { $0.append(fix) } }
    var fixes = h.manager.sourceFixes().makeAsyncIterator()
    await h.start()
    h.scripted.send([fix(0, at: 0), fix(5, at: 1)])
    let streamed = try await fixes.take(2)
    // The handler runs on the reading task just after the stream got the fix.
    for _ in 0..<500 where seen.withLock({ $0.count }) < 2 {
      try await Task.sleep(for: .milliseconds(2))
    }
    #expect(seen.withLock { $0 } == streamed)
    h.manager.onSourceFix(nil)
    h.scripted.send([fix(10, at: 2)])
    _ = try await fixes.take(1)
    #expect(seen.withLock { $0 }.count == 2)
  }
}
