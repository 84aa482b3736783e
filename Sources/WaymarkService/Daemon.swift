import FoundationEssentials
import GPSD
import Glibc
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkMQTT
import WaymarkStore

/// `waymarkd`: follows gpsd, monitors the places of the store, records visits, runs hooks, and
/// talks to systemd (readiness, status, watchdog).
public enum WaymarkDaemon {
  /// The usage line.
  public static let usage = "USAGE: waymarkd [--config <file>]"

  /// The help text, printed by `--help`.
  public static let help = """
    USAGE: waymarkd [--config <file>]

    The Waymark daemon: follows gpsd, watches the places in the store, records arrivals,
    departures and visits, and runs hook commands. Meant to run under systemd
    (waymarkd.service); logs go to standard error with <N> priority prefixes.

    OPTIONS:
      --config <file>   Configuration file (default /etc/waymark/waymark.conf; a missing
                        default file means all defaults).
      --version         Print the release and exit.
      -h, --help        Show this help.

    SIGNALS:
      SIGTERM, SIGINT   Stop cleanly; open visits stay open and resume at the next start.
      SIGHUP            Reload the configuration and the places, re-check the grant.

    The client id (default 'waymarkd') needs an 'always' grant with full accuracy:
      waymark auth grant waymarkd always --store /var/lib/waymark/waymark.db

    With 'socket = <path>' (under systemd: $RUNTIME_DIRECTORY/waymark.sock), other processes
    get locations from the daemon over that Unix socket, under the grants of the store.

    EXIT CODES: 0 stopped, 64 usage, 65 the store is not a database or has a newer
    schema, 66 it cannot be opened, 69 it is locked, 74 an I/O error, a full disk or a
    read-only store (file, directory or file system), 78 configuration.

    """

  /// Runs the daemon with `arguments` (including the program name) until it is told to stop.
  ///
  /// - Returns: the process exit code.
  public static func main(
    _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment
  ) async -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    var configPath: String?
    var words = Array(arguments.dropFirst())[...]
    while let word = words.popFirst() {
      if word == "--version" {
        OutputSink.standardOutput.write("waymarkd \(WaymarkRelease.version)\n")
        OutputSink.standardOutput.flush()
        return ExitCode.ok.rawValue
      } else if word == "-h" || word == "--help" {
        OutputSink.standardOutput.write(help)
        OutputSink.standardOutput.flush()
        return ExitCode.ok.rawValue
      } else if word == "--config" {
        guard let value = words.popFirst(), !value.isEmpty else {
          return usageError("Missing value for '--config'.")
        }
        configPath = value
      } else if word.hasPrefix("--config=") {
        let value = String(word.dropFirst("--config=".count))
        guard !value.isEmpty else { return usageError("Missing value for '--config'.") }
        configPath = value
      } else if word.hasPrefix("-") {
        return usageError("Unknown option '\(word)'.")
      } else {
        return usageError("Unexpected argument '\(word)'.")
      }
    }
    let log = DaemonLog()
    let notifier = SystemdNotifier(environment: environment)
    let path = configPath ?? DaemonConfiguration.defaultPath
    let explicit = configPath != nil
    let configuration: DaemonConfiguration
    do {
      configuration = try loadConfiguration(
        path: path, explicit: explicit, environment: environment, log: log)
    } catch {
      log.error("configuration error: \(error)")
      notifier.status("configuration error: \(error)")
      return ExitCode.config.rawValue
    }
    log.level = configuration.logLevel
    let runtime: DaemonRuntime
    do {
      runtime = try DaemonRuntime(
        configuration: configuration, configPath: path, explicitConfig: explicit,
        environment: environment, log: log, notifier: notifier)
    } catch let error as BrokerError {
      log.error("cannot open the location socket: \(error)")
      notifier.status("cannot open the location socket: \(error)")
      return ExitCode.unavailable.rawValue
    } catch {
      let failure = StorePath.commandError(error)
      log.error("cannot open the store: \(failure.message)")
      notifier.status("cannot open the store \(configuration.storePath)")
      return failure.code.rawValue
    }
    // The main loop records visits with fsync'd writes: it runs on a thread of its own, never
    // on the concurrency pool.
    let box = RuntimeBox(runtime)
    return await withCheckedContinuation { continuation in
      DetachedThread.start(name: "waymarkd-main") {
        continuation.resume(returning: box.runtime.run())
      }
    }
  }

  static func loadConfiguration(
    path: String, explicit: Bool, environment: [String: String], log: DaemonLog
  ) throws(DaemonConfigurationError) -> DaemonConfiguration {
    if !explicit && !FileManager.default.fileExists(atPath: path) {
      log.info("no \(path); using the default configuration")
      return DaemonConfiguration(environment: environment)
    }
    return try DaemonConfiguration.load(path: path, environment: environment)
  }

  private static func usageError(_ message: String) -> Int32 {
    OutputSink.standardError.write("Error: \(message)\n\(usage)\n  See 'waymarkd --help'.\n")
    return ExitCode.usage.rawValue
  }
}

