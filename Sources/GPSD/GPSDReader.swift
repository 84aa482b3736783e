import FoundationEssentials
import Glibc
import Synchronization
import WaymarkCore

/// The stop flag of one reader thread, whether that thread has finished, and the pipe that
/// wakes it: the thread blocks in poll(2) on gpsd's socket and this pipe, so it wakes only for
/// data, a stop request or an alarm (``ReaderAlarm``), never on a timer of its own.
final class ReaderControl: Sendable {
  private let stopRequested = Atomic<Bool>(false)
  private let finished = Atomic<Bool>(false)
  /// The read end (non-blocking) and the write end of the wake pipe.
  private let wakeEnds: (read: Int32, write: Int32)

  init() {
    var ends: [Int32] = [-1, -1]
    if pipe(&ends) == 0 {
      for end in ends {
        _ = fcntl(end, F_SETFD, FD_CLOEXEC)
        _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
      }
    } else {
      ends = [-1, -1]
    }
    wakeEnds = (ends[0], ends[1])
  }

  deinit {
    if wakeEnds.read >= 0 { close(wakeEnds.read) }
    if wakeEnds.write >= 0 { close(wakeEnds.write) }
  }

  /// Asks the thread to stop; it wakes at once.
  func stop() {
    stopRequested.store(true, ordering: .releasing)
    wake()
  }

  var isStopping: Bool { stopRequested.load(ordering: .acquiring) }
  func markFinished() { finished.store(true, ordering: .releasing) }
  var isFinished: Bool { finished.load(ordering: .acquiring) }

  /// Wakes the thread from ``wait(readable:)``.
  func wake() {
    var byte: UInt8 = 1
    _ = write(wakeEnds.write, &byte, 1)
  }

  /// Blocks until `descriptor` is readable (`true`), the thread is woken or `timeout`
  /// milliseconds pass (-1: no limit) (`false`).
  ///
  /// Without a pipe (descriptors exhausted at creation) it waits at most 50 ms at a time, as a
  /// poll loop would.
  func wait(readable descriptor: Int32?, timeout: Int32 = -1) -> Bool {
    var entries = [pollfd(fd: wakeEnds.read, events: Int16(POLLIN), revents: 0)]
    if let descriptor { entries.append(pollfd(fd: descriptor, events: Int16(POLLIN), revents: 0)) }
    let limit = wakeEnds.read >= 0 ? timeout : (timeout < 0 ? 50 : min(timeout, 50))
    guard poll(&entries, nfds_t(entries.count), limit) > 0 else { return false }
    if entries[0].revents != 0 {
      var buffer = [UInt8](repeating: 0, count: 64)
      while read(wakeEnds.read, &buffer, buffer.count) > 0 {}
    }
    return entries.count > 1 && entries[1].revents != 0
  }
}

/// One pending wake-up of a reader thread at an instant of the injected clock. On the
/// continuous clock the thread's own poll(2) times out then (``timeout``, the remaining time read
/// from the injected clock); on any other clock (a test's manual one) a task sleeps on the clock
/// and wakes the thread through its ``ReaderControl``. Used by the reader thread alone.
final class ReaderAlarm<C: Clock<Duration>> {
  private let clock: C
  private let control: ReaderControl
  private var task: Task<Void, Never>?
  private var deadline: C.Instant?
  private let rang = Ring()
  /// Whether `C` is the continuous clock: then poll(2)'s timeout waits, no task.
  private let pollWaits: Bool
  /// Whether the deadline set is waited for by poll(2)'s timeout (no task).
  private var polled = false

  private final class Ring: Sendable {
    let value = Atomic<Bool>(false)
  }

  init(clock: C, control: ReaderControl) {
    self.clock = clock
    self.control = control
    pollWaits = C.self == ContinuousClock.self
  }

  deinit { task?.cancel() }

  /// Whether the alarm set last has gone off.
  var hasRung: Bool {
    if polled, let deadline { return clock.now >= deadline }
    return rang.value.load(ordering: .acquiring)
  }

