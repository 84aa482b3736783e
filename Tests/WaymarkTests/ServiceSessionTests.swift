import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

@testable import Waymark

/// `ServiceSession` in this process: the diagnosis rule, the need of the held sessions, and a
/// session over a local source and its ``AuthorizationCenter`` (a person thinking, a refused
/// upgrade). The daemon's side is in `ServiceSessionDaemonTests`.
@Suite(.serialized) struct ServiceSessionTests {
  private typealias Diagnostic = ServiceSession.Diagnostic
  private static let t0 = Date(timeIntervalSince1970: 1_700_000_000)

  private static func center(
    _ grant: GrantLevel?, reduced: Bool = false, agent: any AuthorizationAgent
  ) -> AuthorizationCenter {
    let grants = grant.map {
      [Grant(clientID: "app", level: $0, accuracy: reduced ? .reduced : .full, grantedAt: t0)]
    }
    return AuthorizationCenter(
      store: InMemoryGrantStore(grants ?? []), agent: agent, services: .enabled)
  }

  /// The first diagnosis of `session` that `condition` accepts (at most 10 s).
  private static func diagnosis(
    of session: ServiceSession, where condition: @escaping @Sendable (Diagnostic) -> Bool
  ) async throws -> Diagnostic {
    try await withThrowingTaskGroup(of: Diagnostic?.self) { group in
      group.addTask {
        for await diagnostic in session.diagnostics where condition(diagnostic) {
          return diagnostic
        }
        return nil
      }
      group.addTask {
        try await Task.sleep(for: .seconds(10))
        return nil
      }
      let first = try await group.next() ?? nil
      group.cancelAll()
      return try #require(first)
    }
  }

  /// requirement, purpose given, status, accuracy, services on, asking → the raised flags.
  private static let rule:
    [(
      ServiceSession.AuthorizationRequirement, Bool, AuthorizationStatus, AccuracyAuthorization,
      Bool, Bool, String
    )] = [
      (.whenInUse, false, .authorizedWhenInUse, .full, true, false, ""),
      (.always, false, .authorizedWhenInUse, .full, true, true, "insufficientlyInUse asking"),
      (.always, false, .authorizedWhenInUse, .full, true, false, "insufficientlyInUse refused"),
      (.always, false, .authorizedAlways, .full, true, false, ""),
      (.whenInUse, true, .authorizedWhenInUse, .reduced, true, false, "fullAccuracyDenied"),
      (.whenInUse, true, .authorizedWhenInUse, .reduced, true, true, "asking"),
      (.whenInUse, false, .authorizedWhenInUse, .reduced, true, false, ""),
      (.whenInUse, false, .denied, .full, true, false, "denied"),
      (.whenInUse, false, .restricted, .full, false, false, "deniedGlobally"),
      (.whenInUse, false, .restricted, .full, true, false, "restricted"),
      (.none, false, .notDetermined, .full, true, false, ""),
    ]

  @Test(arguments: rule)
  func theDiagnosisRule(
    requirement: ServiceSession.AuthorizationRequirement, purpose: Bool,
    status: AuthorizationStatus, accuracy: AccuracyAuthorization, services: Bool,
    asking: Bool, raised: String
  ) {
    let diagnostic = Diagnostic(
      requirement: requirement, wantsFullAccuracy: purpose,
      state: AuthorizationState(status: status, accuracy: accuracy), servicesEnabled: services,
      requestInProgress: asking)
    let flags = [
      ("insufficientlyInUse", diagnostic.insufficientlyInUse),
      ("asking", diagnostic.authorizationRequestInProgress),
      ("refused", diagnostic.alwaysAuthorizationDenied),
      ("fullAccuracyDenied", diagnostic.fullAccuracyDenied),
      ("denied", diagnostic.authorizationDenied),
      ("deniedGlobally", diagnostic.authorizationDeniedGlobally),
      ("restricted", diagnostic.authorizationRestricted),
      ("sessionRequired", diagnostic.serviceSessionRequired),
    ].filter(\.1).map(\.0)
    #expect(flags.joined(separator: " ") == raised)
  }