/// What the daemon's main loop reacts to, one at a time.
enum DaemonInput: Sendable {
  case fix(Fix)
  case health(SourceHealth)
  case signal(Int32)
  /// The grants or the location-services switch changed (the broker saw the store change).
  case grantsChanged
  case waypoints([Place])
}

/// The daemon's state, owned by the main loop (one task); nothing here is shared.
final class DaemonRuntime {
  private var configuration: DaemonConfiguration
  private let configPath: String
  private let explicitConfig: Bool
  private let environment: [String: String]
  private let log: DaemonLog
  private let notifier: SystemdNotifier
  private let database: Database
  private let tracker: VisitTracker
  private var monitor: PlaceMonitor { tracker.monitor }
  /// The track, when `track = on`: written after the place events of each fix.
  private var track: TrackRecorder?
  /// Stays anywhere, when `stays = on`: recorded after the place events of each fix.
  private let stays: StayRecorder?
  private let hooks: HookRunner
  private let authorization: AuthorizationCenter
  private let broker: BrokerServer?
  private var mqtt: MQTTPublisher?
  /// Creation times of the places (OwnTracks' `wtst`), kept only while MQTT is on.
  private var placeCreated: [String: Date] = [:]
  private var lastLocationMessage: Date?
  /// The fix time of the last save made while a visit was open.
  private var lastInsideSave: Date?
  private var authorizationProblem: String? = "not checked yet"
  /// Whether writes to the store fail (a full disk): logged once per episode.
  private var storeHealth = StoreWriteHealth()
  /// Held events recorded since the current episode of failed writes began.
  private var lateEvents = 0

  /// The daemon's pipeline: its own location manager over gpsd (nothing is read from gpsd before the
  /// daemon's grant, and it stops reading when the grant goes) and the outputs.
  private var pipeline: FixPipeline?
  private var sourceTasks: [Task<Void, Never>] = []
  private var health = SourceHealth()
  private var lastMode: FixMode?
  private var status = ""

  private let inputs = BlockingQueue<DaemonInput>(capacity: 4096)
  private let clock = ContinuousClock()
  private var nextWatchdog: ContinuousClock.Instant
  private var nextSave: ContinuousClock.Instant
  /// Whether the monitor's state changed since the last save (a fix came, the places changed):
  /// the periodic save is due only then.
  private var unsavedState = false
  private var nextAuthorizationCheck: ContinuousClock.Instant
  /// Whether the grants are re-checked on a timer: only when no change of the store can wake
  /// the daemon (no broker, or inotify unavailable).
  private var pollsAuthorization: Bool { broker?.watchesGrantChanges != true }

