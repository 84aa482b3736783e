import Foundation
import NMEA
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// A Traccar-like OsmAnd server (`Tests/Fixtures/traccar/osmand-server.py`) on `port`, recording
/// what it accepts in `record`.
private func osmandServer(
  port: UInt16, record: String, known: [String], tls: (cert: String, key: String)? = nil
) async throws -> DaemonProcess {
  let script = Products.packageRoot.appendingPathComponent(
    "Tests/Fixtures/traccar/osmand-server.py"
  ).path
  let server = try DaemonProcess(
    executable: "/usr/bin/python3", arguments: [script, "\(port)", record] + known,
    environment: ["PATH": "/usr/bin:/bin"].merging(
      tls.map { ["TLS_CERT": $0.cert, "TLS_KEY": $0.key] } ?? [:], uniquingKeysWith: { $1 }))
  try await server.waitForLine { $0.contains("listening") }
  return server
}

/// The locations a server recorded: (method, parameters), in the order it accepted them.
private func received(_ record: String) -> [(method: String, parameters: [String: String])] {
  guard let text = try? String(contentsOfFile: record, encoding: .utf8) else { return [] }
  return text.split(separator: "\n").compactMap { line in
    guard
      let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
      let method = object["method"] as? String,
      let parameters = object["params"] as? [String: String]
    else { return nil }
    return (method, parameters)
  }
}

/// The Traccar locations waiting in the outbox of `store`: their `timestamp`s.
private func waitingTimestamps(_ store: String) throws -> [Int] {
  try Database(path: store).read { try OutboxRepository($0).nextOsmAnd(limit: 100_000) }.compactMap
  {
    row in
    row.query.split(separator: "&").first { $0.hasPrefix("timestamp=") }.flatMap {
      Int($0.dropFirst("timestamp=".count))
    }
  }
}

