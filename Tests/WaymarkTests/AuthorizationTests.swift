import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkTesting

/// An agent that answers with a fixed answer and counts the questions.
final class CountingAgent: AuthorizationAgent {
  let answer: AuthorizationAnswer
  private let asked = Locked<[AuthorizationRequest]>([])

  init(_ answer: AuthorizationAnswer) { self.answer = answer }

  var requests: [AuthorizationRequest] { asked.withLock { $0 } }

  func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer {
    asked.withLock { $0.append(request) }
    return answer
  }
}

/// An agent that never answers until the test releases it (a person thinking).
final class PendingAgent: AuthorizationAgent {
  private let answers: AsyncStream<AuthorizationAnswer>
  private let continuation: AsyncStream<AuthorizationAnswer>.Continuation
  private let (askedStream, askedContinuation) = AsyncStream.makeStream(of: Void.self)

  init() { (answers, continuation) = AsyncStream.makeStream(of: AuthorizationAnswer.self) }

  func decide(_ request: AuthorizationRequest) async -> AuthorizationAnswer {
    askedContinuation.yield()
    var iterator = answers.makeAsyncIterator()
    return await iterator.next() ?? .deny
  }

  func waitUntilAsked() async {
    var iterator = askedStream.makeAsyncIterator()
    await iterator.next()
  }

  func answer(_ answer: AuthorizationAnswer) { continuation.yield(answer) }
}

func temporaryDirectory() -> URL {
  let url = FileManager.default.temporaryDirectory
    .appendingPathComponent("waymark-auth-\(UUID().uuidString)")
  try? FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  return url
}