  init(
    configuration: DaemonConfiguration, configPath: String, explicitConfig: Bool,
    environment: [String: String], log: DaemonLog, notifier: SystemdNotifier
  ) throws {
    self.configuration = configuration
    self.configPath = configPath
    self.explicitConfig = explicitConfig
    self.environment = environment
    self.log = log
    self.notifier = notifier
    database = try StorePath.open(configuration.storePath, create: true)
    let places = try database.read { try PlaceRepository($0).all() }
    if configuration.mqtt != nil { placeCreated = placeCreationTimes(places) }
    tracker = try VisitTracker(
      places: places, configuration: configuration.detection, database: database,
      source: "waymarkd"
    ) { [log] placeID in
      log.warning("saved monitor state of place '\(placeID)' is unreadable; it starts outside")
    }
    tracker.holdsFailedEvents = true
    if configuration.recordsTrack {
      track = try TrackRecorder(database: database, settings: configuration.track)
    }
    stays =
      configuration.recordsStays
      ? try StayRecorder(
        database: database, places: places, configuration: configuration.stays,
        source: "waymarkd", resumes: true,
        saveIntervalSeconds: configuration.saveIntervalInsideSeconds) : nil
    try database.releaseCacheMemory()
    hooks = HookRunner(settings: configuration.hookSettings, log: log, environment: environment)
    authorization = AuthorizationCenter(
      store: DatabaseGrantStore(database: database), agent: PolicyAuthorizationAgent(),
      services: .file())
    broker = try DaemonRuntime.startBroker(
      configuration, log: log, environment: environment
    ) { [inputs] in inputs.push(.grantsChanged) }
    if let settings = configuration.mqtt {
      tracker.outboxMaximum = settings.outboxMaximum
      mqtt = MQTTPublisher(
        settings: settings, database: try StorePath.open(configuration.storePath, create: false),
        log: { [log] priority, message in log.log(priority, message) },
        onWaypoints: { [inputs] places in inputs.push(.waypoints(places)) })
    }
    let now = clock.now
    nextWatchdog = now
    nextSave = now + .seconds(configuration.saveIntervalSeconds)
    nextAuthorizationCheck = now
  }

  /// Opens the location socket, with a connection of its own to the store for the grants (so
  /// that the broker's thread never waits for the recorder's writes).
  private static func startBroker(
    _ configuration: DaemonConfiguration, log: DaemonLog, environment: [String: String],
    onGrantsChanged: @escaping @Sendable () -> Void
  ) throws -> BrokerServer? {
    let path = configuration.socketPath
    let nmeaPath = configuration.nmeaSocketPath
    guard path != nil || nmeaPath != nil || configuration.nmeaTCP != nil else { return nil }
    let grants = DatabaseGrantStore(
      database: try StorePath.open(configuration.storePath, create: false))
    var settings = BrokerServer.Configuration(path: path, nmeaPath: nmeaPath)
    settings.nmeaTCP = configuration.nmeaTCP.map { ($0.host, $0.port) }
    settings.maximumClients = configuration.socketClients
    let limit = DescriptorLimit.raise(forClients: configuration.socketClients)
    if limit.after > limit.before {
      log.info("open-file limit raised from \(limit.before) to \(limit.after)")
    }
    let fitting = DescriptorLimit.clients(allowedBy: limit.after)
    if fitting < configuration.socketClients {
      log.warning(
        "the open-file limit (\(limit.after)) leaves room for \(fitting) clients, not "
          + "socket-clients = \(configuration.socketClients); raise LimitNOFILE")
      settings.maximumClients = fitting
    }
    settings.sendBufferBytes = configuration.socketBufferBytes
    settings.maximumClientsPerUser = configuration.socketClientsPerUser
    // The store's directory and the switch's: the broker checks the grants after a change.
    settings.watchedDirectories = [configuration.storePath, LocationServicesSwitch.defaultPath]
      .map { path in String(path[..<(path.lastIndex(of: "/") ?? path.endIndex)]) }
      .filter { !$0.isEmpty }
    if let agents = configuration.agents { settings.agents = agents }
    settings.agentTimeoutSeconds = configuration.agentTimeoutSeconds
    settings.onGrantsChanged = onGrantsChanged
    let broker = try BrokerServer(
      configuration: settings, grants: grants, services: .file(),
      decisionAuthority: decisionAuthority(configuration, log: log, environment: environment)
    ) { priority, message in log.log(priority, message) }
    if let path { log.notice("location socket \(path)") }
    if let nmeaPath { log.notice("NMEA socket \(nmeaPath)") }
    if let tcp = configuration.nmeaTCP { log.notice("NMEA on TCP \(tcp)") }
    return broker
  }

  /// Who, besides root and group `waymark`, may make an agent's answer persist: polkit
  /// (`polkit = yes`) or no one.
  private static func decisionAuthority(
    _ configuration: DaemonConfiguration, log: DaemonLog, environment: [String: String]
  ) -> any DecisionAuthority {
    guard configuration.usesPolkit else {
      log.info("polkit = no: only agents running as root or in group waymark make lasting grants")
      return NoDecisionAuthority()
    }
    if !PolkitAuthority.isInstalled {
      log.warning(
        "polkit = yes but \(PolkitAuthority.defaultPKCheck) is missing: agents' answers persist "
          + "only from root or group waymark")
    }
    log.info(
      "polkit = yes: other agents' answers persist when polkit authorizes "
        + "\(PolkitAuthority.ownAction) or \(PolkitAuthority.otherAction)")
    return PolkitAuthority(log: log, environment: environment)
  }

