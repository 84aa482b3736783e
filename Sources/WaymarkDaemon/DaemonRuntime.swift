import FoundationEssentials
import GPSD
import Glibc
import Waymark
import WaymarkBroker
import WaymarkCore
import WaymarkDaemonConfiguration
import WaymarkMQTT
import WaymarkPipeline
import WaymarkProcess
import WaymarkStore
import WaymarkTraccar

/// The daemon's state, owned by the main loop (one thread); nothing here is shared.
///
/// Its fixes go through a ``WaymarkPipeline`` whose output thread is the main loop: the
/// manager's reading task hands them over through a ``PipelineInbox`` (no fix dropped; gpsd is
/// read no faster than the loop takes), and the loop runs each through the place monitor, the
/// stays and the sinks (store health, location socket, log, hooks, MQTT outbox, track).
final class DaemonRuntime {
  var configuration: DaemonConfiguration
  let configPath: String
  let explicitConfig: Bool
  let environment: [String: String]
  let log: DaemonLog
  let notifier: SystemdNotifier
  /// The store, opened once: its one writer thread runs every write of the daemon (the
  /// pipeline's from this loop, the broker's grants, the MQTT publisher's deletions) and its
  /// read-only connection serves every reader.
  let database: Database
  let tracker: VisitTracker
  var monitor: PlaceMonitor { tracker.monitor }
  /// Stays anywhere, when `stays = on`: recorded after the place events of each fix.
  var stays: StayRecorder?
  let hooks: HookRunner
  let authorization: AuthorizationCenter
  let broker: BrokerServer?
  /// The monitors held for apps (`MONITOR`), when the location socket is on.
  let heldMonitors: HeldMonitorRegistry?
  var mqtt: MQTTPublisher?
  /// The Traccar sender, when `traccar` is configured (and libcurl could be loaded).
  var traccar: TraccarSender?
  /// Creation times of the places (OwnTracks' `wtst`), kept only while MQTT is on.
  var placeCreated: [String: Date] = [:]
  /// The fix time of the last save made while a visit was open.
  var lastInsideSave: Date?
  var authorizationProblem: String? = "not checked yet"

  /// Source → manager → inbox → monitor, stays, sinks; run by the main loop.
  var pipeline: WaymarkPipeline!
  /// The fixes the manager's reading task handed over, until the main loop takes them.
  let inbox: PipelineInbox
  /// The store's health: every write of the pipeline reports here.
  var storeSink: StoreSink!
  /// The track, when `track = on`: written after the place events of each fix.
  var trackSink: TrackSink!
  /// The MQTT outbox, when MQTT is configured.
  var outbox: OutboxSink?
  var track: TrackRecorder? {
    get { trackSink.recorder }
    set { trackSink.recorder = newValue }
  }

  /// The daemon's own location manager over gpsd (nothing is read from gpsd before the
  /// daemon's grant, and it stops reading when the grant goes).
  var source: FixPipeline?
  var sourceTasks: [Task<Void, Never>] = []
  var health = SourceHealth()
  var lastMode: FixMode?
  var status = ""

  let inputs = BlockingQueue<DaemonInput>(capacity: 4096)
  /// The daemon's time: its deadlines on the monotonic reading; on the wall clock, what a
  /// fix's time is checked against (`fix-time-tolerance`), what bounds the track's retention
  /// window and what dates the outbox's messages. Handed to the broker, MQTT, Traccar and the
  /// hooks.
  let clock: TimeSource
  /// The wall-clock reading of ``clock``.
  var wallClock: @Sendable () -> Date { { [clock] in clock.date() } }
  /// Fixes ignored for being dated beyond `fix-time-tolerance` ahead of the system clock.
  var futureFixes = 0
  var nextWatchdog: ContinuousClock.Instant
  var nextSave: ContinuousClock.Instant
  /// Whether the monitor's state changed since the last save (a fix came, the places changed):
  /// the periodic save is due only then.
  var unsavedState = false
  var nextAuthorizationCheck: ContinuousClock.Instant
  /// Whether the grants are re-checked on a timer: only when no change of the store can wake
  /// the daemon (no broker, or inotify unavailable).
  var pollsAuthorization: Bool { broker?.watchesGrantChanges != true }

