import Foundation
import Testing
import Waymark
import WaymarkCore

@testable import WaymarkCLI
@testable import WaymarkDaemon

@Suite struct HookRunnerTests {
  static let home = Coordinate(latitude: 52.52, longitude: 13.405)

  static func arrival(_ id: String = "home", at seconds: Double = 0) -> PlaceEvent {
    .arrival(
      PlaceEvent.Arrival(
        time: Date(timeIntervalSince1970: 1_795_000_000 + seconds), placeID: id,
        placeName: "Home \"sweet\" home", coordinate: home,
        reason: EventReason(
          rule: "inside", distanceMeters: 12.34, horizontalAccuracyMeters: 5,
          enterRadiusMeters: 100, exitRadiusMeters: 130, confirmations: 3, dwellSeconds: 2)))
  }

  static let departure = PlaceEvent.departure(
    PlaceEvent.Departure(
      time: Date(timeIntervalSince1970: 1_795_000_600), placeID: "home",
      placeName: "Home", coordinate: home.offset(by: 150, bearingDegrees: 90),
      arrival: Date(timeIntervalSince1970: 1_795_000_000),
      reason: EventReason(
        rule: "outside", distanceMeters: 150, horizontalAccuracyMeters: 5,
        enterRadiusMeters: 100, exitRadiusMeters: 130, confirmations: 3, dwellSeconds: 2)))

