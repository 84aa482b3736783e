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
    return .milliseconds(Int64((time.timeIntervalSince(previous) / factor * 1000).rounded()))
  }
}

/// Replays an NMEA log file as a `FixSource`: the same decoder as `waymark replay`, pulled
/// by the consumer (a slow consumer slows the replay, nothing piles up), paced by log time.
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
        let cursor = ReplayCursor(path: path, speed: speed, defaultDate: defaultDate, clock: clock)
        return AsyncStream(unfolding: { await cursor.next() })
      })
  }
}

/// The pull-driven state of one replay run. Only the stream's unfolding closure touches it, one
/// call at a time.
private final class ReplayCursor: @unchecked Sendable {
  private let speed: ReplaySpeed
  private let clock: any Clock<Duration>
  private var decoder: NMEADecoder
  private var descriptor: Int32
  private var pending: [Fix] = []
  private var pendingIndex = 0
  private var finished = false
  private var previousTime: Date?
  private var chunk = [UInt8](repeating: 0, count: 1 << 16)

  init(path: String, speed: ReplaySpeed, defaultDate: UTCDate?, clock: any Clock<Duration>) {
    self.speed = speed
    self.clock = clock
    decoder = NMEADecoder(path: path, defaultDate: defaultDate)
    descriptor = open(path, O_RDONLY)
  }

  deinit {
    if descriptor >= 0 { close(descriptor) }
  }

  func next() async -> Fix? {
    while pendingIndex >= pending.count {
      if finished { return nil }
      pending.removeAll(keepingCapacity: true)
      pendingIndex = 0
      fill()
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

  private func fill() {
    guard descriptor >= 0 else {
      finished = true
      return
    }
    let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
    if count > 0 {
      _ = chunk.withUnsafeBytes { raw in
        decoder.decode(chunk: UnsafeRawBufferPointer(rebasing: raw[0..<count])) {
          pending.append($0)
        }
      }
    } else if count < 0 && errno == EINTR {
      return
    } else {
      decoder.finish { pending.append($0) }
      finished = true
    }
  }
}
