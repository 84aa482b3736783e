import Foundation
import WaymarkSimulation

/// A private mosquitto on a free loopback port for a benchmark, without persistence; stopped
/// (SIGTERM, reaped) by ``stop()``.
final class BenchmarkMosquitto {
  let port: UInt16
  private let processID: pid_t

  init() throws {
    port = try GPSDHarness.freePort()
    let config = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-bench-mosquitto-\(getpid())-\(port).conf")
    try Data(
      "user root\nlistener \(port) 127.0.0.1\nallow_anonymous true\npersistence false\n".utf8
    ).write(to: config)
    (processID, _) = try ChildProcess.startWithStderrPipe(
      ["/usr/sbin/mosquitto", "-c", config.path], environment: ["PATH": "/usr/bin:/bin"])
    usleep(300_000)
  }

  func stop() {
    kill(processID, SIGTERM)
    var status: Int32 = 0
    waitpid(processID, &status, 0)
  }
}
