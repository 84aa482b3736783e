import FoundationEssentials
import Glibc
import WaymarkClient
import WaymarkCore
import WaymarkDaemonConfiguration
import WaymarkMQTT
import WaymarkStore

/// What `waymark status` reports of waymarkd: from its socket (running, its release, clients,
/// the latest fix's time) and from its store (places, open visits, the MQTT outbox's depth).
struct DaemonStatus {
  /// An open visit: the place and since when.
  struct OpenVisit {
    var placeID: String
    var name: String
    var arrival: Date
  }

  var socketPath: String
  var running = false
  var release: String?
  var clients: Int?
  var watchers: Int?
  var nmeaClients: Int?
  var lastFix: Date?
  var storePath: String
  var storeProblem: String?
  var places: Int?
  var openVisits: [OpenVisit] = []
  var outbox: Int?
  /// The MQTT identity in use: the configuration's when it sets `mqtt`, else this machine's
  /// default (which `mqtt = …` alone would use).
  var mqtt = MQTTSettings(host: "-")
  /// Where ``mqtt`` comes from: the configuration file, or `nil` for this machine's default.
  var mqttConfiguration: String?

  /// Asks the daemon on `socketPath` (at most `timeout`), reads the store at `storePath` and
  /// the MQTT identity of the configuration at `configPath`.
  static func gather(
    socketPath: String, storePath: String, configPath: String, timeout: Duration
  ) async -> Self {
    var status = DaemonStatus(socketPath: socketPath, storePath: storePath)
    if let configured = try? DaemonConfiguration.load(path: configPath).mqtt {
      status.mqtt = configured
      status.mqttConfiguration = configPath
    }
    if DaemonLocationService.socketExists(at: socketPath),
      let connection = try? BrokerConnection(path: socketPath)
    {
      defer { connection.close() }
      let messages = connection.messages()
      try? connection.send(DaemonRequest.status)
      let answer = Task { () -> DaemonMessage.Status? in
        for await message in messages {
          if case .success(.status(let status)) = DaemonMessage.parse(message) { return status }
        }
        return nil
      }
      let timer = Task {
        try? await Task.sleep(for: timeout)
        connection.close()
      }
      if let answer = await answer.value {
        status.running = true
        status.release = answer.release
        status.clients = answer.clients
        status.watchers = answer.watchers
        status.nmeaClients = answer.nmeaClients
        status.lastFix = answer.lastFix
      }
      timer.cancel()
    }
    status.readStore()
    return status
  }

  private mutating func readStore() {
    guard FileManager.default.fileExists(atPath: storePath) else {
      storeProblem = "no store"
      return
    }
    do {
      let database = try StorePath.open(storePath, create: false)
      let (places, open, outbox, last) = try database.read { connection in
        let places = try PlaceRepository(connection).all()
        let open = try VisitRepository(connection).openEntries()
        let outbox = try OutboxRepository(connection).count()
        let last = try MonitorStateRepository(connection).lastFix()
        return (places, open, outbox, last)
      }
      self.places = places.count
      let names = Dictionary(
        places.map { ($0.id, $0.name) }, uniquingKeysWith: { first, _ in first })
      openVisits = open.map {
        OpenVisit(placeID: $0.key, name: names[$0.key] ?? $0.key, arrival: $0.value.arrival)
      }
      .sorted { $0.arrival < $1.arrival }
      self.outbox = outbox
      // The socket's latest fix is live; the store's is as of the last save.
      if lastFix == nil { lastFix = last?.time }
    } catch let error as CommandError {
      storeProblem = "cannot read it: \(error.message)"
    } catch {
      storeProblem = "cannot read it: \(StorePath.commandError(error).message)"
    }
  }

  /// Seconds from the latest fix to `now`, when there is one.
  func lastFixAge(now: Date) -> Double? {
    lastFix.map { now.timeIntervalSince($0) }
  }

  /// The text lines (aligned like the gpsd part); what the daemon and the store say (its
  /// release, place names and ids, errors) is escaped for the terminal.
  func lines(now: Date) -> [String] {
    var lines: [String] = []
    if running {
      var clientText = "\(clients ?? 0) client(s)"
      clientText += ", \(watchers ?? 0) watching"
      if let nmeaClients, nmeaClients > 0 { clientText += ", \(nmeaClients) on the NMEA socket" }
      lines.append(
        "waymarkd  running (release \(LogText.escaped(release ?? "unknown"))) on "
          + "\(LogText.escaped(socketPath)): \(clientText)")
    } else {
      lines.append("waymarkd  not running (no answer on \(LogText.escaped(socketPath)))")
    }
    if let lastFix, let age = lastFixAge(now: now) {
      lines.append("last fix  \(Timestamp.format(lastFix)) (\(age.fixed(1)) s ago)")
    } else {
      lines.append("last fix  none")
    }
    lines.append(mqttLine)
    if let storeProblem {
      lines.append("store     \(LogText.escaped(storePath)): \(LogText.escaped(storeProblem))")
      return lines
    }
    var storeText = "store     \(LogText.escaped(storePath)): \(places ?? 0) place(s)"
    if let outbox { storeText += ", MQTT outbox \(outbox)" }
    lines.append(storeText)
    if openVisits.isEmpty {
      lines.append("visit     none open")
    }
    for visit in openVisits {
      lines.append(
        "visit     open at \(LogText.escaped(visit.name)) (\(LogText.escaped(visit.placeID))) "
          + "since \(Timestamp.format(visit.arrival))"
      )
    }
    return lines
  }

  /// The MQTT identity: client id, topic, tracker id, and where they come from.
  var mqttLine: String {
    let origin =
      mqttConfiguration.map { "configured in \($0)" }
      ?? (MQTTIdentity.current().isFromMachineID
        ? "this machine's, from /etc/machine-id" : "this machine's, from its host name")
    return "mqtt      client id \(LogText.escaped(mqtt.clientID)), topic "
      + "\(LogText.escaped(mqtt.topic)), tid \(LogText.escaped(mqtt.tid)) (\(origin))"
  }

  /// The `DAEMON` object of `waymark status --json`.
  func jsonLine(now: Date) -> JSONLine {
    var line = JSONLine(class: "DAEMON")
    line.add("socket", socketPath)
    line.add("running", running)
    line.add("release", release)
    line.add("clients", clients)
    line.add("watchers", watchers)
    line.add("nmeaClients", nmeaClients)
    line.add("lastFix", lastFix)
    line.add("lastFixAge", lastFixAge(now: now), decimals: 1)
    line.add("store", storePath)
    line.add("storeProblem", storeProblem)
    line.add("places", places)
    line.add("outbox", outbox)
    line.add("mqttClientID", mqtt.clientID)
    line.add("mqttTopic", mqtt.topic)
    line.add("mqttTid", mqtt.tid)
    line.add("mqttConfigured", mqttConfiguration != nil)
    var visits: [String] = []
    for visit in openVisits {
      var object = JSONLine()
      object.add("place", visit.placeID)
      object.add("name", visit.name)
      object.add("arrival", visit.arrival)
      visits.append(object.string)
    }
    if storeProblem == nil {
      line.add("openVisits", rawJSON: "[" + visits.joined(separator: ",") + "]")
    }
    return line
  }
}
