import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore

/// Runs the configured ARRIVAL/DEPARTURE commands off the monitoring path.
///
/// ``enqueue(_:)`` never blocks: events wait in a bounded queue (when it is full, the oldest
/// waiting event is dropped and a warning logged) and one dedicated thread runs the hooks one
/// after the other. Each hook is `/bin/sh -c <command>` in its own process group, with:
///
/// - the event as JSON (the NDJSON line of `waymark replay --places`) on standard input,
/// - the event in environment variables: `WAYMARK_EVENT` (`ARRIVAL`/`DEPARTURE`),
///   `WAYMARK_PLACE_ID`, `WAYMARK_PLACE_NAME`, `WAYMARK_TIME` (ISO 8601 UTC), `WAYMARK_RULE`,
///   `WAYMARK_DISTANCE` (metres), `WAYMARK_LATITUDE`, `WAYMARK_LONGITUDE` (degrees), and for a
///   departure `WAYMARK_ARRIVAL` and `WAYMARK_DURATION` (seconds),
/// - its standard output and error logged line by line at info priority.
///
/// A hook that runs longer than the timeout gets SIGTERM (its whole process group), then
/// SIGKILL a second later. systemd's notification variables are not passed on.
package final class HookRunner: Sendable {
  /// The commands and limits.
  package struct Settings: Sendable, Hashable {
    /// Shell command for arrivals, or `nil`.
    package var arrival: String?
    /// Shell command for departures, or `nil`.
    package var departure: String?
    /// Seconds before a hook is terminated.
    package var timeoutSeconds: Double
    /// Events that may wait.
    package var queueCapacity: Int

    /// Creates settings.
    package init(arrival: String?, departure: String?, timeoutSeconds: Double, queueCapacity: Int) {
      self.arrival = arrival
      self.departure = departure
      self.timeoutSeconds = timeoutSeconds
      self.queueCapacity = max(1, queueCapacity)
    }
  }

  private struct Job: Sendable {
    var command: String
    var event: PlaceEvent
  }

  private struct State {
    var settings: Settings
  }

  private let state: Locked<State>
  // Overflow `.dropOldest`: enqueueing never waits for a hook (it is called on the pipeline's
  // thread); when the queue is full the oldest waiting event goes, with a warning, since a
  // newer event says more about where the device is now.
  private let worker: Worker<Void>
  private let log: DaemonLog
  private let environment: [String: String]
  private let time: TimeSource

  /// Creates a runner and starts its thread.
  ///
  /// - Parameters:
  ///   - settings: commands and limits.
  ///   - log: where hook output and failures go.
  ///   - environment: the environment hooks start from (systemd's variables are removed).
  ///   - time: what a hook's timeout is measured on.
  package init(
    settings: Settings, log: DaemonLog,
    environment: [String: String] = ProcessInfo.processInfo.environment,
    time: TimeSource = .system
  ) {
    self.time = time
    self.state = Locked(State(settings: settings))
    self.worker = Worker(
      threadName: "waymarkd-hooks", capacity: settings.queueCapacity, overflow: .dropOldest
    ) { () }
    self.log = log
    var base = environment
    for name in SystemdNotifier.variables { base[name] = nil }
    self.environment = base
  }

  /// Replaces the commands and limits (on reload); waiting events keep their command.
  package func update(_ settings: Settings) {
    state.withLock { $0.settings = settings }
    worker.setCapacity(settings.queueCapacity)
  }

  /// Queues the hook for `event`, if one is configured. Never blocks.
  package func enqueue(_ event: PlaceEvent) {
    let command: String? = state.withLock { state in
      switch event {
      case .arrival: state.settings.arrival
      case .departure: state.settings.departure
      }
    }
    guard let command else { return }
    let job = Job(command: command, event: event)
    worker.perform(
      { [self] _ in run(job, timeoutSeconds: state.withLock { $0.settings.timeoutSeconds }) },
      ifDropped: { [self] reason in
        guard case .overflowed = reason else { return }
        log.warning(
          "hook queue full: dropped the \(event.className) hook of place '\(event.placeID)'")
      })
  }

  /// Events dropped because the queue was full.
  package var droppedCount: Int { worker.droppedCount }

  /// Stops accepting events and waits up to `timeoutSeconds` for the queued hooks to finish; the rest
  /// are dropped with a warning.
  package func shutdown(timeoutSeconds: Double) {
    let milliseconds = Int(saturating: min(max(0, timeoutSeconds), 86_400) * 1000)
    guard !worker.finish(.drain, timeoutMilliseconds: milliseconds).ended else { return }
    let left = worker.finish(.abandon, timeoutMilliseconds: 0).abandoned
    log.warning("stopping with \(left) hook(s) not run")
  }

  private func run(_ job: Job, timeoutSeconds: Double) {
    let name = job.event.className
    var environment = self.environment
    for (key, value) in HookRunner.variables(for: job.event) { environment[key] = value }
    let input = Array((job.event.jsonLine().string + "\n").utf8)
    let process: HookProcess
    do {
      process = try HookProcess.spawn(
        ["/bin/sh", "-c", job.command], environment: environment, input: input)
    } catch {
      log.error("\(name) hook could not start: \(error)")
      return
    }
    let outcome = process.wait(timeoutSeconds: timeoutSeconds, time: time) { line in
      self.log.info("\(name) hook: \(line)")
    }
    switch outcome {
    case .exited(0):
      log.info("\(name) hook for place '\(job.event.placeID)' succeeded")
    case .exited(let code):
      log.warning("\(name) hook for place '\(job.event.placeID)' exited with status \(code)")
    case .signaled(let signal):
      log.warning("\(name) hook for place '\(job.event.placeID)' was killed by signal \(signal)")
    case .timedOut:
      log.warning(
        "\(name) hook for place '\(job.event.placeID)' timed out after \(timeoutSeconds) s "
          + "and was terminated")
    }
  }

  /// The environment variables describing `event` for a hook.
  package static func variables(for event: PlaceEvent) -> [String: String] {
    var variables: [String: String] = [
      "WAYMARK_EVENT": event.className,
      "WAYMARK_PLACE_ID": event.placeID,
      "WAYMARK_TIME": Timestamp.format(event.time),
    ]
    let reason: EventReason
    let coordinate: Coordinate
    switch event {
    case .arrival(let arrival):
      variables["WAYMARK_PLACE_NAME"] = arrival.placeName
      reason = arrival.reason
      coordinate = arrival.coordinate
    case .departure(let departure):
      variables["WAYMARK_PLACE_NAME"] = departure.placeName
      variables["WAYMARK_ARRIVAL"] = Timestamp.format(departure.arrival)
      variables["WAYMARK_DURATION"] = departure.durationSeconds.fixed(3)
      reason = departure.reason
      coordinate = departure.coordinate
    }
    variables["WAYMARK_RULE"] = reason.rule
    variables["WAYMARK_DISTANCE"] = reason.distanceMeters.fixed(1)
    variables["WAYMARK_LATITUDE"] = coordinate.latitude.fixed(9)
    variables["WAYMARK_LONGITUDE"] = coordinate.longitude.fixed(9)
    return variables
  }
}
