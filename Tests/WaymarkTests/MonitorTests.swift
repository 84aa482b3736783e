import Foundation
import NMEA
import Testing
import WaymarkTesting

@testable import Waymark

/// A drive through two circles: from home (stay), to the office (stay), on to a park beyond
/// both, and back home (stay). Fixes every second with 3 m of seeded noise.
enum MonitorDrive {
  static let start = Date(timeIntervalSince1970: 1_796_000_000)
  static let home = Coordinate(latitude: 45.7600, longitude: 4.8300)
  static let office = Coordinate(latitude: 45.7700, longitude: 4.8450)
  static let park = Coordinate(latitude: 45.7800, longitude: 4.8450)

  static let homeCircle = Monitor.CircularGeographicCondition(center: home, radius: 100)
  static let officeCircle = Monitor.CircularGeographicCondition(
    center: office, radius: 150, exitRadius: 250, confirmations: 4)

  static let fixes: [Fix] = {
    var route = RouteSynthesizer(start: start, origin: home, seed: 2026)
    route.noiseMeters = 3
    route.stop(seconds: 120)
    route.drive(to: office, speedMetersPerSecond: 10)
    route.stop(seconds: 300)
    route.drive(to: park, speedMetersPerSecond: 10)
    route.stop(seconds: 60)
    route.drive(to: home, speedMetersPerSecond: 12)
    route.stop(seconds: 120)
    return route.fixes()
  }()

  static let locations: [Location] = fixes.compactMap(Location.init)

  /// What one monitor sees over the whole drive, by identifier and state.
  static let expected: [(String, Monitor.Event.State)] = [
    ("home", .satisfied), ("home", .unsatisfied), ("office", .satisfied),
    ("office", .unsatisfied), ("home", .satisfied),
  ]

  /// Adds the two circles, as unsatisfied.
  static func addCircles(_ monitor: Monitor) async {
    await monitor.add(homeCircle, identifier: "home", assuming: .unsatisfied)
    await monitor.add(officeCircle, identifier: "office", assuming: .unsatisfied)
  }
}

/// The locations as a sequence that ends after the last one.
func sequence(_ locations: some Collection<Location>) -> AsyncStream<Location> {
  let locations = Array(locations)
  return AsyncStream { continuation in
    for location in locations { continuation.yield(location) }
    continuation.finish()
  }
}

/// Opens the monitor `name` in `directory` over `locations`, lets `prepare` add conditions,
/// collects every event until the locations end, and closes it.
func runMonitor(
  _ name: String, over locations: some Collection<Location>, in directory: URL,
  prepare: (Monitor) async -> Void = { _ in }
) async throws -> [Monitor.Event] {
  let monitor = try await Monitor(named: name, locations: sequence(locations), directory: directory)
  await prepare(monitor)
  var events: [Monitor.Event] = []
  for try await event in await monitor.events { events.append(event) }
  try await monitor.close()
  return events
}

private func summary(_ events: [Monitor.Event]) -> [String] {
  events.map { "\($0.identifier) \($0.state)" }
}

