import Foundation
import Testing
import WaymarkCore
import WaymarkProcess
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// waymarkd's one store writer under load: a fix flood (every fix a track point and an MQTT
/// message), grants recorded for many broker clients, and the MQTT outbox drained, all at once.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "needs root: runs the broker's clients as system users"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"))
struct StoreWriterDaemonTests {
  static let topic = "owntracks/one/dev"

  /// The sizes, bytes, of the anonymous mappings of `maps` (a `/proc/<pid>/maps` text) that
  /// allow no access and span more than 1 MiB: the address space glibc reserves for a malloc
  /// arena other than the main one (thread stacks' guards are a page).
  static func arenaReservations(_ maps: String) -> [UInt] {
    MemoryMapping.all(in: maps).filter { $0.isReservation && $0.length > 1 << 20 }.map(\.length)
  }

  /// The daemon holds one write connection to its store (and a read-only one); writes of the
  /// pipeline, the broker's grants and the MQTT publisher's deletions, made together, all land:
  /// no `SQLITE_BUSY`, no store error, and every row counted.
  @Test func oneWriterTakesFixesGrantsAndTheOutboxDrainAtOnce() async throws {
    let directory = try TemporaryDirectory()
    let mosquitto = try await Mosquitto(directory: directory)
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: MQTTTests.places,
      extraConfig: "log-level = debug\nsocket = \(socketPath)\nagent-timeout = 30\n"
        + "track-min-distance = 0\ntrack-min-interval = 0\ntrack-batch = 1\n"
        + "mqtt = 127.0.0.1:\(mosquitto.port)\nmqtt-topic = \(Self.topic)\nmqtt-interval = 0\n")
    defer { rig.stop() }
    let subscriber = try subscribe(port: mosquitto.port, topic: "owntracks/#", id: "sub-one")
    try await mosquitto.process.waitForLine { $0.contains("sub-one") }
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected to 127.0.0.1:\(mosquitto.port)") }
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    // One descriptor of the store opened read-write: the writer's. The read-only one is the
    // positive control (the count sees the daemon's descriptors of that file).
    let modes = OpenFiles.accessModes(of: rig.store, processID: daemon.processID)
    #expect(modes.filter { $0 == .readWrite }.count == 1, "\(modes)")
    #expect(modes.filter { $0 == .readOnly }.count == 1, "\(modes)")

    // Root's agent says "always" (recorded: root may make lasting grants) to eight programs,
    // each of its own user, while the drive floods in.
    let agent = try DaemonProcess(
      executable: Products.executable("waymark"),
      arguments: ["agent", "--socket", socketPath, "--answer", "always"],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
    defer { agent.signal(SIGTERM) }
    try await daemon.waitForLine { $0.contains("is an agent") }
    let script = try attackerScript()
    let users = (0..<8).map { "wmtest-w\($0)" }
    let clients = try users.map {
      try attack($0, script, ["request", socketPath, "always", "600"])
    }
    defer { for client in clients { client.signal(SIGTERM) } }
    let epochs = Commute.epochs(homeStay: 30, officeStay: 30)
    try await rig.send(epochs)
    for client in clients {
      try await client.waitForLine { $0.contains(#""status":"authorizedAlways""#) }
    }
    let last = Timestamp.format(epochs.last!.time)
    try await daemon.waitForLine { $0.hasPrefix("<7>fix \(last) ") }
    #expect(try await outboxDrained(rig.store, timeout: .seconds(30)) == 0)
    try await subscriber.waitForCount(#""_type":"transition""#, 4, timeout: .seconds(30))
    // Every thread allocated meanwhile (pipeline, broker, store, MQTT), yet waymarkd has one
    // malloc arena: glibc reserves each further one as 64 MiB of address space without access.
    let maps = try #require(ProcFile.contents(of: "/proc/\(daemon.processID)/maps"))
    #expect(maps.contains("[stack]"))
    #expect(Self.arenaReservations(maps) == [], "\(maps)")
    // Control: a reservation of that kind made here is found in this process's map.
    let reserved = mmap(
      nil, 64 << 20, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
    #expect(reserved != MAP_FAILED)
    let own = try #require(ProcFile.contents(of: "/proc/self/maps"))
    #expect(Self.arenaReservations(own).contains(64 << 20))
    munmap(reserved, 64 << 20)
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)

    // Nothing waited out the busy timeout, nothing failed to be written.
    let log = daemon.log
    #expect(!log.contains { $0.contains("database is locked") || $0.contains("SQLITE_BUSY") })
    #expect(!log.contains { $0.hasPrefix("<3>") || $0.hasPrefix("<4>store") }, "\(daemon.logText)")
    // Every row counted: a grant per program, every fix a track point, the four events and
    // two visits, every location received by the subscriber.
    let database = try Database(path: rig.store, createIfMissing: false)
    let grants = try DatabaseGrantStore(database: database).allGrants().map(\.clientID)
    #expect(Set(users.map(pythonClient)).isSubset(of: Set(grants)), "\(grants)")
    #expect(log.filter { $0.contains("granted by agent") }.count == users.count)
    #expect(log.contains("<6>track: \(epochs.count) new point(s) recorded"), "\(daemon.logText)")
    #expect(try database.read { try TrackRepository($0).count() } == epochs.count)
    let events = try database.read { try EventRepository($0).all() }
    #expect(events.map(\.className) == ["ARRIVAL", "DEPARTURE", "ARRIVAL", "DEPARTURE"])
    #expect(try storedVisits(rig.store).count == 2)
    let locations = objects(subscriber.log, topic: Self.topic).filter {
      $0["_type"] as? String == "location"
    }
    #expect(Set(locations.compactMap { $0["tst"] as? Int }).count == epochs.count)
    #expect(try database.integrityCheck() == ["ok"])
  }
}