  init(
    configuration: DaemonConfiguration, configPath: String, explicitConfig: Bool,
    environment: [String: String], log: DaemonLog, notifier: SystemdNotifier,
    time: TimeSource = .system
  ) throws {
    clock = time
    self.configuration = configuration
    self.configPath = configPath
    self.explicitConfig = explicitConfig
    self.environment = environment
    self.log = log
    self.notifier = notifier
    database = try StorePath.open(configuration.storePath, create: true)
    // The built monitor from the store's snapshot of the places, else the monitor's columns
    // straight into its packed storage (no `Place` per place) and the snapshot stored.
    let (places, fromSnapshot) = try PlaceTable.loadNoting(from: database)
    log.info(
      "\(places.count) place(s) "
        + (fromSnapshot ? "from the store's snapshot" : "read from the store's rows"))
    if configuration.mqtt != nil {
      placeCreated = try database.read { try PlaceRepository($0).creationTimes() }
    }
    tracker = try VisitTracker(
      table: places, configuration: configuration.detection, database: database,
      source: "waymarkd", time: time
    ) { [log] placeID in
      log.warning("saved monitor state of place '\(placeID)' is unreadable; it starts outside")
    }
    tracker.holdsFailedEvents = true
    stays =
      configuration.recordsStays
      ? try StayRecorder(
        database: database, places: .monitored(by: { [tracker] in tracker.monitor }, in: database),
        configuration: configuration.stays,
        source: "waymarkd", resumes: true,
        saveIntervalSeconds: configuration.saveIntervalInsideSeconds) : nil
    try database.releaseCacheMemory()
    hooks = HookRunner(
      settings: configuration.hookSettings, log: log, environment: environment, time: time)
    authorization = AuthorizationCenter(
      store: DatabaseGrantStore(database: database), agent: PolicyAuthorizationAgent(),
      services: .file(), now: { [time] in time.date() })
    if configuration.socketPath != nil {
      heldMonitors = try HeldMonitorRegistry(database: database) { [log] key in
        log.warning(
          "held monitor '\(LogText.escaped(key.name))' of \(LogText.escaped(key.clientID)) is "
            + "unreadable; left out")
      }
    } else {
      heldMonitors = nil
    }
    broker = try DaemonRuntime.startBroker(
      configuration, database: database, log: log, environment: environment,
      heldMonitors: heldMonitors, time: time
    ) { [inputs] in inputs.push(.grantsChanged) }
    if let settings = configuration.mqtt {
      tracker.outboxMaximum = settings.outboxMaximum
      mqtt = MQTTPublisher(
        settings: settings, database: database,
        log: { [log] priority, message in log.log(priority, message) },
        onWaypoints: { [inputs] places in inputs.push(.waypoints(places)) }, time: time)
    }
    if let settings = configuration.traccar {
      traccar = TraccarSender(
        settings: settings, database: database,
        log: { [log] priority, message in log.log(priority, message) }, time: time)
    }
    inbox = PipelineInbox { [inputs] in inputs.push(.fixes) }
    let now = clock.now
    nextWatchdog = now
    nextSave = now + .seconds(configuration.saveIntervalSeconds)
    nextAuthorizationCheck = now
    pipeline = try makePipeline()
  }