  /// The need is the most any held session asks for; released sessions no longer count.
  @Test func theNeedOfTheHeldSessions() {
    let registry = ServiceSessionRegistry(isRequired: false)
    #expect(!registry.need.isHeld)
    let inUse = registry.hold(.whenInUse, fullAccuracy: false)
    let always = registry.hold(.always, fullAccuracy: true)
    #expect(registry.need.requirement == .always && registry.need.fullAccuracy)
    registry.release(always)
    #expect(registry.need.requirement == .whenInUse && !registry.need.fullAccuracy)
    registry.release(inUse)
    #expect(!registry.need.isHeld)
  }

  /// An `always` session under a when-in-use grant asks once more; while the person thinks it
  /// says so, and a refusal leaves `insufficientlyInUse` and `alwaysAuthorizationDenied`. The
  /// purpose reaches the agent cut at 200 scalars. A when-in-use session is the control.
  @Test func aRefusedUpgradeOverALocalSource() async throws {
    let agent = PendingAgent()
    let center = Self.center(.whenInUse, agent: agent)
    let none = FixSource(name: "none") { AsyncStream { $0.finish() } }
    let source = LiveSource.fixes(none, clientID: "app", authorization: center)

    let control = ServiceSession(authorization: .whenInUse, source: source)
    #expect(try await Self.diagnosis(of: control) { _ in true } == Diagnostic())
    control.invalidate()

    let purpose = String(repeating: "p", count: 300)
    let session = ServiceSession(
      authorization: .always, fullAccuracyPurposeKey: purpose, source: source)
    defer { session.invalidate() }
    #expect(session.fullAccuracyPurposeKey?.unicodeScalars.count == 200)
    #expect(session.fullAccuracyPurposeKey?.hasSuffix("p…") == true)
    let asking = try await Self.diagnosis(of: session) { $0.authorizationRequestInProgress }
    #expect(asking.insufficientlyInUse && !asking.alwaysAuthorizationDenied)
    agent.answer(.deny)
    let refused = try await Self.diagnosis(of: session) { !$0.authorizationRequestInProgress }
    #expect(refused.insufficientlyInUse && refused.alwaysAuthorizationDenied)
    #expect(center.state(for: "app").status == .authorizedWhenInUse)

    try center.setGrant(Grant(clientID: "app", level: .always, grantedAt: Self.t0))
    #expect(try await Self.diagnosis(of: session) { !$0.insufficientlyInUse } == Diagnostic())
  }

  /// Held sessions are what live updates count: an `always` one under a when-in-use grant
  /// raises `insufficientlyInUse` on the updates, released it clears; a required session not
  /// held raises `serviceSessionRequired` and holds back locations.
  @Test func liveUpdatesTakeTheirNeedFromTheSessions() {
    var diagnosis = LiveDiagnosis(configuration: .default)
    let inUse = AuthorizationState(status: .authorizedWhenInUse)
    _ = diagnosis.apply(.authorization(inUse, servicesEnabled: true))
    let location = Location(
      coordinate: Coordinate(latitude: 48.1, longitude: 11.5), timestamp: Self.t0)
    // The implicit session: nothing raised (the control).
    #expect(diagnosis.apply(.location(location))?.insufficientlyInUse == false)
    var need = ServiceSessionRegistry.Need(requirement: .always)
    #expect(diagnosis.apply(.sessions(need))?.insufficientlyInUse == true)
    need.requirement = nil
    need.isRequired = true
    let required = diagnosis.apply(.sessions(need))
    #expect(required?.serviceSessionRequired == true && required?.insufficientlyInUse == false)
    #expect(diagnosis.apply(.location(location.advanced(by: 1))) == nil)
    need.requirement = .whenInUse
    _ = diagnosis.apply(.sessions(need))
    let delivered = diagnosis.apply(.location(location.advanced(by: 2)))
    #expect(delivered?.location != nil && delivered?.serviceSessionRequired == false)
  }
}

extension Location {
  /// The same location `seconds` later.
  fileprivate func advanced(by seconds: TimeInterval) -> Location {
    var later = self
    later.timestamp = timestamp.addingTimeInterval(seconds)
    return later
  }
}
