import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkPipeline

/// The source side shared by waymarkd and `waymark replay`: every fix handed to the pipeline
/// reaches the output through its LocationManager's authorization gate, in order, none dropped,
/// while (and only while) the grant holds; and a manager reading a source of its own (its run
/// task) hands its output every fix, also when the source is far faster than the manager's
/// streams would buffer.
@Suite struct FixPipelineTests {
  /// A drive of `count` fixes, every 97th without a fix (the outputs get those too).
  static func drive(_ count: Int) -> [Fix] {
    (0..<count).map { index in
      let time = Date(timeIntervalSince1970: 1_796_000_000 + Double(index) / 10)
      guard index % 97 != 50 else { return Fix(time: time, mode: .noFix) }
      return Fix(
        time: time, mode: .threeDimensional,
        coordinate: Coordinate(latitude: 45 + Double(index) * 1e-6, longitude: 4.8),
        horizontalError: 5)
    }
  }

  /// Waits (on the wall clock: this is the test's patience, not domain time) until `done`.
  static func wait(_ done: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(30)
    while !done() && clock.now < deadline { try await clock.sleep(for: .milliseconds(5)) }
  }

  /// A manager over `source` with an `always` grant in memory, as replay's.
  static func replayingManager(_ source: FixSource) -> LocationManager {
    LocationManager(
      clientID: FixPipeline.replayClientID, source: source,
      authorization: AuthorizationCenter(
        store: InMemoryGrantStore([
          Grant(
            clientID: FixPipeline.replayClientID, level: .always,
            grantedAt: Date(timeIntervalSince1970: 0))
        ]), agent: PolicyAuthorizationAgent(), services: .enabled))
  }

  /// Starts `manager` with `output` as its source-fix output.
  static func start(_ manager: LocationManager, _ output: @escaping @Sendable (Fix) -> Void) {
    manager.onSourceFix(output)
    manager.startUpdatingLocation()
  }

  @Test func everyFixHandedToThePipelineReachesTheOutputBeforeIngestReturns() throws {
    let fixes = Self.drive(20_000)
    let pipeline = FixPipeline.replaying(name: "drive")
    #expect(pipeline.manager.authorizationStatus == .authorizedAlways)
    let seen = Locked<[Fix]>([])
    pipeline.start { fix in seen.withLock { $0.append(fix) } }
    var late = 0
    for (index, fix) in fixes.enumerated() {
      pipeline.ingest(fix)
      if seen.withLock({ $0.count }) != index + 1 { late += 1 }
    }
    pipeline.stop()
    let received = seen.withLock { $0 }
    #expect(late == 0)
    #expect(received.map(\.time) == fixes.map(\.time))
    #expect(received.filter { $0.mode == .noFix }.count == fixes.filter { $0.mode == .noFix }.count)
    // A gate: nobody reads this manager's locations, and it computes none.
    #expect(pipeline.manager.location == nil)
    // Stopped: nothing passes any more.
    pipeline.ingest(fixes[0])
    #expect(seen.withLock { $0.count } == fixes.count)
  }

  /// The gate follows the grant and the source's health, as waymarkd's does: a pipeline whose
  /// client has no grant passes nothing while the granted one (the positive control) passes
  /// every fix; a revoked grant, a reduced one or an unreachable source close the gate, and it
  /// opens again with the grant or the source.
  @Test func theGateFollowsTheGrantAndTheSource() throws {
    let fixes = Self.drive(100)
    let store = InMemoryGrantStore()
    let center = AuthorizationCenter(store: store, services: .enabled)
    let gated = FixPipeline(clientID: "gated", sourceName: "gpsd", authorization: center)
    let passed = Locked(0)
    gated.start { _ in passed.withLock { $0 += 1 } }
    let granted = FixPipeline.replaying(name: "control")
    let controlPassed = Locked(0)
    granted.start { _ in controlPassed.withLock { $0 += 1 } }
    func feed() {
      for fix in fixes {
        gated.ingest(fix)
        granted.ingest(fix)
      }
    }
    feed()
    #expect(gated.manager.authorizationStatus == .notDetermined)
    #expect(passed.withLock { $0 } == 0)
    #expect(controlPassed.withLock { $0 } == fixes.count)
    let grantedAt = Date(timeIntervalSince1970: 1_796_000_000)
    try center.setGrant(Grant(clientID: "gated", level: .always, grantedAt: grantedAt))
    feed()
    #expect(passed.withLock { $0 } == fixes.count)
    gated.manager.ingest(SourceHealth(service: .unreachable))
    feed()
    #expect(passed.withLock { $0 } == fixes.count)
    gated.manager.ingest(SourceHealth(service: .reachable))
    feed()
    #expect(passed.withLock { $0 } == 2 * fixes.count)
    try center.setGrant(
      Grant(clientID: "gated", level: .always, accuracy: .reduced, grantedAt: grantedAt))
    feed()
    #expect(passed.withLock { $0 } == 2 * fixes.count)
    try center.revoke("gated")
    feed()
    #expect(passed.withLock { $0 } == 2 * fixes.count)
    #expect(controlPassed.withLock { $0 } == 6 * fixes.count)
    gated.stop()
    granted.stop()
  }