  // MARK: - Main loop

  func run() -> Int32 {
    let inputs = self.inputs
    startMQTT()
    let signals = SignalWatcher([SIGTERM, SIGINT, SIGHUP]) { inputs.push(.signal($0)) }
    log.notice(
      "started: store \(configuration.storePath), \(monitor.placeCount) place(s), "
        + "\(tracker.openPlaceIDs.count) open visit(s), gpsd \(configuration.gpsd), "
        + "client '\(configuration.clientID)'")
    checkAuthorization()
    status = currentStatus()
    notifier.ready(status: status)

    var exitCode = ExitCode.ok
    loop: while true {
      // No timer of its own: the loop sleeps until an input comes or something is due.
      guard let input = nextInput() else {
        periodic()
        updateStatus()
        continue
      }
      switch input {
      case .fix(let fix):
        handle(fix)
      case .health(let report):
        handle(report)
      case .signal(SIGHUP):
        reload()
      case .signal(let number):
        log.notice("received \(number == SIGINT ? "SIGINT" : "SIGTERM"); stopping")
        break loop
      case .grantsChanged:
        checkAuthorization()
      case .waypoints(let received):
        importWaypoints(received)
      }
      periodic()
      updateStatus()
    }
    signals.cancel()
    notifier.stopping()
    stopSource()
    broker?.stop()
    mqtt?.stop()
    if !saveState() { exitCode = .ioError }
    if tracker.heldCount > 0 || tracker.droppedEvents > 0 {
      log.error(
        "store: \(tracker.heldCount + tracker.droppedEvents) event(s) could not be written "
          + "and are lost (the store stayed unwritable)")
    }
    if let track { log.info("track: \(track.inserted) new point(s) recorded") }
    hooks.shutdown(timeoutSeconds: configuration.hookTimeoutSeconds + 2)
    do {
      try database.checkpoint()
    } catch {
      log.warning("store checkpoint failed: \(error)")
    }
    let open = tracker.openPlaceIDs.sorted().map { monitor.name(of: $0) ?? $0 }
    log.notice(
      "stopped; \(open.count) visit(s) left open"
        + (open.isEmpty ? "" : ": \(open.joined(separator: ", "))"))
    return exitCode.rawValue
  }