  /// Closes the write end of the pipe `fds`, reads the read end to its end (and closes it).
  static func readToEnd(_ fds: [Int32]) -> String {
    close(fds[1])
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = read(fds[0], &buffer, buffer.count)
      if count <= 0 { break }
      data.append(contentsOf: buffer[0..<count])
    }
    close(fds[0])
    return String(decoding: data, as: UTF8.self)
  }

  func waitUntil(_ condition: () -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(20)
    while !condition() {
      guard clock.now < deadline else { throw TestFailure(description: "condition not met") }
      try await clock.sleep(for: .milliseconds(10))
    }
  }

  @Test func aHookGetsTheEventInItsEnvironmentAndAsJSONOnStandardInput() async throws {
    let directory = try TemporaryDirectory()
    let out = directory.file("out")
    let runner = HookRunner(
      settings: .init(
        arrival: "env | grep ^WAYMARK_ | sort > \(out).env; cat > \(out).json",
        departure: "echo \"$WAYMARK_EVENT $WAYMARK_DURATION $WAYMARK_ARRIVAL\" > \(out).dep",
        timeoutSeconds: 10, queueCapacity: 4),
      log: DaemonLog(descriptor: open("/dev/null", O_WRONLY), level: .debug),
      environment: ["PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "1"])
    let event = HookRunnerTests.arrival()
    runner.enqueue(event)
    runner.enqueue(HookRunnerTests.departure)
    // Waits for the queued hooks to finish.
    runner.shutdown(timeoutSeconds: 20)
    let json = try String(contentsOfFile: out + ".json", encoding: .utf8)
    #expect(json == event.jsonLine().string + "\n")
    let environment = try String(contentsOfFile: out + ".env", encoding: .utf8)
      .split(separator: "\n").map(String.init)
    #expect(
      environment == [
        "WAYMARK_DISTANCE=12.3",
        "WAYMARK_EVENT=ARRIVAL",
        "WAYMARK_LATITUDE=52.520000000",
        "WAYMARK_LONGITUDE=13.405000000",
        "WAYMARK_PLACE_ID=home",
        "WAYMARK_PLACE_NAME=Home \"sweet\" home",
        "WAYMARK_RULE=inside",
        "WAYMARK_TIME=2026-11-18T11:06:40.000Z",
      ])
    let departure = try String(contentsOfFile: out + ".dep", encoding: .utf8)
    #expect(departure == "DEPARTURE 600.000 2026-11-18T11:06:40.000Z\n")
  }

  @Test func systemdVariablesAndDescriptorsAreNotPassedToHooks() async throws {
    let directory = try TemporaryDirectory()
    let out = directory.file("env")
    let runner = HookRunner(
      settings: .init(
        arrival: "env > \(out); exec ls -l /proc/self/fd > \(out).fd", departure: nil,
        timeoutSeconds: 10,
        queueCapacity: 4),
      log: DaemonLog(descriptor: open("/dev/null", O_WRONLY)),
      environment: ["PATH": "/usr/bin:/bin", "NOTIFY_SOCKET": "@x", "WATCHDOG_USEC": "1"])
    runner.enqueue(HookRunnerTests.arrival())
    runner.shutdown(timeoutSeconds: 20)
    let environment = try String(contentsOfFile: out, encoding: .utf8)
    #expect(!environment.contains("NOTIFY_SOCKET"))
    #expect(!environment.contains("WATCHDOG_USEC"))
    #expect(environment.contains("PATH=/usr/bin:/bin"))
    // Only standard input, output and error are inherited (this test process has many more
    // descriptors open); the only other one `ls` sees is its own listing of /proc/self/fd.
    let listing = try String(contentsOfFile: out + ".fd", encoding: .utf8)
    let inherited = listing.split(separator: "\n").compactMap { line -> String? in
      guard let arrow = line.range(of: " -> ") else { return nil }
      let number = line[..<arrow.lowerBound].split(separator: " ").last ?? ""
      let target = line[arrow.upperBound...]
      return ["0", "1", "2"].contains(number) || target.hasPrefix("/proc/") ? nil : String(line)
    }
    #expect(inherited.isEmpty, "\(inherited)")
    #expect(listing.contains(" 0 -> pipe:") && listing.contains(" 2 -> pipe:"))
  }

  /// A hook that never ends is terminated at the timeout (with the children of its shell),
  /// and the next hook still runs.
  @Test func aHangingHookIsTerminatedAndTheNextOneRuns() async throws {
    let directory = try TemporaryDirectory()
    var fds: [Int32] = [0, 0]
    try #require(pipe(&fds) == 0)
    // A duration no other process uses, so that the check below finds only ours.
    let nap = "600.\(UInt32.random(in: 100_000...999_999))"
    let runner = HookRunner(
      settings: .init(
        arrival:
          "if [ \"$WAYMARK_PLACE_ID\" = stuck ]; then sleep \(nap); else touch \(directory.file("ran")); fi",
        departure: nil, timeoutSeconds: 0.3, queueCapacity: 4),
      log: DaemonLog(descriptor: fds[1]),
      environment: ["PATH": "/usr/bin:/bin"])
    runner.enqueue(HookRunnerTests.arrival("stuck"))
    runner.enqueue(HookRunnerTests.arrival("next", at: 1))
    runner.shutdown(timeoutSeconds: 20)
    let log = HookRunnerTests.readToEnd(fds)
    #expect(log.contains("<4>ARRIVAL hook for place 'stuck' timed out after 0.3 s"))
    #expect(FileManager.default.fileExists(atPath: directory.file("ran")))
    // No `sleep` survives: the whole process group was terminated.
    let survivors = try CommandRunShell.output("pgrep -f '^sleep \(nap)$' || true")
    #expect(survivors.isEmpty, "left running: \(survivors)")
  }

  /// A hook's timeout is measured on the runner's injected time, not read from the system: an
  /// hour-long timeout ends a hanging hook once that time moves an hour on, although little real
  /// time passed. Control: a hook that ends by itself while the time stands is not timed out.
  @Test func aHooksTimeoutIsMeasuredOnTheInjectedTime() async throws {
    let directory = try TemporaryDirectory()
    var fds: [Int32] = [0, 0]
    try #require(pipe(&fds) == 0)
    let offset = Locked(Duration.zero)
    let started = directory.file("started")
    let nap = "600.\(UInt32.random(in: 100_000...999_999))"
    let runner = HookRunner(
      settings: .init(
        arrival:
          "if [ \"$WAYMARK_PLACE_ID\" = stuck ]; then touch \(started); sleep \(nap); else sleep 0.2; fi",
        departure: nil, timeoutSeconds: 3600, queueCapacity: 4),
      log: DaemonLog(descriptor: fds[1], level: .info),
      environment: ["PATH": "/usr/bin:/bin"],
      time: TimeSource.system.shifted(by: { offset.withLock { $0 } }))
    runner.enqueue(HookRunnerTests.arrival("short"))
    runner.enqueue(HookRunnerTests.arrival("stuck", at: 1))
    try await waitUntil { FileManager.default.fileExists(atPath: started) }
    offset.withLock { $0 = .seconds(3601) }
    runner.shutdown(timeoutSeconds: 20)
    let log = HookRunnerTests.readToEnd(fds)
    #expect(log.contains("ARRIVAL hook for place 'short' succeeded"), "\(log)")
    #expect(log.contains("ARRIVAL hook for place 'stuck' timed out after 3600.0 s"), "\(log)")
    let survivors = try CommandRunShell.output("pgrep -f '^sleep \(nap)$' || true")
    #expect(survivors.isEmpty, "left running: \(survivors)")
  }

  /// While a hook is busy, events queue up to the capacity; beyond it the oldest waiting one is
  /// dropped and enqueueing never waits for the hook.
  @Test func theQueueIsBoundedAndEnqueueNeverBlocks() async throws {
    let directory = try TemporaryDirectory()
    let gate = directory.file("gate")
    let seen = directory.file("seen")
    let runner = HookRunner(
      settings: .init(
        arrival: "touch \(seen).$WAYMARK_PLACE_ID; while [ ! -e \(gate) ]; do sleep 0.02; done; "
          + "echo $WAYMARK_PLACE_ID >> \(seen)",
        departure: nil, timeoutSeconds: 60, queueCapacity: 3),
      log: DaemonLog(descriptor: open("/dev/null", O_WRONLY)),
      environment: ["PATH": "/usr/bin:/bin"])
    runner.enqueue(HookRunnerTests.arrival("p0"))
    // p0 is running, blocked on the gate, and the queue is empty again.
    try await waitUntil { FileManager.default.fileExists(atPath: seen + ".p0") }
    for index in 1...10 { runner.enqueue(HookRunnerTests.arrival("p\(index)", at: Double(index))) }
    // None has finished yet: p0 still waits for the gate.
    #expect(!FileManager.default.fileExists(atPath: seen))
    #expect(runner.droppedCount == 7)
    #expect(FileManager.default.createFile(atPath: gate, contents: nil))
    runner.shutdown(timeoutSeconds: 20)
    let order = try String(contentsOfFile: seen, encoding: .utf8).split(separator: "\n")
    #expect(order == ["p0", "p8", "p9", "p10"])
  }
}

enum CommandRunShell {
  static func output(_ command: String) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/bin/sh")
    process.arguments = ["-c", command]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let data = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    return String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
  }
}
