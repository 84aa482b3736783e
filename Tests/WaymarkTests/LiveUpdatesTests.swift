import Foundation
import NMEA
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

/// `LocationUpdate.liveUpdates` over a log-like source (finite, ends) and a scripted one, with
/// in-memory grants: the diagnosis of each update and the pausing of each configuration.
@Suite struct LiveUpdatesTests {
  static let client = "live.test"

  static func center(
    _ level: GrantLevel?, accuracy: AccuracyAuthorization = .full,
    agent: any AuthorizationAgent = PolicyAuthorizationAgent(),
    services: LocationServicesSwitch = .enabled
  ) -> AuthorizationCenter {
    let grants = level.map {
      [Grant(clientID: client, level: $0, accuracy: accuracy, grantedAt: t0)]
    }
    return AuthorizationCenter(
      store: InMemoryGrantStore(grants ?? []), agent: agent, services: services)
  }

  /// A finite source of `fixes`, like a log.
  static func log(_ fixes: [Fix]) -> FixSource {
    FixSource(name: "log") {
      AsyncStream { continuation in
        for fix in fixes { continuation.yield(fix) }
        continuation.finish()
      }
    }
  }

  static func source(
    _ fixSource: FixSource, _ center: AuthorizationCenter, clock: ManualClock = ManualClock()
  ) -> LiveSource {
    .fixes(fixSource, clientID: client, authorization: center, clock: clock)
  }

  static func all(_ updates: LocationUpdate.Updates) async throws -> [LocationUpdate] {
    var collected: [LocationUpdate] = []
    for try await update in updates { collected.append(update) }
    return collected
  }

  /// The drive of ``StationaryDetectorTests``: stop from 100 s to 220 s of fix time.
  static let drive = StationaryDetectorTests.drive().fixes()

  @Test func aDriveWithAStopPausesAndResumes() async throws {
    let updates = try await Self.all(
      LocationUpdate.liveUpdates(
        .default, source: Self.source(Self.log(Self.drive), Self.center(.whenInUse))))
    let located = updates.compactMap { update in update.location.map { ($0, update) } }
    let stopStart = t0.addingTimeInterval(100)
    let departure = t0.addingTimeInterval(220)
    let raising = try #require(located.first { $0.1.isStationary })
    #expect(raising.1.stationary)
    #expect(raising.0.timestamp.timeIntervalSince(stopStart) >= 30)
    // Paused: nothing between the update that raised it and driving off.
    #expect(
      !located.contains { $0.0.timestamp > raising.0.timestamp && $0.0.timestamp < departure })
    // Resumed, cleared, until the log's end.
    let resumed = try #require(located.first { $0.0.timestamp >= departure })
    #expect(!resumed.1.isStationary)
    #expect(located.last?.0.timestamp == Self.drive.last?.time)
    #expect(located.allSatisfy { !$0.1.authorizationDenied && !$0.1.accuracyLimited })
    // The end of the log: no more locations.
    #expect(updates.last?.location == nil && updates.last?.locationUnavailable == true)