  /// The timeout for poll(2) in milliseconds, rounded up: until the deadline on the continuous
  /// clock, else -1 (the task wakes the thread).
  var timeout: Int32 {
    guard polled, let deadline else { return -1 }
    let remaining = clock.now.duration(to: deadline)
    guard remaining > .zero else { return 0 }
    let milliseconds =
      remaining.components.seconds * 1000
      + (remaining.components.attoseconds + 999_999_999_999_999) / 1_000_000_000_000_000
    return Int32(clamping: milliseconds)
  }

  /// Makes the alarm go off no later than `instant`; an alarm already set earlier is kept (the
  /// thread looks at the time when it wakes, and sets the alarm again for what is still due).
  func set(_ instant: C.Instant) {
    if let deadline, deadline <= instant, !hasRung { return }
    task?.cancel()
    deadline = instant
    if pollWaits {
      polled = true
      return
    }
    rang.value.store(false, ordering: .releasing)
    let (clock, control, rang) = (self.clock, self.control, self.rang)
    task = Task {
      do { try await clock.sleep(until: instant, tolerance: nil) } catch { return }
      rang.value.store(true, ordering: .releasing)
      control.wake()
    }
  }

  /// Cancels the pending alarm.
  func cancel() {
    task?.cancel()
    task = nil
    deadline = nil
    polled = false
  }
}

/// What the reader thread tells its owner.
protocol ReaderSink: AnyObject, Sendable {
  /// A fix, with the instant `gps_read` returned it on the injected clock when that is the
  /// continuous clock (`nil` on any other).
  func deliver(_ fix: Fix, readAt: ContinuousClock.Instant?)
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
  ///
  /// Between reports the thread sleeps in poll(2). When nothing arrives for the probe
  /// interval it sends `?VERSION;`; an answer that is all gpsd sends (a silent receiver) doubles
  /// the interval, up to ``GPSDConfiguration/maximumProbeInterval``, and any other report sets it
  /// back to half the receive timeout. A probe left unanswered for half the receive timeout
  /// means gpsd is hung.
  private func read(_ session: GPSDSession) -> GPSDError? {
    var lastReceived = clock.now
    var probeSent: C.Instant?
    let timeout = configuration.receiveTimeout
    var probeInterval = timeout / 2
    var activeDevices: Set<String> = []
    var sky = SkyView()
    var previous: Fix?
    let watched = configuration.endpoint.device
    let alarm = ReaderAlarm(clock: clock, control: control)
    defer { alarm.cancel() }

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
      switch session.read(waiting: .zero) {
      case .failed(let error):
        return error
      case .nothing:
        let now = clock.now
        if let sent = probeSent {
          if sent.duration(to: now) >= timeout / 2 { return .silent }
          alarm.set(sent.advanced(by: timeout / 2))
        } else if lastReceived.duration(to: now) >= probeInterval {
          probeSent = now
          _ = session.send("?VERSION;")
          alarm.set(now.advanced(by: timeout / 2))
        } else {
          alarm.set(lastReceived.advanced(by: probeInterval))
        }
        _ = control.wait(readable: session.descriptor, timeout: alarm.timeout)
      case .report(let report):
        lastReceived = clock.now
        // On the continuous clock (waymarkd's), the instant `gps_read` returned, for latency
        // measurements; a test's manual clock has none.
        let readAt = lastReceived as? ContinuousClock.Instant
        if case .version = report, probeSent != nil {
          probeInterval = min(probeInterval * 2, configuration.maximumProbeInterval)
        } else {
          probeInterval = timeout / 2
        }
        probeSent = nil
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
  /// This thread sleeps in poll(2) until the alarm (``ReaderAlarm``) or a stop request wakes
  /// it.
  private func wait(_ delay: Duration) {
    let alarm = ReaderAlarm(clock: clock, control: control)
    alarm.set(clock.now.advanced(by: delay))
    defer { alarm.cancel() }
    while !control.isStopping && !alarm.hasRung {
      _ = control.wait(readable: nil, timeout: alarm.timeout)
    }
  }
}
