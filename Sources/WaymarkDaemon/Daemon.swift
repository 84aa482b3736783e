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

/// Running `waymarkd`.
extension WaymarkDaemon {
  /// Runs the daemon with `arguments` (including the program name) until it is told to stop,
  /// blocking the calling thread.
  ///
  /// Call it on the main thread before any other thread starts: SIGTERM, SIGINT and SIGHUP are
  /// blocked here and taken by a thread of its own (``SignalWaiter``). No Swift concurrency
  /// runs in the daemon: every thread is one of its own, so nothing wakes while nothing
  /// happens (a first task would start the concurrency pool's once-a-second monitor).
  ///
  /// - Returns: the process exit code.
  package static func main(
    _ arguments: [String], environment: [String: String] = ProcessInfo.processInfo.environment,
    time: TimeSource = .system
  ) -> Int32 {
    // One malloc arena for every thread, set before the first thread starts.
    MallocArenas.limit(to: 1)
    signal(SIGPIPE, SIG_IGN)
    let signals = SignalWaiter([SIGTERM, SIGINT, SIGHUP])
    let words = Array(arguments.dropFirst())
    // `--version` and `--help` answer whatever else the line holds, the first of them first.
    switch words.first(where: { $0 == "--version" || $0 == "--help" || $0 == "-h" }) {
    case "--version"?:
      OutputSink.standardOutput.write("waymarkd \(WaymarkRelease.version)\n")
      OutputSink.standardOutput.flush()
      return ExitCode.ok.rawValue
    case .some:
      OutputSink.standardOutput.write(help)
      OutputSink.standardOutput.flush()
      return ExitCode.ok.rawValue
    case nil: break
    }
    let parsed: ParsedArguments
    do {
      parsed = try ParsedArguments(words, declared: options)
      _ = try parsed.requirePositionals([])
      if parsed.value("--config")?.isEmpty == true {
        throw CommandError.usage("Missing value for '--config'.")
      }
    } catch {
      return usageError((error as? CommandError)?.message ?? "\(error)")
    }
    let log = DaemonLog()
    let notifier = SystemdNotifier(environment: environment)
    let path = parsed.value(orDefault: "--config")
    let explicit = parsed.value("--config") != nil
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
        environment: environment, log: log, notifier: notifier, time: time)
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
    // The main loop runs on a thread of its own, named for it; this thread waits for its end.
    let box = RuntimeBox(runtime)
    let exitCode = Locked<Int32?>(nil)
    DetachedThread.start(name: "waymarkd-main") {
      let code = box.runtime.run(signals: signals)
      exitCode.withLock { $0 = code }
      exitCode.signal()
    }
    return exitCode.withLock(
      waitingUntil: { $0 != nil }, { $0 ?? ExitCode.software.rawValue })
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

/// Reloading (SIGHUP): the configuration and the places.
extension DaemonRuntime {
  func reload() {
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
    stays = StayRecorder.reloaded(
      stays, from: configuration, to: next, database: database,
      places: .monitored(by: { [tracker] in tracker.monitor }, in: database), log: log)
    pipeline.stayRecorder = stays
    configuration = next
    log.level = next.logLevel
    hooks.update(next.hookSettings)
    reloadTrack(next)
    do {
      if mqtt != nil {
        outbox?.placeCreated = try database.read { try PlaceRepository($0).creationTimes() }
      }
      tracker.replacePlaces(try PlaceTable.load(from: database), configuration: next.detection)
      noteStateChanged()
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
        track = try TrackRecorder(database: database, settings: next.track, now: wallClock)
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
