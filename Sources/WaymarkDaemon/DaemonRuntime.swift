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
/// Its fixes go through a ``WaymarkPipeline`` whose output thread is the main loop: gpsd's
/// reader thread passes each through the manager's gate and hands it over through a
/// ``PipelineInbox`` (no fix dropped; gpsd is read no faster than the loop takes), and the loop runs each through the place monitor, the
/// stays and the sinks (store health, location socket, log, hooks, MQTT outbox, track).
final class DaemonRuntime {
  /// The page cache of each of the store's connections, KiB (SQLite's default is 2,000).
  static let pageCacheKibibytes = 256

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
  /// The fix time of the last save made while a visit was open.
  var lastInsideSave: Date?
  var authorizationProblem: String? = "not checked yet"

  /// Source → manager → inbox → monitor, stays, sinks; run by the main loop.
  var pipeline: WaymarkPipeline!
  /// The fixes the manager's reading task handed over, until the main loop takes them.
  let inbox: PipelineInbox
  /// The MQTT outbox, when MQTT is configured.
  var outbox: OutboxSink?
  /// The track, when `track = on` (the pipeline's ``TrackSink`` records into it): written
  /// after the place events of each fix.
  var track: TrackRecorder? {
    get { pipeline.context.track }
    set { pipeline.context.track = newValue }
  }

  /// The daemon's own location manager over gpsd (nothing is read from gpsd before the
  /// daemon's grant, and it stops reading when the grant goes).
  var source: FixPipeline?
  /// gpsd's reader delivering to ``source`` on its own thread, while the grant holds.
  var gpsdAttachment: GPSDSource.Attachment?
  var health = SourceHealth()
  var lastMode: FixMode?
  var status = ""