@Suite struct AuthorizationStatusTests {
  @Test func authorizationStreamStartsWithCurrentValueAndEmitsEveryChange() async throws {
    let h = Harness(grant: .whenInUse)
    var updates = h.manager.authorizationUpdates.makeAsyncIterator()
    #expect(await updates.next() == AuthorizationState(status: .authorizedWhenInUse))
    try h.center.revoke("test.client")
    #expect(await updates.next() == AuthorizationState(status: .notDetermined))
    try h.center.setGrant(
      Grant(clientID: "test.client", level: .always, accuracy: .reduced, grantedAt: t0))
    #expect(
      await updates.next() == AuthorizationState(status: .authorizedAlways, accuracy: .reduced))
    // A second, late subscriber starts with the current value too (RxCoreLocation #24).
    var late = h.manager.authorizationUpdates.makeAsyncIterator()
    #expect(await late.next()?.status == .authorizedAlways)
  }

  @Test func requestResolvesOnGrant() async throws {
    let directory = temporaryDirectory()
    let agent = CountingAgent(.allow(.whenInUse, .full))
    let h = Harness(grant: nil, agent: agent, store: FileGrantStore(directory: directory))
    #expect(h.manager.authorizationStatus == .notDetermined)
    let status = await h.manager.requestWhenInUseAuthorization()
    #expect(status == .authorizedWhenInUse)
    #expect(agent.requests.map(\.level) == [.whenInUse])
    let saved = try FileGrantStore(directory: directory).grant(for: "test.client")
    #expect(saved?.level == .whenInUse)
    #expect(saved?.accuracy == .full)
    // Decided: asking again resolves at once, without a question.
    #expect(await h.manager.requestWhenInUseAuthorization() == .authorizedWhenInUse)
    #expect(agent.requests.count == 1)
  }

  @Test func requestResolvesOnDenial() async throws {
    let directory = temporaryDirectory()
    let agent = CountingAgent(.deny)
    let h = Harness(grant: nil, agent: agent, store: FileGrantStore(directory: directory))
    #expect(await h.manager.requestWhenInUseAuthorization() == .denied)
    #expect(try FileGrantStore(directory: directory).grant(for: "test.client")?.level == .never)
    #expect(await h.manager.requestAlwaysAuthorization() == .denied)
    #expect(agent.requests.count == 1)
  }

  @Test func defaultPolicyAgentDenies() async {
    let h = Harness(grant: nil, agent: PolicyAuthorizationAgent())
    #expect(await h.manager.requestWhenInUseAuthorization() == .denied)
  }

  @Test func requestResolvesWithTheFirstDecidedStatusFromAnyPath() async throws {
    let agent = PendingAgent()
    let h = Harness(grant: nil, agent: agent)
    let request = Task { await h.manager.requestWhenInUseAuthorization() }
    await agent.waitUntilAsked()
    // While the person is still thinking, an administrator grants `always` elsewhere.
    try h.center.setGrant(Grant(clientID: "test.client", level: .always, grantedAt: t0))
    #expect(await request.value == .authorizedAlways)
    agent.answer(.deny)
  }

  @Test func concurrentRequestsShareOneQuestion() async {
    let agent = PendingAgent()
    let h = Harness(grant: nil, agent: agent)
    let first = Task { await h.manager.requestWhenInUseAuthorization() }
    await agent.waitUntilAsked()
    let second = Task { await h.manager.requestWhenInUseAuthorization() }
    agent.answer(.allow(.whenInUse, .reduced))
    #expect(await first.value == .authorizedWhenInUse)
    #expect(await second.value == .authorizedWhenInUse)
    #expect(h.manager.accuracyAuthorization == .reduced)
  }

  @Test func updatesBeginWhenTheGrantArrives() async throws {
    let h = Harness(grant: nil, agent: CountingAgent(.allow(.whenInUse, .full)))
    var locations = h.manager.locations.makeAsyncIterator()
    h.manager.startUpdatingLocation()
    #expect(h.scripted.runsStarted == 0)  // nothing read from the source before a grant
    #expect(await h.manager.requestWhenInUseAuthorization() == .authorizedWhenInUse)
    await h.scripted.waitForRuns(1)
    h.scripted.send(fix(0, at: 0))
    #expect(seconds(try await locations.take(1)) == [0])
  }

  @Test func updatesStopWhenRevoked() async throws {
    let h = Harness(grant: .whenInUse)
    await h.start()
    #expect(h.scripted.runsStarted == 1)
    try h.center.revoke("test.client")
    #expect(h.manager.authorizationStatus == .notDetermined)
    try h.center.setGrant(Grant(clientID: "test.client", level: .whenInUse, grantedAt: t0))
    await h.scripted.waitForRuns(2)
    #expect(h.scripted.runsStarted == 2)
  }

  @Test func disabledServicesAreRestrictedAndNobodyIsAsked() async {
    let agent = CountingAgent(.allow(.always, .full))
    let h = Harness(grant: .always, agent: agent, services: .disabled)
    #expect(h.manager.authorizationStatus == .restricted)
    #expect(await h.manager.requestAlwaysAuthorization() == .restricted)
    #expect(agent.requests.isEmpty)
  }

  @Test func servicesSwitchFile() throws {
    let directory = temporaryDirectory()
    let path = directory.appendingPathComponent("disabled").path
    let services = LocationServicesSwitch.file(path)
    #expect(services.isEnabled)
    _ = FileManager.default.createFile(atPath: path, contents: nil)
    #expect(!services.isEnabled)
    let center = AuthorizationCenter(store: InMemoryGrantStore(), services: services)
    #expect(center.state(for: "x").status == .restricted)
  }

  @Test func allowOnceLastsForTheProcessOnly() async throws {
    let directory = temporaryDirectory()
    let store = FileGrantStore(directory: directory)
    let agent = CountingAgent(.allowOnce(.full))
    let h = Harness(grant: nil, agent: agent, store: store)
    #expect(await h.manager.requestWhenInUseAuthorization() == .authorizedWhenInUse)
    #expect(try store.allGrants().isEmpty)  // nothing persisted
    // Another manager in the same process (same center) is authorized too.
    let other = LocationManager(
      clientID: "test.client", source: h.scripted.source, authorization: h.center)
    #expect(other.authorizationStatus == .authorizedWhenInUse)
    // "Always" is not offered on top of allow-once.
    #expect(await h.manager.requestAlwaysAuthorization() == .authorizedWhenInUse)
    #expect(agent.requests.count == 1)
    // A new process (a new center on the same store) starts undecided.
    let next = AuthorizationCenter(store: store, services: .enabled)
    #expect(next.state(for: "test.client").status == .notDetermined)
  }

  @Test func upgradeToAlwaysAsksOnceAndRefusalKeepsWhenInUse() async throws {
    let refusing = CountingAgent(.deny)
    let h = Harness(grant: .whenInUse, agent: refusing)
    #expect(await h.manager.requestAlwaysAuthorization() == .authorizedWhenInUse)
    #expect(refusing.requests.map(\.level) == [.always])
    #expect(refusing.requests.first?.currentGrant?.level == .whenInUse)

    let accepting = CountingAgent(.allow(.always, .full))
    let upgraded = Harness(grant: .whenInUse, agent: accepting)
    var updates = upgraded.manager.authorizationUpdates.makeAsyncIterator()
    #expect(await updates.next()?.status == .authorizedWhenInUse)
    #expect(await upgraded.manager.requestAlwaysAuthorization() == .authorizedAlways)
    #expect(await updates.next()?.status == .authorizedAlways)
  }

  @Test func unsavableGrantStillHoldsForTheProcess() async throws {
    let directory = temporaryDirectory()
    let blocker = directory.appendingPathComponent("file")
    _ = FileManager.default.createFile(atPath: blocker.path, contents: Data("x".utf8))
    // The "directory" is a regular file: every write fails.
    let store = FileGrantStore(directory: blocker)
    let h = Harness(grant: nil, agent: CountingAgent(.allow(.always, .full)), store: store)
    #expect(await h.manager.requestAlwaysAuthorization() == .authorizedAlways)
  }
}