  @Test func aPulledSourceReachesTheOutputWhole() async throws {
    let fixes = Self.drive(20_000)
    let next = Locked(0)
    let source = FixSource(name: "pulled") {
      AsyncStream(unfolding: {
        next.withLock { index -> Fix? in
          defer { index += 1 }
          return index < fixes.count ? fixes[index] : nil
        }
      })
    }
    let manager = Self.replayingManager(source)
    #expect(manager.authorizationStatus == .authorizedAlways)
    let seen = Locked<[Fix]>([])
    Self.start(manager) { fix in seen.withLock { $0.append(fix) } }
    try await Self.wait { seen.withLock { $0.count } >= fixes.count }
    manager.stopUpdatingLocation()
    let received = seen.withLock { $0 }
    #expect(received.count == fixes.count)
    #expect(received.map(\.time) == fixes.map(\.time))
    #expect(received.filter { $0.mode == .noFix }.count == fixes.filter { $0.mode == .noFix }.count)
    // The fixes went through the manager: its latest location is the drive's last usable fix.
    #expect(manager.location?.coordinate == fixes.last { $0.mode != .noFix }?.coordinate)
  }

  @Test func aPushedSourceFasterThanTheStreamsLosesNothing() async throws {
    let fixes = Self.drive(50_000)
    let source = FixSource(name: "pushed") {
      AsyncStream(bufferingPolicy: .unbounded) { continuation in
        for fix in fixes { continuation.yield(fix) }
        continuation.finish()
      }
    }
    let manager = Self.replayingManager(source)
    let count = Locked(0)
    let inOrder = Locked(true)
    let last = Locked<Date?>(nil)
    Self.start(manager) { fix in
      let previous = last.withLock { value in
        defer { value = fix.time }
        return value
      }
      if let previous, let time = fix.time, time <= previous { inOrder.withLock { $0 = false } }
      count.withLock { $0 += 1 }
    }
    try await Self.wait { count.withLock { $0 } >= fixes.count }
    manager.stopUpdatingLocation()
    #expect(count.withLock { $0 } == fixes.count)
    #expect(inOrder.withLock { $0 })
  }

  /// The same source twice, counting its reads: the ungranted pipeline starts first; the
  /// granted one (the positive control: this source is readable and its fixes reach an output)
  /// is read and delivers the whole drive, and by then the ungranted one has read nothing and
  /// output nothing.
  @Test func withoutAGrantNothingIsRead() async throws {
    let fixes = Self.drive(100)
    func counted(_ name: String, reads: Locked<Int>) -> FixSource {
      FixSource(name: name) {
        AsyncStream(unfolding: {
          reads.withLock { index -> Fix? in
            defer { index += 1 }
            return index < fixes.count ? fixes[index] : nil
          }
        })
      }
    }
    let refusedReads = Locked(0)
    let refusedOutput = Locked(0)
    let refused = LocationManager(
      clientID: "nobody-granted", source: counted("refused", reads: refusedReads),
      authorization: AuthorizationCenter(store: InMemoryGrantStore(), services: .enabled))
    Self.start(refused) { _ in refusedOutput.withLock { $0 += 1 } }
    let grantedReads = Locked(0)
    let grantedOutput = Locked(0)
    let granted = Self.replayingManager(counted("granted", reads: grantedReads))
    Self.start(granted) { _ in grantedOutput.withLock { $0 += 1 } }
    try await Self.wait { grantedOutput.withLock { $0 } >= fixes.count }
    granted.stopUpdatingLocation()
    refused.stopUpdatingLocation()
    #expect(grantedReads.withLock { $0 } >= fixes.count)
    #expect(grantedOutput.withLock { $0 } == fixes.count)
    #expect(refused.authorizationStatus == .notDetermined)
    #expect(refusedReads.withLock { $0 } == 0)
    #expect(refusedOutput.withLock { $0 } == 0)
  }
}