  /// What wakes the main loop. Overflow `.dropOldest`: the senders (signals, the grants'
  /// watcher, the MQTT thread, the inbox's wake-up, the health task) never wait for the loop;
  /// 4,096 inputs never pile up while the loop runs, and a fix is never one of them.
  let inputs = Channel<DaemonInput>(capacity: 4096, overflow: .dropOldest)
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
    // The daemon's reads and writes are small; a bulk one (the places at start-up, a large
    // message's deletion) leaves at most this much cached in each connection.
    try database.limitPageCache(kibibytes: DaemonRuntime.pageCacheKibibytes)
    // The built monitor from the store's snapshot of the places, else the monitor's columns
    // straight into its packed storage (no `Place` per place) and the snapshot stored.
    let (places, fromSnapshot) = try PlaceTable.loadNoting(from: database)
    log.info(
      "\(places.count) place(s) "
        + (fromSnapshot ? "from the store's snapshot" : "read from the store's rows"))
    // Creation times of the places (OwnTracks' `wtst`), kept only while MQTT is on.
    let placeCreated =
      configuration.mqtt == nil
      ? [:] : try database.read { try PlaceRepository($0).creationTimes() }
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
    ) { [inputs] in inputs.send(.grantsChanged) }
    if let settings = configuration.mqtt {
      mqtt = MQTTPublisher(
        settings: settings, database: database,
        log: { [log] priority, message in log.log(priority, message) },
        onWaypoints: { [inputs] places in inputs.send(.waypoints(places)) }, time: time)
    }
    if let settings = configuration.traccar {
      traccar = TraccarSender(
        settings: settings, database: database,
        log: { [log] priority, message in log.log(priority, message) }, time: time)
    }
    // Overflow `.wait`: no fix is dropped; gpsd's reader waits for room (gpsd buffers).
    inbox = PipelineInbox(
      capacity: PipelineInbox.inboxCapacity, overflow: .wait,
      whenNonEmpty: { [inputs] in inputs.send(.fixes) })
    let now = clock.now
    nextWatchdog = now
    nextSave = now + .seconds(configuration.saveIntervalSeconds)
    nextAuthorizationCheck = now
    pipeline = try makePipeline(placeCreated: placeCreated)
  }

  /// The daemon's sinks, in order: the store's health, the location socket (and the monitors
  /// held for apps), the log, the hooks, the MQTT outbox, Traccar, the track. They share one
  /// ``PipelineContext``: the clock, the store's health (every write reports there), the
  /// track, and the names of places and stays. `placeCreated`: the places' creation times, for
  /// MQTT.
  private func makePipeline(placeCreated: [String: Date]) throws -> WaymarkPipeline {
    let context = PipelineContext(
      time: clock,
      track: configuration.recordsTrack
        ? try TrackRecorder(database: database, settings: configuration.track, now: wallClock)
        : nil)
    var sinks: [any PipelineSink] = [StoreSink(log: log, tracker: tracker, context: context)]
    if let broker {
      sinks.append(BrokerSink(broker: broker, context: context))
      if let heldMonitors {
        sinks.append(HeldMonitorSink(registry: heldMonitors, broker: broker, log: log))
      }
    }
    sinks += [LogSink(log: log, context: context), HookSink(hooks: hooks)]
    if let mqtt {
      let outbox = OutboxSink(
        settings: mqtt.settings, database: database, wake: { mqtt.wake() },
        placeCreated: placeCreated,
        context: context)
      sinks.append(outbox)
      self.outbox = outbox
    }
    if let traccar {
      sinks.append(
        TraccarSink(
          settings: traccar.settings, database: database, wake: { traccar.wake() },
          context: context))
    }
    sinks.append(TrackSink(context: context))
    return WaymarkPipeline(tracker: tracker, stayRecorder: stays, context: context, sinks: sinks)
  }

  // MARK: - Main loop

  func run(signals: SignalWaiter) -> Int32 {
    let inputs = self.inputs
    startMQTT()
    startTraccar()
    signals.start(threadName: "waymarkd-signal") { inputs.send(.signal($0)) }
    log.notice(
      "started: store \(configuration.storePath), \(monitor.placeCount) place(s), "
        + "\(tracker.openPlaceIDs.count) open visit(s), gpsd \(configuration.gpsd), "
        + "client '\(configuration.clientID)'")
    checkAuthorization()
    status = currentStatus()
    notifier.ready(status: status)
    // Start-up is over: the code only it ran, and the heap it freed, leave the resident set.
    ResidentSet.trim()

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
    return stop().rawValue
  }

  /// What happens to the pipeline and every sink when the daemon stops (SIGTERM, SIGINT), in
  /// this order:
  ///
  /// 1. The source: gpsd is no longer read, and the fixes already in the inbox go through
  ///    the pipeline (none is dropped).
  /// 2. The location socket (``BrokerSink``, ``HeldMonitorSink``, whose events are stored at
  ///    each fix): the broker stops and its clients see the socket close. The MQTT publisher
  ///    and the Traccar sender stop; what ``OutboxSink`` and ``TraccarSink`` queued stays in
  ///    the store's outbox, sent after the next start. ``LogSink`` logs to the end.
  /// 3. ``WaymarkPipeline/checkpoint()``: the monitor's state and the pending fix counts, the
  ///    open stay as it is, then each sink's buffers (the track's waiting points; the outbox
  ///    has none, it queues each message at once). Each write reports to ``StoreSink``, which
  ///    logs a failure; any failure makes the exit code 74 (`EX_IOERR`). The events still
  ///    held because the store stayed unwritable are lost, and that is logged.
  /// 4. ``HookSink``: the queued hooks have `hook-timeout` (plus 2 s) to finish; the rest are
  ///    dropped with a warning.
  /// 5. The store's write-ahead log is checkpointed; the last line names the visits left
  ///    open.
  ///
  /// Nothing is ended: the daemon never calls ``WaymarkPipeline/finish()`` (the end of a
  /// source, what `waymark replay` calls at the end of its log). The open visits stay open
  /// and the open stay is saved as it is, not closed: a restart resumes them, so a restart in
  /// the middle of a visit or a stay records one, not two.
  ///
  /// - Returns: ``ExitCode/ok``, or ``ExitCode/ioError`` when the checkpoint failed.
  private func stop() -> ExitCode {
    notifier.stopping()
    stopSource()
    processFixes()
    log.info(
      "pipeline: \(pipeline.processedCount) fix(es) processed, at most \(inbox.highWater) "
        + "waiting at once")
    broker?.stop()
    mqtt?.stop()
    traccar?.stop()
    let exitCode = saveState() ? ExitCode.ok : .ioError
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
    return exitCode
  }

  /// The next input, waiting at most until the next thing due; `nil` when that came first.
  private func nextInput() -> DaemonInput? {
    var deadlines: [ContinuousClock.Instant] = []
    if notifier.watchdogInterval != nil { deadlines.append(nextWatchdog) }
    if pollsAuthorization { deadlines.append(nextAuthorizationCheck) }
    if unsavedState { deadlines.append(nextSave) }
    guard let deadline = deadlines.min() else { return inputs.receive() }
    let remaining = clock.now.duration(to: deadline)
    // Rounded up, so that the wait does not end a little before the deadline.
    let milliseconds =
      remaining.components.seconds * 1000
      + (remaining.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    guard milliseconds > 0 else { return inputs.receiveIfAvailable() }
    return inputs.receive(timeoutMilliseconds: Int(clamping: milliseconds))
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
    if unsavedState, now >= nextSave {
      _ = saveState()
      // Once a save interval: code not run since the last one leaves the resident set.
      ResidentSet.trim()
    }
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
    for fix in inbox.receiveAll() {
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

  /// Saves what is in flight (``WaymarkPipeline/checkpoint()``: the monitor's state and the
  /// pending fix counts in one transaction, the open stay, then the track's waiting points);
  /// each failure is logged and counted by the store's health. The next periodic save is due
  /// `save-interval` from now.
  ///
  /// - Returns: whether everything was saved.
  @discardableResult
  func saveState() -> Bool {
    unsavedState = false
    nextSave = clock.now + .seconds(configuration.saveIntervalSeconds)
    return pipeline.checkpoint().isEmpty
  }
}