  /// The daemon's sinks, in order: the store's health, the location socket (and the monitors
  /// held for apps), the log, the hooks, the MQTT outbox, the track.
  private func makePipeline() throws -> WaymarkPipeline {
    let trackSink = TrackSink(
      recorder: configuration.recordsTrack
        ? try TrackRecorder(database: database, settings: configuration.track, now: wallClock)
        : nil)
    let storeSink = StoreSink(log: log, tracker: tracker) { [weak trackSink] in
      trackSink?.recorder?.pendingCount ?? 0
    }
    let note: (String, (any Error)?) -> Void = { storeSink.noteWrite($0, $1) }
    trackSink.onWrite = note
    var sinks: [any PipelineSink] = [storeSink]
    if let broker {
      sinks.append(BrokerSink(broker: broker) { [unowned self] in self.stays?.place(of: $0) })
      if let heldMonitors {
        sinks.append(HeldMonitorSink(registry: heldMonitors, broker: broker, log: log))
      }
    }
    sinks += [
      LogSink(log: log) { [tracker] in tracker.monitor.name(of: $0) }, HookSink(hooks: hooks),
    ]
    if let mqtt {
      let outbox = OutboxSink(
        settings: mqtt.settings, database: database, wake: { mqtt.wake() }, onWrite: note,
        time: clock)
      sinks.append(outbox)
      self.outbox = outbox
    }
    if let traccar {
      sinks.append(
        TraccarSink(
          settings: traccar.settings, database: database, wake: { traccar.wake() },
          onWrite: note))
    }
    sinks.append(trackSink)
    self.storeSink = storeSink
    self.trackSink = trackSink
    return WaymarkPipeline(tracker: tracker, stayRecorder: stays, sinks: sinks)
  }

  // MARK: - Main loop

  func run() -> Int32 {
    let inputs = self.inputs
    startMQTT()
    startTraccar()
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
      let input = nextInput()
      // The fixes first, every time: a wake-up lost in a full input queue delays none.
      processFixes()
      switch input {
      case nil, .fixes:
        break
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
    processFixes()
    log.info(
      "pipeline: \(pipeline.processedCount) fix(es) processed, at most \(inbox.highWater) "
        + "waiting at once")
    broker?.stop()
    mqtt?.stop()
    traccar?.stop()
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
  func noteStateChanged() {
    guard !unsavedState else { return }
    unsavedState = true
    let earliest = clock.now + .seconds(configuration.saveIntervalSeconds)
    if nextSave < clock.now { nextSave = earliest }
  }

  // MARK: - Fixes

  /// Runs every fix the inbox holds through the pipeline, oldest first.
  func processFixes() {
    for fix in inbox.take() {
      if let time = fix.time, isAheadOfTheClock(time) { continue }
      lastMode = fix.mode
      noteStateChanged()
      // The daemon's sinks report their own failures; none throws.
      try? pipeline.process(fix)
      saveWhileInside(fix)
    }
  }

  /// Whether a fix dated `time` is further ahead of the system clock than `fix-time-tolerance`
  /// allows (logged at the 1st, 2nd, 4th, 8th … such fix, so that a stream of them cannot flood
  /// the log): such a fix is kept out of the pipeline (track and its retention, stays, visits,
  /// reduced releases, every client).
  private func isAheadOfTheClock(_ time: Date) -> Bool {
    let ahead = time.timeIntervalSince(clock.date())
    guard ahead > configuration.fixTimeToleranceSeconds else { return false }
    futureFixes += 1
    if futureFixes & (futureFixes - 1) == 0 {
      log.warning(
        "ignored a fix dated \(Timestamp.format(time)), \(Int(saturating: ahead)) s ahead of the "
          + "system clock (fix-time-tolerance = \(Int(saturating: configuration.fixTimeToleranceSeconds))"
          + "); \(futureFixes) so far")
    }
    return true
  }

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
  func saveState() -> Bool {
    unsavedState = false
    nextSave = clock.now + .seconds(configuration.saveIntervalSeconds)
    var saved = true
    do {
      try tracker.save()
      storeSink.noteLate(tracker.takeLateOutcomes())
      storeSink.noteWrite("the monitor state", nil)
    } catch {
      storeSink.noteLate(tracker.takeLateOutcomes())
      storeSink.noteWrite("the monitor state", error)
      saved = false
    }
    do {
      try stays?.save()
    } catch {
      storeSink.noteWrite("the open stay", error)
      saved = false
    }
    if let track {
      let waiting = track.pendingCount
      do {
        try track.flush()
        if waiting > 0 { storeSink.noteWrite("the track", nil) }
      } catch {
        storeSink.noteWrite("the track (\(track.pendingCount) point(s) wait)", error)
        saved = false
      }
    }
    return saved
  }
}