@Suite struct MonitorTests {
  /// The reference: one monitor over the whole drive sees both circles entered and left, on
  /// fix time, and ends with the states of its last events.
  @Test func oneRunOverTheDriveSeesBothCircles() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let events = try await runMonitor(
      "reference", over: MonitorDrive.locations, in: directory, prepare: MonitorDrive.addCircles)
    #expect(summary(events) == MonitorDrive.expected.map { "\($0.0) \($0.1)" })
    let times = Set(MonitorDrive.locations.map(\.timestamp))
    #expect(events.allSatisfy { times.contains($0.date) }, "dates are fix times")
    #expect(events.map(\.date) == events.map(\.date).sorted())
    #expect(events.first { $0.identifier == "office" }?.condition == MonitorDrive.officeCircle)
  }

  /// The same log twice, on two fresh monitors: the same events, dates included.
  @Test func theSameLogTwiceGivesIdenticalEvents() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let first = try await runMonitor(
      "first", over: MonitorDrive.locations, in: directory, prepare: MonitorDrive.addCircles)
    let second = try await runMonitor(
      "second", over: MonitorDrive.locations, in: directory, prepare: MonitorDrive.addCircles)
    #expect(first.count == MonitorDrive.expected.count)
    #expect(first == second)
  }

  /// Closed anywhere in the drive (between stays, or in the middle of a stay) and opened again
  /// by name over the rest: see `checkResume(cut:)`.
  @Test(arguments: [0.05, 0.2, 0.33, 0.5, 0.62, 0.8])
  func reopenedByNameTheMonitorResumes(fraction: Double) async throws {
    try await checkResume(cut: Int(Double(MonitorDrive.locations.count) * fraction))
  }

  /// Closed two fixes after each event's fix, while its change is still being confirmed (an
  /// arrival or a departure needs 3 or 4 fixes): the pending confirmation resumes.
  @Test func reopenedInAPendingConfirmationTheMonitorResumes() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reference = try await runReference(directory)
    #expect(reference.count == MonitorDrive.expected.count)
    for event in reference {
      let index = try #require(MonitorDrive.locations.firstIndex { $0.timestamp == event.date })
      try await checkResume(cut: index + 2)
    }
  }

  /// Runs the drive's first `cut` locations through a monitor, closes it, opens it again by name
  /// over the rest: the conditions and records are there, the states are those of the first
  /// part's last events, and both parts together are the events of one run, none repeated or
  /// lost. Replaying the whole log once more then gives nothing new.
  private func checkResume(cut: Int) async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let locations = MonitorDrive.locations
    let reference = try await runReference(directory)
    #expect(reference.count == MonitorDrive.expected.count)

    let first = try await runMonitor(
      "trip", over: locations[..<cut], in: directory, prepare: MonitorDrive.addCircles)
    // The cut falls inside the drive: the first part alone misses some events.
    #expect(first.count < reference.count, "cut at \(cut)")

    let monitor = try await Monitor(
      named: "trip", locations: sequence(locations[cut...]), directory: directory)
    #expect(await monitor.identifiers == ["home", "office"])
    for identifier in ["home", "office"] {
      let record = try #require(await monitor.record(for: identifier))
      let last = first.last { $0.identifier == identifier }
      #expect(record.lastEvent.state == last?.state ?? .unsatisfied, "\(identifier)")
      if let last { #expect(record.lastEvent == last) }
    }
    var second: [Monitor.Event] = []
    for try await event in await monitor.events { second.append(event) }
    try await monitor.close()
    #expect(first + second == reference, "cut at \(cut)")

    let again = try await runMonitor("trip", over: locations, in: directory)
    #expect(again.isEmpty, "\(summary(again))")
    // Positive control: the same log on a monitor that has not seen it gives events.
    let fresh = try await runMonitor(
      "fresh", over: locations, in: directory, prepare: MonitorDrive.addCircles)
    #expect(fresh == reference)

    let closed = try await Monitor(named: "trip", locations: sequence([]), directory: directory)
    for identifier in ["home", "office"] {
      #expect(
        await closed.record(for: identifier)?.lastEvent
          == reference.last { $0.identifier == identifier })
    }
    try await closed.close()
  }

  /// Fed by a `LocationManager` (the drive as its source): the events of the log. The
  /// manager's stream does not end with its source, so the test stops after the events of one
  /// run, or at a deadline that closes the monitor (which ends `events`).
  @Test func aLocationManagerFeedsTheMonitor() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let reference = try await runReference(directory)
    let fixes = MonitorDrive.fixes
    let source = FixSource(name: "drive") {
      AsyncStream { continuation in
        for fix in fixes { continuation.yield(fix) }
        continuation.finish()
      }
    }
    let center = AuthorizationCenter(
      store: InMemoryGrantStore([
        Grant(clientID: "monitor", level: .whenInUse, grantedAt: MonitorDrive.start)
      ]),
      services: .enabled)
    let manager = LocationManager(clientID: "monitor", source: source, authorization: center)
    let monitor = try await Monitor(
      named: "managed", locations: manager.locations(bufferingNewest: Int.max),
      directory: directory)
    await MonitorDrive.addCircles(monitor)
    let events = await monitor.events
    // The monitor subscribes when it starts reading: start the drive once it has.
    let subscribed = ContinuousClock.now + .seconds(30)
    while manager.locationSubscriberCount == 0, ContinuousClock.now < subscribed {
      try await Task.sleep(for: .milliseconds(5))
    }
    #expect(manager.locationSubscriberCount == 1)
    manager.startUpdatingLocation()
    let deadline = Task {
      try await Task.sleep(for: .seconds(120))
      try await monitor.close()
    }
    var received: [Monitor.Event] = []
    for try await event in events {
      received.append(event)
      if received.count == reference.count { break }
    }
    deadline.cancel()
    try await monitor.close()
    manager.stopUpdatingLocation()
    #expect(received == reference)
  }

  /// A condition added while the device is inside another does not reset it: the stay at home
  /// goes on (no second arrival) and ends with its departure.
  @Test func addingAConditionKeepsTheOthersStates() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let (locations, feed) = AsyncStream.makeStream(of: Location.self)
    let monitor = try await Monitor(named: "grow", locations: locations, directory: directory)
    await monitor.add(MonitorDrive.homeCircle, identifier: "home", assuming: .unsatisfied)
    var events = await monitor.events.makeAsyncIterator()
    // The first minute, at home: confirmed there.
    for location in MonitorDrive.locations.prefix(60) { feed.yield(location) }
    let arrival = try #require(try await events.next())
    #expect(arrival.identifier == "home" && arrival.state == .satisfied)

    await monitor.add(MonitorDrive.officeCircle, identifier: "office", assuming: .unsatisfied)
    #expect(await monitor.record(for: "home")?.lastEvent == arrival)
    #expect(await monitor.identifiers == ["home", "office"])
    for location in MonitorDrive.locations.dropFirst(60) { feed.yield(location) }
    feed.finish()
    var rest: [Monitor.Event] = []
    while let event = try await events.next() { rest.append(event) }
    try await monitor.close()
    // Positive control: home's departure comes, so its stay was kept; no arrival before it.
    #expect([arrival] + rest == (try await runReference(directory)))
    #expect(summary(rest).first == "home unsatisfied")
  }

  private func runReference(_ directory: URL) async throws -> [Monitor.Event] {
    try await runMonitor(
      "reference", over: MonitorDrive.locations, in: directory, prepare: MonitorDrive.addCircles)
  }

  /// The three assumptions: `.satisfied` where the device is not (left at the first fixes that
  /// show it out, dated from the first location), `.unsatisfied` where it is (entered), and
  /// `.unknown` far away (unsatisfied at the first fix, which is clearly outside).
  @Test func assumedStatesAreCorrectedByFixes() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let park = Monitor.CircularGeographicCondition(center: MonitorDrive.park, radius: 100)
    let locations = Array(MonitorDrive.locations.prefix(120))
    let events = try await runMonitor("assumed", over: locations, in: directory) { monitor in
      await monitor.add(MonitorDrive.officeCircle, identifier: "office", assuming: .satisfied)
      await monitor.add(MonitorDrive.homeCircle, identifier: "home", assuming: .unsatisfied)
      await monitor.add(park, identifier: "park", assuming: .unknown)
      #expect(await monitor.record(for: "park")?.lastEvent.state == .unknown)
      #expect(await monitor.record(for: "office")?.lastEvent.date == .distantPast)
    }
    #expect(
      Set(summary(events)) == ["office unsatisfied", "home satisfied", "park unsatisfied"],
      "\(summary(events))")
    let first = try #require(locations.first?.timestamp)
    #expect(events.first { $0.identifier == "office" }?.date == first)
    #expect(events.first { $0.identifier == "park" }?.date == first)
    // Positive control for the assumptions that held: assumed as they are, nothing comes.
    let quiet = try await runMonitor("quiet", over: locations, in: directory) { monitor in
      await monitor.add(MonitorDrive.officeCircle, identifier: "office", assuming: .unsatisfied)
      await monitor.add(MonitorDrive.homeCircle, identifier: "home", assuming: .satisfied)
    }
    #expect(quiet.isEmpty, "\(summary(quiet))")
  }

  /// Two names are two monitors: each keeps its own conditions and records.
  @Test func twoNamesAreIndependent() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let alpha = try await runMonitor("alpha", over: MonitorDrive.locations, in: directory) {
      await $0.add(MonitorDrive.homeCircle, identifier: "home", assuming: .unsatisfied)
    }
    let beta = try await runMonitor("beta", over: [], in: directory) {
      await $0.add(MonitorDrive.officeCircle, identifier: "office", assuming: .unsatisfied)
    }
    #expect(summary(alpha) == ["home satisfied", "home unsatisfied", "home satisfied"])
    #expect(beta.isEmpty)

    let reopenedAlpha = try await Monitor(
      named: "alpha", locations: sequence([]), directory: directory)
    let reopenedBeta = try await Monitor(
      named: "beta", locations: sequence([]), directory: directory)
    #expect(await reopenedAlpha.identifiers == ["home"])
    #expect(await reopenedBeta.identifiers == ["office"])
    #expect(await reopenedAlpha.record(for: "home")?.lastEvent == alpha.last)
    #expect(await reopenedBeta.record(for: "office")?.lastEvent.date == .distantPast)
    #expect(await reopenedBeta.record(for: "home") == nil)
    await reopenedBeta.remove("office")
    #expect(await reopenedBeta.identifiers.isEmpty)
    #expect(await reopenedAlpha.identifiers == ["home"])
    try await reopenedAlpha.close()
    try await reopenedBeta.close()
    let files = try FileManager.default.contentsOfDirectory(atPath: directory.path)
    #expect(Set(files.filter { $0.hasSuffix(".json") }) == ["alpha.json", "beta.json"])
  }

  /// A name that is not a plain file name is refused with a clear error, and nothing is
  /// written; a name with spaces and accents is fine, in a 0700 directory, as a 0600 file.
  @Test func badNamesAreRefused() async throws {
    let root = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: root) }
    let directory = root.appendingPathComponent("monitors")
    let refused: [(String, String)] = [
      ("", "empty"), ("a/b", "/"), ("..", ".."), ("../escape", "/"), ("x\u{1}y", "control"),
      ("tab\there", "control"), ("bell\u{85}", "control"), (".hidden", "dot"),
      (String(repeating: "a", count: 201), "200 bytes"),
    ]
    for (name, reason) in refused {
      do {
        _ = try await Monitor(named: name, locations: sequence([]), directory: directory)
        Issue.record("\(name.debugDescription) was accepted")
      } catch let error as MonitorError {
        guard case .invalidName(let refusedName, _) = error else {
          Issue.record("\(error)")
          continue
        }
        #expect(refusedName == name)
        #expect(error.description.contains(reason), "\(error)")
        #expect(!error.description.unicodeScalars.contains { $0.value < 0x20 })
      }
    }
    #expect(!FileManager.default.fileExists(atPath: directory.path))

    let name = "Trips · été 2026"
    let monitor = try await Monitor(named: name, locations: sequence([]), directory: directory)
    try await monitor.close()
    let file = directory.appendingPathComponent("\(name).json").path
    #expect(monitor.fileURL.path == file)
    let fileMode = try FileManager.default.attributesOfItem(atPath: file)[.posixPermissions]
    let directoryMode = try FileManager.default.attributesOfItem(atPath: directory.path)[
      .posixPermissions]
    #expect((fileMode as? NSNumber)?.intValue == 0o600)
    #expect((directoryMode as? NSNumber)?.intValue == 0o700)
  }

  /// A name is held by one open monitor at a time: a second one is refused until the first is
  /// closed.
  @Test func aNameIsHeldUntilClosed() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let first = try await Monitor(named: "held", locations: sequence([]), directory: directory)
    await #expect(throws: MonitorError.inUse("held")) {
      _ = try await Monitor(named: "held", locations: sequence([]), directory: directory)
    }
    let other = try await Monitor(named: "other", locations: sequence([]), directory: directory)
    try await other.close()
    try await first.close()
    let again = try await Monitor(named: "held", locations: sequence([]), directory: directory)
    try await again.close()
  }

  /// A file that is not a monitor's is reported, not overwritten.
  @Test func aCorruptFileIsReported() async throws {
    let directory = temporaryDirectory()
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("broken.json")
    try Data("{\"version\":1}".utf8).write(to: file)
    await #expect(throws: MonitorError.self) {
      _ = try await Monitor(named: "broken", locations: sequence([]), directory: directory)
    }
    #expect(try Data(contentsOf: file) == Data("{\"version\":1}".utf8))
    try Data("{\"version\":7,\"entries\":[],\"engine\":{\"places\":{}}}".utf8).write(to: file)
    do {
      _ = try await Monitor(named: "broken", locations: sequence([]), directory: directory)
      Issue.record("version 7 was accepted")
    } catch let error as MonitorError {
      #expect(error.description.contains("unknown version 7"), "\(error)")
    }
  }

  /// The default directory is `monitors` in the state directory.
  @Test func theDefaultDirectoryIsInTheStateDirectory() {
    #expect(
      MonitorStore.defaultDirectory(environment: ["XDG_STATE_HOME": "/state", "HOME": "/home/u"])
        .path == "/state/waymark/monitors")
    #expect(
      MonitorStore.defaultDirectory(environment: ["HOME": "/home/u"]).path
        == "/home/u/.local/state/waymark/monitors")
  }
}
