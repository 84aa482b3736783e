import Foundation
import Testing
import Waymark
import WaymarkCore
import WaymarkPipeline

/// The composition shared by waymarkd and `waymark replay`: every fix of the source reaches the
/// output through the pipeline's LocationManager, in order, none dropped, also when the source
/// is far faster than the manager's streams would buffer.
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
    let pipeline = FixPipeline.replaying(source)
    #expect(pipeline.manager.authorizationStatus == .authorizedAlways)
    let seen = Locked<[Fix]>([])
    pipeline.start { fix in seen.withLock { $0.append(fix) } }
    try await Self.wait { seen.withLock { $0.count } >= fixes.count }
    pipeline.stop()
    let received = seen.withLock { $0 }
    #expect(received.count == fixes.count)
    #expect(received.map(\.time) == fixes.map(\.time))
    #expect(received.filter { $0.mode == .noFix }.count == fixes.filter { $0.mode == .noFix }.count)
    // The fixes went through the manager: its latest location is the drive's last usable fix.
    #expect(pipeline.manager.location?.coordinate == fixes.last { $0.mode != .noFix }?.coordinate)
  }

  @Test func aPushedSourceFasterThanTheStreamsLosesNothing() async throws {
    let fixes = Self.drive(50_000)
    let source = FixSource(name: "pushed") {
      AsyncStream(bufferingPolicy: .unbounded) { continuation in
        for fix in fixes { continuation.yield(fix) }
        continuation.finish()
      }
    }
    let pipeline = FixPipeline.replaying(source)
    let count = Locked(0)
    let inOrder = Locked(true)
    let last = Locked<Date?>(nil)
    pipeline.start { fix in
      let previous = last.withLock { value in
        defer { value = fix.time }
        return value
      }
      if let previous, let time = fix.time, time <= previous { inOrder.withLock { $0 = false } }
      count.withLock { $0 += 1 }
    }
    try await Self.wait { count.withLock { $0 } >= fixes.count }
    pipeline.stop()
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
    let refused = FixPipeline(
      clientID: "nobody-granted", source: counted("refused", reads: refusedReads),
      authorization: AuthorizationCenter(store: InMemoryGrantStore(), services: .enabled))
    refused.start { _ in refusedOutput.withLock { $0 += 1 } }
    let grantedReads = Locked(0)
    let grantedOutput = Locked(0)
    let granted = FixPipeline.replaying(counted("granted", reads: grantedReads))
    granted.start { _ in grantedOutput.withLock { $0 += 1 } }
    try await Self.wait { grantedOutput.withLock { $0 } >= fixes.count }
    granted.stop()
    refused.stop()
    #expect(grantedReads.withLock { $0 } >= fixes.count)
    #expect(grantedOutput.withLock { $0 } == fixes.count)
    #expect(refused.manager.authorizationStatus == .notDetermined)
    #expect(refusedReads.withLock { $0 } == 0)
    #expect(refusedOutput.withLock { $0 } == 0)
  }
}
