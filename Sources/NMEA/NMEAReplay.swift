import FoundationEssentials
import Glibc
import WaymarkCore

/// How fast a log is replayed.
public enum ReplaySpeed: Sendable, Hashable {
  /// As fast as the consumer takes fixes: log time only, no waiting.
  case max
  /// `factor` times real time: 1 waits as long as the log's own time steps, 10 a tenth of it.
  case factor(Double)

  /// Parses `max` or a positive number (an optional trailing `x` is allowed: `10x`).
  public init?(_ text: String) {
    if text == "max" {
      self = .max
      return
    }
    let digits = text.hasSuffix("x") ? String(text.dropLast()) : text
    guard let factor = Double(digits), factor.isFinite, factor > 0 else { return nil }
    self = .factor(factor)
  }

  /// How long to wait between fixes stamped `previous` and `time`: the log's step divided by
  /// the factor, to the millisecond; `nil` at `max` speed or when `time` is not later.
  public func delay(from previous: Date, to time: Date) -> Duration? {
    guard case .factor(let factor) = self, time > previous else { return nil }
    return .milliseconds(
      Int64(saturating: (time.timeIntervalSince(previous) / factor * 1000).rounded()))
  }
}

/// Replays an NMEA log as a `FixSource`: the same reader and decoder as `waymark replay`
/// (``NMEALogReader``), read and decoded on a thread of its own (``NMEAReadAhead``) and pulled
/// by the consumer (a slow consumer slows the replay, nothing piles up), paced by log time on
/// an injected clock.
public enum NMEAReplay {
  /// A source that replays the log at `path`.
  ///
  /// Each run re-opens the file. An unreadable file gives an empty run and a health report with
  /// the error. With ``ReplaySpeed/factor(_:)``, the waits between fixes are the differences of
  /// their fix times divided by the factor, slept on `clock`; fixes without a time do not wait.
  public static func source(
    path: String, speed: ReplaySpeed = .max, defaultDate: UTCDate? = nil,
    clock: any Clock<Duration> = ContinuousClock()
  ) -> FixSource {
    FixSource(
      name: path,
      health: {
        AsyncStream { continuation in
          if access(path, R_OK) == 0 {
            continuation.yield(SourceHealth(service: .reachable, devicePresent: true, device: path))
          } else {
            continuation.yield(
              SourceHealth(
                service: .unreachable, devicePresent: false, device: path,
                lastError: "cannot read \(path)"))
          }
          continuation.finish()
        }
      },
      fixes: {
        let readAhead = NMEAReadAhead()
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        if descriptor >= 0 {
          let reader = NMEALogReader(
            descriptor: descriptor, path: path, defaultDate: defaultDate, chunkBytes: 1 << 16)
          DetachedThread.start(name: "nmea-replay") {
            readAhead.fill(from: reader)
            close(descriptor)
          }
        } else {
          readAhead.cancel()
        }
        return fixes(of: readAhead, speed: speed, clock: clock)
      })
  }

  /// One run of the log that `readAhead` is filled with (by a thread of the caller's), paced
  /// by `speed` on `clock`.
  ///
  /// - Parameters:
  ///   - readAhead: the decoded log; the stream takes its batches in order.
  ///   - name: the source's name (the log's path).
  ///   - speed: ``ReplaySpeed/max`` never waits; a factor waits the difference of consecutive
  ///     fix times divided by it, on `clock`.
  ///   - clock: the clock the waits sleep on (a manual clock in tests).
  ///   - whenEnded: called once, after the last fix was taken, when the stream ends.
  /// - Returns: a source that can be run once.
  public static func source(
    _ readAhead: NMEAReadAhead, name: String, speed: ReplaySpeed = .max,
    clock: any Clock<Duration> = ContinuousClock(),
    whenEnded: @escaping @Sendable () -> Void = {}
  ) -> FixSource {
    FixSource(name: name) {
      let cursor = ReplayCursor(readAhead: readAhead, speed: speed, clock: clock)
      return AsyncStream(
        unfolding: {
          if let fix = await cursor.next() { return fix }
          whenEnded()
          return nil
        }, onCancel: { readAhead.cancel() })
    }
  }

  private static func fixes(
    of readAhead: NMEAReadAhead, speed: ReplaySpeed, clock: any Clock<Duration>
  ) -> AsyncStream<Fix> {
    let cursor = ReplayCursor(readAhead: readAhead, speed: speed, clock: clock)
    return AsyncStream(unfolding: { await cursor.next() }, onCancel: { readAhead.cancel() })
  }
}

/// The pull-driven state of one replay run: the batch being handed out and the pacing. Only
/// the stream's unfolding closure touches it, one call at a time.
private final class ReplayCursor: @unchecked Sendable {
  private let readAhead: NMEAReadAhead
  private let speed: ReplaySpeed
  private let clock: any Clock<Duration>
  private var pending: [Fix] = []
  private var pendingIndex = 0
  private var previousTime: Date?

  init(readAhead: NMEAReadAhead, speed: ReplaySpeed, clock: any Clock<Duration>) {
    self.readAhead = readAhead
    self.speed = speed
    self.clock = clock
  }

  deinit {
    readAhead.cancel()
  }

  func next() async -> Fix? {
    while pendingIndex >= pending.count {
      guard let batch = await readAhead.next() else { return nil }
      pending = batch
      pendingIndex = 0
    }
    let fix = pending[pendingIndex]
    pendingIndex += 1
    if case .factor = speed, let time = fix.time {
      if let previousTime, let delay = speed.delay(from: previousTime, to: time) {
        do {
          try await clock.sleep(for: delay)
        } catch {
          return nil  // cancelled
        }
      }
      previousTime = time
    }
    return fix
  }
}