@Suite(.serialized, .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"))
struct TraccarTests {
  /// `waymarkd` sends its drive to a server that speaks Traccar's OsmAnd protocol through a
  /// server outage and a `kill -9` of the daemon while locations wait: the server gets every
  /// location once, in order, each one a fix of the drive; while the device moves no point is
  /// missing (one at least every 3 s at 10–15 m/s with 20 m between points), and while it stands
  /// at Home a heartbeat comes every 60 s and nothing more.
  @Test func everyLocationOnceInOrderThroughAnOutageAndAKill() async throws {
    let directory = try TemporaryDirectory()
    let port = try GPSDHarness.freePort()
    let record = directory.file("received.jsonl")
    var server = try await osmandServer(port: port, record: record, known: ["van-7"])
    let rig = try await DaemonRig.start(
      places: [],
      extraConfig: "traccar = http://127.0.0.1:\(port)/\ntraccar-id = van-7\n"
        + "traccar-interval = 0\ntraccar-distance = 20\ntraccar-heartbeat = 60\n")
    defer { rig.stop() }
    let fixes = Commute.fixes(homeStay: 200, officeStay: 30)
    let epochs = Commute.epochs(homeStay: 200, officeStay: 30)
    let start = Commute.start
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("Traccar: sending to 127.0.0.1 as 'van-7'") }
    try await rig.gpsd.waitForWatchers(1)

    // 1. Up to the middle of the Home stop, the server up: everything is taken.
    let firstEnd = start.addingTimeInterval(130)
    try await rig.send(epochs.filter { $0.time <= firstEnd })
    try await eventually("the first part at the server", within: .seconds(30)) {
      let last = fixes.last { $0.time! <= firstEnd }!.time!
      let got = received(record).compactMap { $0.parameters["timestamp"].flatMap(Int.init) }
      // The last fix of the stop is sent when its heartbeat is due; the stop began at ~30 s.
      return (got.last ?? 0) >= Int(last.timeIntervalSince1970) - 61
        && (try? waitingTimestamps(rig.store).isEmpty) == true
    }
    let beforeOutage = received(record).count
    #expect(beforeOutage >= 5)

    // 2. The server goes away; the device leaves Home and drives; the daemon is killed while the
    //    locations wait in its outbox.
    server.signal(SIGTERM)
    _ = try await server.waitForExit()
    let secondEnd = start.addingTimeInterval(260)
    try await rig.send(epochs.filter { $0.time > firstEnd && $0.time <= secondEnd })
    try await daemon.waitForLine { $0.contains("Traccar: cannot reach 127.0.0.1") }
    let lastMoving = Int(fixes.last { $0.time! <= secondEnd }!.time!.timeIntervalSince1970)
    try await eventually("the drive's locations waiting", within: .seconds(30)) {
      (try? waitingTimestamps(rig.store).last ?? 0) ?? 0 >= lastMoving - 2
    }
    #expect(received(record).count == beforeOutage)
    try await daemon.crash()
    let waiting = try waitingTimestamps(rig.store)
    #expect(waiting.count >= 10, "\(waiting)")

    // 3. The server back, the daemon again, the rest of the drive.
    server = try await osmandServer(port: port, record: record, known: ["van-7"])
    let again = try rig.launch()
    try await rig.gpsd.waitForWatchers(2)
    try await rig.send(epochs.filter { $0.time > secondEnd })
    let final = Int(fixes.last!.time!.timeIntervalSince1970)
    try await eventually("the whole drive at the server", within: .seconds(30)) {
      (received(record).last?.parameters["timestamp"].flatMap(Int.init) ?? 0) >= final - 2
        && (try? waitingTimestamps(rig.store).isEmpty) == true
    }
    again.signal(SIGTERM)
    #expect(try await again.waitForExit() == 0)
    server.signal(SIGTERM)

    let points = received(record)
    let stamps = points.compactMap { $0.parameters["timestamp"].flatMap(Int.init) }
    #expect(stamps.count == points.count)
    // In order, none twice.
    #expect(zip(stamps, stamps.dropFirst()).allSatisfy { $0 < $1 }, "\(stamps)")
    // Each one a fix of the drive, in the protocol's parameters.
    let byTime = Dictionary(
      fixes.map { (Int($0.time!.timeIntervalSince1970), $0) }, uniquingKeysWith: { a, _ in a })
    for point in points {
      let parameters = point.parameters
      #expect(
        point.method == "POST" && parameters["id"] == "van-7" && parameters["valid"] == "true")
      let time = try #require(parameters["timestamp"].flatMap(Int.init))
      let fix = try #require(byTime[time], "no fix at \(time)")
      let latitude = try #require(parameters["lat"].flatMap(Double.init))
      let longitude = try #require(parameters["lon"].flatMap(Double.init))
      #expect(abs(latitude - fix.coordinate!.latitude) < 1e-6, "\(parameters)")
      #expect(abs(longitude - fix.coordinate!.longitude) < 1e-6, "\(parameters)")
      let knots = try #require(parameters["speed"].flatMap(Double.init))
      #expect(abs(knots * 1852 / 3600 - (fix.speed ?? 0)) < 0.05, "\(parameters)")
    }
    // Nothing lost: between two points the device either moved (then at most 3 s passed) or
    // stood within 20 m (then at most the heartbeat, 60 s, and not less than it at Home).
    for (earlier, later) in zip(stamps, stamps.dropFirst()) {
      let gap = later - earlier
      let moving = (earlier...later).allSatisfy { (byTime[$0]?.speed ?? 0) > 5 }
      if moving { #expect(gap <= 3, "\(earlier)→\(later) while moving") }
      #expect(gap <= 61, "\(earlier)→\(later)")
    }
    let home = Commute.home
    let atHome = stamps.filter {
      guard let fix = byTime[$0] else { return false }
      return fix.coordinate!.distance(to: home) < 5 && (fix.speed ?? 0) < 0.5
    }
    #expect(atHome.count >= 3, "\(atHome)")
    #expect(zip(atHome, atHome.dropFirst()).allSatisfy { $1 - $0 >= 60 }, "\(atHome)")
  }

  /// HTTPS is verified: a server whose certificate the configured CA did not sign gets nothing
  /// (the handshake fails, the locations wait); with the CA that signed it (the control), the
  /// same locations arrive.
  @Test func httpsIsVerifiedAgainstTheGivenCA() async throws {
    let directory = try TemporaryDirectory()
    try makeCertificates(in: directory.path, addresses: ["127.0.0.1"])
    let port = try GPSDHarness.freePort()
    let record = directory.file("received.jsonl")
    let server = try await osmandServer(
      port: port, record: record, known: ["van-7"],
      tls: (directory.file("server.crt"), directory.file("server.key")))
    let link = "traccar = https://127.0.0.1:\(port)/\ntraccar-id = van-7\ntraccar-interval = 0\n"
    let rig = try await DaemonRig.start(
      places: [], extraConfig: link + "traccar-cafile = \(directory.file("other-ca.crt"))\n")
    defer { rig.stop() }
    let epochs = Commute.epochs(homeStay: 0, officeStay: 0).prefix(20)
    let impostor = try rig.launch()
    try await impostor.waitForLine { $0.contains("over HTTPS") }
    try await rig.gpsd.waitForWatchers(1)
    try await rig.send(epochs)
    try await impostor.waitForLine { $0.contains("Traccar: cannot reach 127.0.0.1") }
    #expect(received(record).isEmpty)
    #expect(try waitingTimestamps(rig.store).count >= 5)
    impostor.signal(SIGTERM)
    #expect(try await impostor.waitForExit() == 0)

    let config = try String(contentsOfFile: rig.config, encoding: .utf8)
    try config.replacingOccurrences(of: "other-ca.crt", with: "ca.crt").write(
      toFile: rig.config, atomically: true, encoding: .utf8)
    let trusted = try rig.launch()
    try await eventually("the waiting locations sent", within: .seconds(30)) {
      (try? waitingTimestamps(rig.store).isEmpty) == true
    }
    #expect(received(record).count >= 5)
    trusted.signal(SIGTERM)
    #expect(try await trusted.waitForExit() == 0)
    server.signal(SIGTERM)
  }
}
