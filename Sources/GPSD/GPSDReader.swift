import Dispatch
import FoundationEssentials
import Synchronization
import WaymarkCore

/// The stop flag of one reader thread, and whether that thread has finished.
final class ReaderControl: Sendable {
  private let stopRequested = Atomic<Bool>(false)
  private let finished = Atomic<Bool>(false)

  /// Asks the thread to stop; it notices within one poll interval.
  func stop() { stopRequested.store(true, ordering: .releasing) }
  var isStopping: Bool { stopRequested.load(ordering: .acquiring) }
  func markFinished() { finished.store(true, ordering: .releasing) }
  var isFinished: Bool { finished.load(ordering: .acquiring) }
}

/// What the reader thread tells its owner.
protocol ReaderSink: AnyObject, Sendable {
  /// A fix, with the instant `gps_read` returned it.
  func deliver(_ fix: Fix, readAt: ContinuousClock.Instant)
  /// Changes the health report.
  func updateHealth(_ change: (inout SourceHealth) -> Void)
  /// Reports gpsd's release and its active devices (`nil` keeps the previous value).
  func updateServer(version: String?, devices: [String]?)
}

/// The loop that runs on the dedicated reader thread: connect, read, reconnect.
///
/// A state machine with three states: connecting, connected (reading), waiting to reconnect.
struct GPSDReader<C: Clock<Duration>> {
  let configuration: GPSDConfiguration
  let clock: C
  let control: ReaderControl
  let sink: any ReaderSink

  /// Runs until the control asks to stop.
  func run() {
    defer { control.markFinished() }
    var generator = SeededGenerator(seed: configuration.seed)
    var failures = 0
    while !control.isStopping {
      let problem: String
      do {
        let session = try GPSDSession(endpoint: configuration.endpoint)
        failures = 0
        sink.updateHealth { health in
          health.service = .reachable
          health.reconnectAttempt = 0
        }
        let error = read(session)
        session.close()
        sink.updateServer(version: nil, devices: [])
        guard let error, !control.isStopping else { break }
        problem = error.description
      } catch {
        problem = "\(error) (\(configuration.endpoint))"
      }
      failures += 1
      reportUnreachable(problem, attempt: failures)
      wait(configuration.reconnect.delay(attempt: failures, using: &generator))
    }
  }

  /// Reads reports until an error or a stop request (then returns `nil`).
  private func read(_ session: GPSDSession) -> GPSDError? {
    var lastReceived = clock.now
    var probed = false
    var activeDevices: Set<String> = []
    var sky = SkyView()
    var previous: Fix?
    let watched = configuration.endpoint.device
    let timeout = configuration.receiveTimeout

    func publishDevices() {
      let devices = activeDevices.sorted()
      let present = watched.map { activeDevices.contains($0) } ?? !devices.isEmpty
      let device = watched ?? devices.first
      sink.updateServer(version: nil, devices: devices)
      sink.updateHealth { health in
        health.devicePresent = present
        health.device = device
      }
    }

    while !control.isStopping {
      switch session.read(waiting: configuration.pollInterval) {
      case .failed(let error):
        return error
      case .nothing:
        let idle = lastReceived.duration(to: clock.now)
        if idle >= timeout { return .silent }
        if idle >= timeout / 2, !probed {
          probed = true
          _ = session.send("?VERSION;")
        }
      case .report(let report):
        let readAt = ContinuousClock.now
        lastReceived = clock.now
        probed = false
        switch report {
        case .fix(var fix):
          fix.hdop = sky.hdop
          fix.vdop = sky.vdop
          fix.pdop = sky.pdop
          fix.satellitesUsed = sky.satellitesUsed
          fix.satellitesVisible = sky.satellitesVisible
          if case .device(let path) = fix.provenance, !activeDevices.contains(path) {
            activeDevices.insert(path)
            publishDevices()
          }
          guard fix != previous else { continue }
          previous = fix
          let mode = fix.mode
          let time = mode.hasPosition ? fix.time : nil
          sink.updateHealth { health in
            health.mode = mode
            if let time { health.lastFixTime = time }
          }
          sink.deliver(fix, readAt: readAt)
        case .sky(let view):
          sky = view
        case .devices(let paths):
          activeDevices = Set(paths)
          publishDevices()
        case .device(let path, let active):
          if active { activeDevices.insert(path) } else { activeDevices.remove(path) }
          publishDevices()
        case .error(let message):
          sink.updateHealth { $0.lastError = "gpsd: \(message)" }
        case .version(let release):
          sink.updateServer(version: release, devices: nil)
        case .other:
          break
        }
      }
    }
    return nil
  }

  /// Reports a failed connection or a lost one: gpsd unreachable, device and mode unknown.
  private func reportUnreachable(_ error: String, attempt: Int) {
    sink.updateHealth { health in
      health.service = .unreachable
      health.devicePresent = nil
      health.mode = .unknown
      health.lastError = error
      health.reconnectAttempt = attempt
    }
  }

  /// Waits `delay` on the injected clock, but returns early when asked to stop.
  ///
  /// The clock's `sleep` runs in a task that only sleeps; this thread waits on a semaphore in
  /// slices of the poll interval so that a stop request is seen quickly.
  private func wait(_ delay: Duration) {
    let semaphore = DispatchSemaphore(value: 0)
    let clock = self.clock
    let sleeper = Task {
      try? await clock.sleep(for: delay)
      semaphore.signal()
    }
    let slice = max(0.001, configuration.pollInterval.seconds)
    while !control.isStopping {
      if semaphore.wait(timeout: .now() + slice) == .success { return }
    }
    sleeper.cancel()
  }
}