  /// The next input, waiting at most until the next thing due; `nil` when that came first.
  private func nextInput() -> DaemonInput? {
    var deadlines: [ContinuousClock.Instant] = []
    if notifier.watchdogInterval != nil { deadlines.append(nextWatchdog) }
    if pollsAuthorization { deadlines.append(nextAuthorizationCheck) }
    if unsavedState { deadlines.append(nextSave) }
    guard let deadline = deadlines.min() else { return inputs.pop() }
    let remaining = clock.now.duration(to: deadline)
    // Rounded up, so that the wait does not end a little before the deadline.
    let milliseconds =
      remaining.components.seconds * 1000
      + (remaining.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    guard milliseconds > 0 else { return inputs.popIfAvailable() }
    return inputs.pop(timeoutMilliseconds: Int(clamping: milliseconds))
  }

  /// What is due: systemd's watchdog ping (at half of `WatchdogSec`, only when it is set), the
  /// grant check when the store cannot be watched, the save of a changed state.
  private func periodic() {
    let now = clock.now
    if let interval = notifier.watchdogInterval, now >= nextWatchdog {
      notifier.watchdog()
      nextWatchdog = now + interval
    }
    if pollsAuthorization, now >= nextAuthorizationCheck { checkAuthorization() }
    if unsavedState, now >= nextSave { _ = saveState() }
  }

  /// Notes that the monitor's state changed: a save becomes due `save-interval` after the last.
  private func noteStateChanged() {
    guard !unsavedState else { return }
    unsavedState = true
    let earliest = clock.now + .seconds(configuration.saveIntervalSeconds)
    if nextSave < clock.now { nextSave = earliest }
  }

  // MARK: - Fixes and events

  private func handle(_ fix: Fix) {
    lastMode = fix.mode
    noteStateChanged()
    if log.isEnabled(.debug), let location = Location(fix) {
      let accuracy = location.horizontalAccuracy.map { " ±\($0.fixed(1)) m" } ?? ""
      let coordinate = location.coordinate
      log.debug(
        "fix \(Timestamp.format(location.timestamp)) \(coordinate.latitude.fixed(7)),"
          + "\(coordinate.longitude.fixed(7))\(accuracy)")
    }
    queueLocationMessage(fix)
    defer { saveWhileInside(fix) }
    let outcomes = tracker.process(fix)
    noteLate(outcomes)
    for outcome in outcomes where !outcome.isLate {
      let event = outcome.event
      if let failure = outcome.failure {
        let what = "the \(event.className) of '\(event.placeID)'"
        if outcome.isHeld {
          noteStoreWrite(what, failure)
          log.info("store: \(what) is held until it can be written")
        } else {
          log.error("store: cannot record \(what): \(failure)")
        }
      } else if tracker.recorder != nil {
        noteStoreWrite("the \(event.className) of '\(event.placeID)'", nil)
      }
      broker?.publish(event)
      log.notice(describe(event))
      hooks.enqueue(event)
    }
    mqtt?.wake()
    recordTrack(fix)
    recordStays(fix)
  }

  /// Feeds `fix` to the stay recorder (a stay may begin, end or be saved).
  private func recordStays(_ fix: Fix) {
    guard let stays else { return }
    let written = stays.writeCount
    do {
      for event in try stays.process(fix) {
        // Opened or closed: to the socket's `always` watchers of visits (`publish` returns at once).
        broker?.publish(event.stay, place: stays.place(of: event.stay).map(PlaceSnapshot.init))
        switch event {
        case .arrival:
          let place = event.stay.placeID == nil ? "no declared place" : "a declared place"
          log.info("stay: arrived, at \(place)")
        case .departure: log.info("stay: left after \(Int(event.stay.durationSeconds ?? 0)) s")
        }
      }
      // Only a write that happened ends an episode of failed writes: a fix that wrote nothing
      // says nothing about the store.
      if stays.writeCount > written { noteStoreWrite("the stays", nil) }
    } catch {
      noteStoreWrite("the stays", error)
    }
  }

  /// Adds `fix` to the track (a batch may be written): after its place events, which are
  /// committed, published and handed to the hooks by then.
  private func recordTrack(_ fix: Fix) {
    guard let track else { return }
    let written = track.inserted
    do {
      try track.record(fix)
      if track.inserted > written { noteStoreWrite("the track", nil) }
    } catch {
      noteStoreWrite("the track (\(track.pendingCount) point(s) wait)", error)
    }
  }

  /// Notes a write's outcome (`error` is `nil` for success) and logs the start and the end of
  /// an episode of failed writes, once each.
  private func noteStoreWrite(_ what: String, _ error: (any Error)?) {
    if let error {
      if let message = storeHealth.failed(what, error) { log.error(message) }
      return
    }
    let waiting = track?.pendingCount ?? 0
    let held =
      "\(lateEvents) held event(s) recorded, \(tracker.heldCount) still held, "
      + "\(waiting) track point(s) waiting for their batch"
    if let message = storeHealth.succeeded(held: held) {
      log.notice(message)
      lateEvents = 0
    }
  }

  /// Counts the held events that were recorded now, and notes their writes. One that failed
  /// for good when tried again (its place was removed meanwhile) is logged and dropped.
  private func noteLate(_ outcomes: [VisitTracker.Outcome]) {
    let late = outcomes.filter(\.isLate)
    guard !late.isEmpty else { return }
    for outcome in late {
      let what = "the held \(outcome.event.className) of '\(outcome.event.placeID)'"
      if let failure = outcome.failure {
        log.error("store: cannot record \(what): \(failure)")
      } else {
        lateEvents += 1
        log.info("store: recorded \(what)")
      }
    }
    noteStoreWrite("held events", nil)
  }

  private func describe(_ event: PlaceEvent) -> String {
    let name = monitor.name(of: event.placeID) ?? event.placeID
    switch event {
    case .arrival(let arrival):
      return "ARRIVAL at \(name) (\(event.placeID)) at \(Timestamp.format(arrival.time)): "
        + reasonText(arrival.reason)
    case .departure(let departure):
      return "DEPARTURE from \(name) (\(event.placeID)) at \(Timestamp.format(departure.time)) "
        + "after \(Int(departure.durationSeconds.rounded())) s: " + reasonText(departure.reason)
    }
  }

  private func reasonText(_ reason: EventReason) -> String {
    var text = "rule \(reason.rule), distance \(reason.distanceMeters.fixed(1)) m"
    if let accuracy = reason.horizontalAccuracyMeters {
      text += ", accuracy \(accuracy.fixed(1)) m"
    }
    text +=
      ", radii \(reason.enterRadiusMeters.fixed(1))/\(reason.exitRadiusMeters.fixed(1)) m, "
      + "\(reason.confirmations) confirmation(s)"
    return text
  }

  private func handle(_ report: SourceHealth) {
    let before = health
    health = report
    if report.service != before.service {
      switch report.service {
      case .reachable:
        log.notice("connected to gpsd at \(configuration.gpsd)")
      case .unreachable:
        log.warning(
          "gpsd at \(configuration.gpsd) unreachable"
            + (report.lastError.map { ": \($0)" } ?? ""))
      case .unknown:
        break
      }
    }
    if report.devicePresent != before.devicePresent, report.service == .reachable {
      if report.devicePresent == true {
        log.notice("receiver present" + (report.device.map { ": \($0)" } ?? ""))
      } else if report.devicePresent == false {
        log.warning("gpsd reports no receiver")
      }
    }
    if report.mode != before.mode { lastMode = report.mode }
  }

  // MARK: - Status

  private func currentStatus() -> String {
    if let problem = authorizationProblem { return "not authorized: \(problem)" }
    if health.service != .reachable {
      return "waiting for gpsd at \(configuration.gpsd)"
    }
    if health.devicePresent == false { return "waiting for a receiver (gpsd has no device)" }
    guard let mode = lastMode, mode == .twoDimensional || mode == .threeDimensional else {
      return "no fix"
    }
    let open = monitor.openVisits().map { monitor.name(of: $0.placeID) ?? $0.placeID }
    if !open.isEmpty { return "inside \(open.joined(separator: ", "))" }
    let fix = mode == .threeDimensional ? "3D fix" : "2D fix"
    return "\(fix), not at any of \(monitor.placeCount) place(s)"
  }

  private func updateStatus() {
    let text = currentStatus()
    guard text != status else { return }
    status = text
    notifier.status(text)
    log.info("status: \(text)")
  }

  // MARK: - Authorization

  private func checkAuthorization() {
    nextAuthorizationCheck = clock.now + .seconds(configuration.authorizationCheckSeconds)
    let problem = authorizationProblemNow()
    let before = authorizationProblem
    authorizationProblem = problem
    if let problem {
      if problem != before {
        log.warning("not authorized, waiting: \(problem)")
      }
      stopSource()
    } else {
      if before != nil { log.notice("client '\(configuration.clientID)' is authorized (always)") }
      pipeline?.manager.refreshAuthorization()
      startSource()
    }
  }

  private func authorizationProblemNow() -> String? {
    let client = configuration.clientID
    let grantCommand =
      "waymark auth grant \(client) always --store \(configuration.storePath)"
    if !authorization.services.isEnabled {
      return "location services are disabled (\(LocationServicesSwitch.defaultPath) exists)"
    }
    // The daemon never asks an agent, so it has no session grants: the stored grant decides.
    let state: AuthorizationState
    do {
      state =
        try authorization.store.grant(for: client)?.state
        ?? AuthorizationState(status: .notDetermined)
    } catch {
      return "cannot read the grants: \(error)"
    }
    switch state.status {
    case .authorizedAlways:
      if state.accuracy == .reduced {
        return "client '\(client)' has reduced accuracy; monitoring needs full: \(grantCommand)"
      }
      return nil
    case .authorizedWhenInUse:
      return "client '\(client)' is authorized only when in use; the daemon needs always: "
        + grantCommand
    case .denied:
      return "client '\(client)' is denied; to allow it: \(grantCommand)"
    case .restricted:
      return "location services are restricted for client '\(client)'"
    case .notDetermined:
      return "client '\(client)' has no grant; run: \(grantCommand)"
    }
  }

  // MARK: - gpsd

  private func startSource() {
    guard pipeline == nil else { return }
    let gpsd = GPSDSource(configuration: GPSDConfiguration(endpoint: configuration.gpsd))
    let pipeline = FixPipeline(
      clientID: configuration.clientID, source: gpsd.fixSource, authorization: authorization)
    self.pipeline = pipeline
    health = SourceHealth()
    lastMode = nil
    let inputs = self.inputs
    // Subscribed before the source starts, so the first fix is not missed.
    let fixes = pipeline.manager.sourceFixes()
    let healthReports = pipeline.manager.healthUpdates
    sourceTasks = [
      Task {
        for await fix in fixes { inputs.push(.fix(fix)) }
      },
      Task {
        for await report in healthReports { inputs.push(.health(report)) }
      },
    ]
    // Straight to the socket's clients, from the task that reads gpsd: they need not wait for
    // a stream hop or the main loop's disk work.
    let broker = self.broker
    pipeline.start { broker?.publish($0) }
    log.info("following gpsd at \(configuration.gpsd)")
  }

  private func stopSource() {
    guard let pipeline else { return }
    pipeline.stop()
    for task in sourceTasks { task.cancel() }
    sourceTasks = []
    self.pipeline = nil
    health = SourceHealth()
    lastMode = nil
  }

  // MARK: - Places and state

  /// While a visit is open, saves the state every `save-interval-inside` seconds of fix time,
  /// so that a crash loses little of the stay.
  private func saveWhileInside(_ fix: Fix) {
    guard let time = fix.time, tracker.hasOpenVisit else { return }
    if let last = lastInsideSave,
      time.timeIntervalSince(last) < configuration.saveIntervalInsideSeconds
        && time >= last
    {
      return
    }
    lastInsideSave = time
    _ = saveState()
  }

  /// Saves the monitor's state and the pending fix counts in one transaction, then the track's
  /// waiting points in another.
  @discardableResult
  private func saveState() -> Bool {
    unsavedState = false
    nextSave = clock.now + .seconds(configuration.saveIntervalSeconds)
    var saved = true
    do {
      try tracker.save()
      noteLate(tracker.takeLateOutcomes())
      noteStoreWrite("the monitor state", nil)
    } catch {
      noteLate(tracker.takeLateOutcomes())
      noteStoreWrite("the monitor state", error)
      saved = false
    }
    do {
      try stays?.save()
    } catch {
      noteStoreWrite("the open stay", error)
      saved = false
    }
    if let track {
      let waiting = track.pendingCount
      do {
        try track.flush()
        if waiting > 0 { noteStoreWrite("the track", nil) }
      } catch {
        noteStoreWrite("the track (\(track.pendingCount) point(s) wait)", error)
        saved = false
      }
    }
    return saved
  }

  // MARK: - MQTT

  private func startMQTT() {
    guard let mqtt else { return }
    let settings = mqtt.settings
    tracker.outboxMessages = { [unowned self] event in
      [
        OwnTracks.transitionMessage(
          event, placeCreated: placeCreated[event.placeID], settings: settings)
      ]
    }
    queueWaypoints()
    do {
      try mqtt.start()
      log.notice(
        "MQTT: publishing to \(settings.host):\(settings.port) as \(settings.topic) "
          + (settings.usesTLS ? "over TLS" : "in plaintext"))
    } catch {
      log.error("\(error); MQTT is off")
      self.mqtt = nil
    }
  }

  /// A location message when `mqtt-interval` seconds of fix time passed since the last one.
  private func queueLocationMessage(_ fix: Fix) {
    guard let mqtt, let time = fix.time else { return }
    let settings = mqtt.settings
    if let last = lastLocationMessage, time.timeIntervalSince(last) < settings.intervalSeconds {
      return
    }
    guard let payload = OwnTracks.location(fix, tid: settings.tid) else { return }
    lastLocationMessage = time
    queue([
      OutboxMessage(kind: .location, topic: settings.topic, payload: payload, qos: settings.qos)
    ])
  }

  /// The places as OwnTracks waypoints, retained on `<topic>/waypoints`.
  private func queueWaypoints() {
    guard let mqtt else { return }
    let sorted: [Place]
    do {
      sorted = try database.read { try PlaceRepository($0).all() }
    } catch {
      log.error("store: cannot read the places for MQTT's waypoints: \(error)")
      return
    }
    queue([
      OutboxMessage(
        kind: .waypoints, topic: mqtt.settings.topic + "/waypoints",
        payload: OwnTracks.waypoints(sorted), qos: mqtt.settings.qos, retain: true)
    ])
    // Reading every place filled the page cache and the heap; give both back, as at start-up.
    try? database.releaseCacheMemory()
    HeapTrim.release()
  }

  private func queue(_ messages: [OutboxMessage]) {
    guard let mqtt else { return }
    do {
      try database.write {
        try OutboxRepository($0).enqueue(
          messages, now: Date(), maximum: mqtt.settings.outboxMaximum)
      }
      mqtt.wake()
      noteStoreWrite("an MQTT message", nil)
    } catch {
      noteStoreWrite("an MQTT message", error)
    }
  }

  /// Places from a `setWaypoints` command: added to (or updated in) the store and monitored.
  private func importWaypoints(_ received: [Place]) {
    do {
      try database.write { _ = try PlaceRepository($0).upsert(received) }
      let all = try database.read { try PlaceRepository($0).all() }
      placeCreated = placeCreationTimes(all)
      tracker.replacePlaces(all, configuration: configuration.detection)
      noteStateChanged()
      stays?.replacePlaces(all)
      log.notice("MQTT: \(received.count) place(s) from setWaypoints; \(all.count) in all")
      queueWaypoints()
    } catch {
      log.error("MQTT: cannot import the places of setWaypoints: \(error)")
    }
  }

  // MARK: - Reload

  private func reload() {
    notifier.reloading()
    log.notice("reloading the configuration and the places")
    var next = configuration
    do {
      next = try WaymarkDaemon.loadConfiguration(
        path: configPath, explicit: explicitConfig, environment: environment, log: log)
    } catch {
      log.error("configuration error, keeping the running configuration: \(error)")
    }
    if next.storePath != configuration.storePath {
      log.warning(
        "the store path changed to \(next.storePath); that takes a restart, keeping "
          + configuration.storePath)
      next.storePath = configuration.storePath
    }
    let endpointChanged = next.gpsd != configuration.gpsd
    if next.socketPath != configuration.socketPath
      || next.nmeaSocketPath != configuration.nmeaSocketPath
      || next.nmeaTCP != configuration.nmeaTCP
    {
      log.warning("a socket changed; that takes a restart, keeping the running sockets")
      next.socketPath = configuration.socketPath
      next.nmeaSocketPath = configuration.nmeaSocketPath
      next.nmeaTCP = configuration.nmeaTCP
    }
    if next.usesPolkit != configuration.usesPolkit {
      log.warning(
        "polkit changed; that takes a restart, keeping polkit = "
          + (configuration.usesPolkit ? "yes" : "no"))
      next.usesPolkit = configuration.usesPolkit
    }
    configuration = next
    log.level = next.logLevel
    hooks.update(next.hookSettings)
    reloadTrack(next)
    do {
      let all = try database.read { try PlaceRepository($0).all() }
      if mqtt != nil { placeCreated = placeCreationTimes(all) }
      tracker.replacePlaces(all, configuration: next.detection)
      noteStateChanged()
      stays?.replacePlaces(all)
      try database.releaseCacheMemory()
      log.notice("\(monitor.placeCount) place(s) loaded")
    } catch {
      log.error("cannot reload the places, keeping the previous ones: \(error)")
    }
    if endpointChanged { stopSource() }
    checkAuthorization()
    status = currentStatus()
    notifier.ready(status: status)
  }
}

extension DaemonRuntime {
  /// Applies the track keys of a reloaded configuration; `track = off` writes what waits first.
  fileprivate func reloadTrack(_ next: DaemonConfiguration) {
    if let track, next.recordsTrack {
      track.update(next.track)
    } else if let track {
      do { try track.flush() } catch { log.error("store: cannot record the track: \(error)") }
      self.track = nil
      log.notice("track recording off")
    } else if next.recordsTrack {
      do {
        track = try TrackRecorder(database: database, settings: next.track)
        log.notice("track recording on")
      } catch {
        log.error("store: cannot read the track, recording stays off: \(error)")
      }
    }
  }
}

extension DaemonConfiguration {
  /// The hook part of the configuration.
  var hookSettings: HookRunner.Settings {
    HookRunner.Settings(
      arrival: arrivalHook, departure: departureHook, timeoutSeconds: hookTimeoutSeconds,
      queueCapacity: hookQueueCapacity)
  }
}

/// Hands the runtime (owned by the main loop alone) to the main loop's thread.
private final class RuntimeBox: @unchecked Sendable {
  let runtime: DaemonRuntime

  init(_ runtime: DaemonRuntime) { self.runtime = runtime }
}