    // Positive control: navigation does not pause; the stop goes on being reported.
    let navigation = try await Self.all(
      LocationUpdate.liveUpdates(
        .automotiveNavigation, source: Self.source(Self.log(Self.drive), Self.center(.whenInUse))))
    let during = navigation.filter {
      guard let time = $0.location?.timestamp else { return false }
      return time > raising.0.timestamp && time < departure
    }
    #expect(during.count > 60)
    #expect(during.allSatisfy { $0.isStationary })
  }

  @Test func aDeniedGrantIsDiagnosed() async throws {
    var denied = LocationUpdate.liveUpdates(
      source: Self.source(Self.log(Self.drive), Self.center(.never))
    ).makeAsyncIterator()
    let first = try #require(try await denied.next())
    #expect(first.location == nil)
    #expect(first.authorizationDenied)
    #expect(!first.authorizationDeniedGlobally && !first.locationUnavailable)
    // Positive control: with a grant, locations and no denial.
    var allowed = LocationUpdate.liveUpdates(
      source: Self.source(Self.log(Self.drive), Self.center(.whenInUse))
    ).makeAsyncIterator()
    let located = try #require(try await allowed.next())
    #expect(located.location != nil && !located.authorizationDenied)
  }

  @Test func servicesOffAreDeniedGlobally() async throws {
    var off = LocationUpdate.liveUpdates(
      source: Self.source(Self.log(Self.drive), Self.center(.whenInUse, services: .disabled))
    ).makeAsyncIterator()
    let first = try #require(try await off.next())
    #expect(first.location == nil && first.authorizationDeniedGlobally)
    #expect(!first.authorizationDenied)
  }

  @Test func aReducedGrantIsAccuracyLimited() async throws {
    let reduced = try await Self.all(
      LocationUpdate.liveUpdates(
        source: Self.source(Self.log(Self.drive), Self.center(.whenInUse, accuracy: .reduced))))
    let located = reduced.filter { $0.location != nil }
    #expect(!located.isEmpty)
    #expect(located.allSatisfy { $0.accuracyLimited })
    // Positive control: the full grant's locations are not limited (asserted in the drive).
    let full = try await Self.all(
      LocationUpdate.liveUpdates(source: Self.source(Self.log(Self.drive), Self.center(.whenInUse)))
    )
    #expect(full.filter { $0.location != nil }.allSatisfy { !$0.accuracyLimited })
  }

  @Test func aRequestIsInProgressUntilAnswered() async throws {
    let asked = Self.center(nil, agent: PolicyAuthorizationAgent(answer: .allow(.whenInUse, .full)))
    var updates = LocationUpdate.liveUpdates(source: Self.source(Self.log(Self.drive), asked))
      .makeAsyncIterator()
    let first = try #require(try await updates.next())
    #expect(first.location == nil && first.authorizationRequestInProgress)
    let next = try #require(try await updates.next())
    #expect(next.location != nil && !next.authorizationRequestInProgress)
    #expect(asked.state(for: Self.client).status == .authorizedWhenInUse)
  }

  @Test func anUnreachableSourceIsUnavailableUntilTheNextFix() async throws {
    let scripted = ScriptedSource()
    var updates = LocationUpdate.liveUpdates(
      source: Self.source(scripted.source, Self.center(.whenInUse))
    ).makeAsyncIterator()
    let fixes = Self.drive
    // The session (and its source) starts with the iterator.
    await scripted.waitForRuns(1)
    scripted.send(fixes[0])
    let located = try #require(try await updates.next())
    #expect(located.location != nil && !located.locationUnavailable)
    scripted.send(health: SourceHealth(service: .unreachable, lastError: "gpsd gone"))
    let gone = try #require(try await updates.next())
    #expect(gone.location == nil && gone.locationUnavailable)
    #expect(!gone.authorizationDeniedGlobally)
    scripted.send(health: SourceHealth(service: .reachable))
    scripted.send(fixes[1])
    let back = try #require(try await updates.next())
    #expect(back.location != nil && !back.locationUnavailable)
  }

  @Test func aQuietSourceGoesStale() async throws {
    let scripted = ScriptedSource()
    let clock = ManualClock()
    var updates = LocationUpdate.liveUpdates(
      source: Self.source(scripted.source, Self.center(.whenInUse), clock: clock)
    ).makeAsyncIterator()
    await scripted.waitForRuns(1)
    scripted.send(Self.drive[0])
    let first = try #require(try await updates.next())
    #expect(first.location != nil && !first.locationUnavailable)
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(10))  // a fix came in this period: not stale
    await clock.waitForSleepers(1)
    clock.advance(by: .seconds(10))
    let stale = try #require(try await updates.next())
    #expect(stale.location == nil && stale.locationUnavailable)
    scripted.send(Self.drive[1])
    let back = try #require(try await updates.next())
    #expect(back.location != nil && !back.locationUnavailable)
  }

  @Test func significantChangesOfADrive() async throws {
    var route = RouteSynthesizer(start: t0, origin: origin)
    route.drive(to: origin.offset(by: 2100, bearingDegrees: 90), speedMetersPerSecond: 10)
    let changes = try await Self.all(
      LocationUpdate.significantLocationChanges(
        source: Self.source(Self.log(route.fixes()), Self.center(.whenInUse))))
    #expect(changes.count == 5)
    #expect(changes.allSatisfy { $0.location != nil })
    let closer = try await Self.all(
      LocationUpdate.significantLocationChanges(
        minimumDistanceMeters: 1000,
        source: Self.source(Self.log(route.fixes()), Self.center(.whenInUse))))
    #expect(closer.count == 3)
  }
}

extension LiveUpdatesTests {
  @Test func theMaximumAccuracyDropsOnlyKnownWorseLocations() async throws {
    let poor = ScriptedSource.fix(at: origin, time: t0, accuracy: 80)
    let unknown = ScriptedSource.fix(at: origin, time: t0.addingTimeInterval(1), accuracy: nil)
    let good = ScriptedSource.fix(at: origin, time: t0.addingTimeInterval(2), accuracy: 5)
    let navigation = try await Self.all(
      LocationUpdate.liveUpdates(
        .automotiveNavigation,
        source: Self.source(Self.log([poor, unknown, good]), Self.center(.whenInUse))))
    #expect(navigation.compactMap(\.location?.timestamp) == [unknown.time, good.time])
    // Positive control: the default configuration takes the poor one as well.
    let any = try await Self.all(
      LocationUpdate.liveUpdates(
        source: Self.source(Self.log([poor, unknown, good]), Self.center(.whenInUse))))
    #expect(any.compactMap(\.location?.timestamp).count == 3)
  }
}
