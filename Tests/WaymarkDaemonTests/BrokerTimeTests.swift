import Foundation
import Testing
import WaymarkBroker
import WaymarkClient
import WaymarkCore
import WaymarkTesting

/// The broker measures a request's wait for an agent on its injected time
/// (``BrokerServer/Configuration/time``), not on a clock of its own: with an hour to wait, the
/// request is answered `denied` as soon as that time moves an hour on, although little real
/// time passed. Control: while the time stands, the broker serves others and the request waits.
@Suite(.serialized) struct BrokerTimeTests {
  @Test func aRequestsWaitForAnAgentIsMeasuredOnTheInjectedTime() async throws {
    let directory = try TemporaryDirectory.socketDirectory()
    let socketPath = directory + "/waymark.sock"
    let offset = Locked(Duration.zero)
    var configuration = BrokerServer.Configuration(path: socketPath)
    configuration.agentTimeoutSeconds = 3600
    configuration.time = TimeSource.system.shifted(by: { offset.withLock { $0 } })
    let log = Locked<[String]>([])
    let broker = try BrokerServer(
      configuration: configuration, grants: InMemoryGrantStore(), services: .enabled
    ) { _, line in log.withLock { $0.append(line) } }
    defer { broker.stop() }

    let requester = try BrokerConnection(path: socketPath)
    defer { requester.close() }
    let lines = Locked<[String]>([])
    let reading = Task {
      for await message in requester.messages() { lines.withLock { $0.append(message.line) } }
    }
    defer { reading.cancel() }
    try requester.send(#"{"class":"REQUEST","level":"always"}"#)
    try await eventually("the broker logs the request waiting: \(log.withLock { $0 })") {
      log.withLock { $0.contains { $0.contains("asks for always; no agent") } }
    }
    // The broker's loop goes on (another client is answered) and the request still waits.
    try await statusAnswered(socketPath)
    #expect(!lines.withLock { $0.contains { $0.contains(#""status":"denied""#) } })

    offset.withLock { $0 = .seconds(3601) }
    try await statusAnswered(socketPath)  // wakes the loop, which reads the moved time
    try await eventually("denied after the time moved: \(lines.withLock { $0 })") {
      lines.withLock { $0.contains { $0.contains(#""status":"denied""#) } }
    }
    #expect(log.withLock { $0.contains { $0.contains("no answer to its request; told denied") } })
  }

  /// Connects, sends `STATUS` and waits (at most 20 s) for its answer.
  private func statusAnswered(_ socketPath: String) async throws {
    let connection = try BrokerConnection(path: socketPath)
    defer { connection.close() }
    let answered = Locked(false)
    let reading = Task {
      for await message in connection.messages() where message.className == "STATUS" {
        answered.withLock { $0 = true }
        break
      }
    }
    defer { reading.cancel() }
    try connection.send(#"{"class":"STATUS"}"#)
    try await eventually("STATUS answered") { answered.withLock { $0 } }
  }
}
