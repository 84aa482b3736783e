import Foundation
import WaymarkCore
import WaymarkSimulation

/// waymarkd as a child process: stdout on /dev/null, stderr (its log) collected as lines.
final class DaemonChild: Sendable {
  let processID: pid_t
  private let log = Locked<[String]>([])

  init(_ arguments: [String], environment: [String: String]) throws {
    let (pid, stderr) = try ChildProcess.startWithStderrPipe(arguments, environment: environment)
    processID = pid
    ChildProcess.readLines(from: stderr, threadName: "waymarkd-log") { [log] line in
      log.withLock { $0.append(line) }
    }
  }

  /// The log so far.
  var lines: [String] { log.withLock { $0 } }

  /// Waits until a log line satisfies `predicate`.
  func waitForLine(timeout: Duration, _ predicate: (String) -> Bool) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if lines.contains(where: predicate) { return }
      try await clock.sleep(for: .milliseconds(20))
    }
    let tail = lines.suffix(5).joined(separator: "\n")
    throw BenchmarkError("waymarkd did not log the expected line; its log ends:\n\(tail)")
  }

  /// SIGTERM, then SIGKILL after 5 s; reaps the child.
  func stop() {
    kill(processID, SIGTERM)
    var status: Int32 = 0
    for _ in 0..<500 {
      if waitpid(processID, &status, WNOHANG) == processID { return }
      usleep(10_000)
    }
    kill(processID, SIGKILL)
    waitpid(processID, &status, 0)
  }
}
