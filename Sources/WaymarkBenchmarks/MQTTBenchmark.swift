import Foundation
import WaymarkCore
import WaymarkMQTT
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// `waymark-bench mqtt`: how fast a full outbox drains to a local mosquitto after an outage,
/// next to `mosquitto_pub -l` publishing the same messages at the same QoS in the same run.
///
///   waymark-bench mqtt [--messages 100000] [--rounds 3] [--qos 1]
enum MQTTBenchmark: Benchmark {
  /// The options, declared once: parsing and `waymark-bench <name> --help` read them.
  static let options = OptionTable.benchmark([
    .number("--messages", default: "100000", "Messages in the outbox"),
    .rounds,
    .number("--qos", default: "1", "MQTT QoS of the messages"),
  ])

  static func run(_ options: BenchmarkArguments) async throws {
    let count = options.int("--messages")
    let rounds = options.int("--rounds")
    let qos = options.int("--qos")
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-mqtt-bench-\(getpid())")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let mosquitto = try BenchmarkMosquitto()
    defer { mosquitto.stop() }
    let port = mosquitto.port

    // A realistic payload: an OwnTracks location of the demo drive.
    let fix = Fix(
      time: Date(timeIntervalSince1970: 1_796_000_000), mode: .threeDimensional,
      coordinate: Coordinate(latitude: 45.7603853, longitude: 4.8359038), altitudeMSL: 172,
      speed: 13.9, track: 87.5, horizontalError: 6)
    let payload = OwnTracks.location(fix, tid: "wb")!
    // mosquitto_pub 2.0.11's line mode ends at the first PUBACK whose message id equals the
    // last line's: ids are 16-bit, so past 65,535 lines it stops early (100,000 lines at QoS 1:
    // 34,485 PUBLISH sent, 34,465 acknowledged). The reference is therefore cut into files of
    // at most `chunk` lines, published one after the other, and checked once (untimed, `-d`)
    // to deliver every message.
    let chunk = 60_000
    var chunks: [String] = []
    var remaining = count
    while remaining > 0 {
      let lines = directory.appendingPathComponent("messages-\(chunks.count).txt")
      try Data(String(repeating: payload + "\n", count: min(chunk, remaining)).utf8).write(
        to: lines)
      chunks.append(lines.path)
      remaining -= chunk
    }
    let reference = { (round: Int, debug: Bool) in
      chunks.enumerated().map { index, path in
        "/usr/bin/mosquitto_pub -h 127.0.0.1 -p \(port) -q \(qos) -t bench/pub -i pub-\(round)-\(index)"
          + (debug ? " -d" : "") + " -l < '\(path)'"
      }.joined(separator: " && ")
    }
    let acknowledged = try CommandRun.run(
      "/bin/sh", ["-c", "(" + reference(0, true) + ") | grep -c 'received PUBACK'"]
    ).output
    guard Int(acknowledged.trimmingCharacters(in: .whitespacesAndNewlines)) == count else {
      print("mosquitto_pub -l acknowledged \(acknowledged) of \(count) messages")
      exit(1)
    }
    print("mqtt: \(count) messages of \(payload.utf8.count) bytes, QoS \(qos), mosquitto \(port)")
    print(
      "reference: mosquitto_pub -l, \(chunks.count) file(s) of at most \(chunk) lines, "
        + "all acknowledged")
    print("| round | waymark outbox drain (msg/s) | mosquitto_pub -l (msg/s) | ratio |")
    print("|---:|---:|---:|---:|")
    var ratios: [Double] = []
    for round in 1...rounds {
      let store = directory.appendingPathComponent("outbox-\(round).db").path
      let database = try Database(path: store)
      let message = OutboxMessage(
        kind: .location, topic: "bench/outbox", payload: payload, qos: qos)
      try database.write {
        try OutboxRepository($0).enqueue(
          Array(repeating: message, count: count), now: Date(), maximum: nil)
      }
      var settings = MQTTSettings(
        host: "127.0.0.1", port: port, identity: MQTTIdentity(hostname: "bench", machineID: nil))
      settings.qos = qos
      settings.clientID = "waymark-bench-\(round)"
      let publisher = MQTTPublisher(settings: settings, database: database, log: { _, _ in })
      let clock = ContinuousClock()
      let start = clock.now
      try publisher.start()
      guard publisher.waitUntilEmpty(timeout: .seconds(600)) else {
        print("round \(round): the outbox did not drain")
        exit(1)
      }
      let drain = start.duration(to: clock.now)
      publisher.stop()

      let referenceStart = clock.now
      let status = try shellStatus(reference(round, false))
      let referenceTime = referenceStart.duration(to: clock.now)
      guard status == 0 else {
        print("mosquitto_pub failed (\(status))")
        exit(1)
      }
      let ours = Double(count) / drain.seconds
      let theirs = Double(count) / referenceTime.seconds
      ratios.append(ours / theirs)
      print("| \(round) | \(Int(ours)) | \(Int(theirs)) | \((ours / theirs).fixed(2)) |")
    }
    let median = ratios.sorted()[ratios.count / 2]
    print("median ratio (outbox drain / mosquitto_pub -l): \(median.fixed(2))")
  }
}

/// Runs `command` with `/bin/sh -c` and returns its exit status.
private func shellStatus(_ command: String) throws -> Int32 {
  let (pid, stderr) = try ChildProcess.startWithStderrPipe(
    ["/bin/sh", "-c", command], environment: ["PATH": "/usr/bin:/bin"])
  close(stderr)
  var status: Int32 = 0
  waitpid(pid, &status, 0)
  return (status >> 8) & 0xff
}
