import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

// The `LocationPermissionManager` of docs/guide/location-manager.md, verbatim except for the
// injectable authorization center (the guide uses the default, `.shared`).
final class LocationPermissionManager: Sendable {
  let manager: LocationManager

  init(source: FixSource, authorization: AuthorizationCenter = .shared) {
    manager = LocationManager(
      clientID: "org.example.stamps", source: source, authorization: authorization)
    manager.desiredAccuracy = .best  // best accuracy, no distance filter
    manager.distanceFilter = nil
  }

  /// Asks for when-in-use permission if undecided, then starts updates once granted.
  func requestLocation() async -> AuthorizationStatus {
    let status = await manager.requestWhenInUseAuthorization()
    if status.isAuthorized { manager.startUpdatingLocation() }
    return status
  }

  /// The latest coordinate first, then every new one; each iteration subscribes on its own.
  var coordinates: some AsyncSequence<Coordinate, Never> { manager.locations.map(\.coordinate) }
}

@Suite struct ReadmeExampleTests {
  @Test func locationPermissionManagerRequestsThenObserves() async throws {
    let scripted = ScriptedSource()
    let center = AuthorizationCenter(
      store: InMemoryGrantStore(),
      agent: PolicyAuthorizationAgent(answer: .allow(.whenInUse, .full)),
      services: .enabled)
    let permissions = LocationPermissionManager(source: scripted.source, authorization: center)
    #expect(await permissions.requestLocation() == .authorizedWhenInUse)
    await scripted.waitForRuns(1)
    var first = permissions.coordinates.makeAsyncIterator()
    scripted.send([fix(0, at: 0), fix(50, at: 1)])
    let a = try #require(await first.next())
    let b = try #require(await first.next())
    #expect(a == origin.offset(by: 0, bearingDegrees: 90))
    #expect(b.distance(to: a) > 49)
    // A late observer gets the latest coordinate at once (BehaviorSubject semantics).
    var late = permissions.coordinates.makeAsyncIterator()
    #expect(try await late.next() == b)
  }

  @Test func deniedPermissionStartsNothing() async {
    let scripted = ScriptedSource()
    let center = AuthorizationCenter(store: InMemoryGrantStore(), services: .enabled)
    let permissions = LocationPermissionManager(source: scripted.source, authorization: center)
    #expect(await permissions.requestLocation() == .denied)
    #expect(!permissions.manager.isUpdatingLocation)
    #expect(scripted.runsStarted == 0)
  }
}