@Suite struct AuthorizationGrantStoreTests {
  @Test func fileStoreRoundTripsRecords() throws {
    let directory = temporaryDirectory().appendingPathComponent("nested/state")
    let store = FileGrantStore(directory: directory)
    #expect(try store.allGrants().isEmpty)
    let date = Date(timeIntervalSince1970: 1_796_000_000.123)
    try store.save(Grant(clientID: "b.app", level: .always, accuracy: .reduced, grantedAt: date))
    try store.save(Grant(clientID: "a.app", level: .never, grantedAt: date))
    try store.save(Grant(clientID: "b.app", level: .whenInUse, grantedAt: date))
    let reopened = FileGrantStore(directory: directory)
    let all = try reopened.allGrants()
    #expect(all.map(\.clientID) == ["a.app", "b.app"])
    #expect(all[1] == Grant(clientID: "b.app", level: .whenInUse, grantedAt: date))
    #expect(try reopened.removeGrant(for: "a.app"))
    #expect(try !reopened.removeGrant(for: "a.app"))
    try reopened.removeAll()
    #expect(try store.allGrants().isEmpty)
    let attributes = try FileManager.default.attributesOfItem(atPath: store.fileURL.path)
    #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
  }

  @Test func fileFormatIsDocumentedJSON() throws {
    let directory = temporaryDirectory()
    let store = FileGrantStore(directory: directory)
    try store.save(
      Grant(
        clientID: "org.example.app", level: .whenInUse, grantedAt: Date(timeIntervalSince1970: 0)))
    let text = try String(contentsOf: store.fileURL, encoding: .utf8)
    #expect(
      text
        == #"{"grants":[{"accuracy":"full","client":"org.example.app","grantedAt":"1970-01-01T00:00:00.000Z","level":"whenInUse"}],"version":1}"#
        + "\n")
  }

  @Test func corruptFileIsAnErrorAndRestricts() throws {
    let directory = temporaryDirectory()
    let store = FileGrantStore(directory: directory)
    try Data("{not json".utf8).write(to: store.fileURL)
    #expect(throws: GrantStoreError.self) { try store.allGrants() }
    let center = AuthorizationCenter(store: store, services: .enabled)
    #expect(center.state(for: "x").status == .restricted)
    try Data(
      #"{"version":1,"grants":[{"client":"x","level":"sometimes","accuracy":"full","grantedAt":"1970-01-01T00:00:00Z"}]}"#
        .utf8
    ).write(to: store.fileURL)
    #expect(throws: GrantStoreError.corrupt(path: store.fileURL.path, reason: "grant 0 is invalid"))
    {
      try store.grant(for: "x")
    }
  }

  @Test func stateDirectoryResolution() {
    #expect(
      StateDirectory.resolve(environment: ["STATE_DIRECTORY": "/var/lib/waymark:/other"]).path
        == "/var/lib/waymark")
    #expect(
      StateDirectory.resolve(environment: ["XDG_STATE_HOME": "/x/state", "HOME": "/home/u"]).path
        == "/x/state/waymark")
    #expect(
      StateDirectory.resolve(environment: ["HOME": "/home/u"]).path
        == "/home/u/.local/state/waymark")
  }

  @Test func grantLevelParsing() {
    #expect(GrantLevel(parsing: "whenInUse") == .whenInUse)
    #expect(GrantLevel(parsing: "when-in-use") == .whenInUse)
    #expect(GrantLevel(parsing: "ALWAYS") == .always)
    #expect(GrantLevel(parsing: "never") == .never)
    #expect(GrantLevel(parsing: "sometimes") == nil)
  }
}
