import Glibc

/// At most `limit` log lines per uid per `window`; the rest are counted, and one summary line
/// per uid says how many were left out when its window ends. A same-uid reconnect storm costs
/// the journal a few lines a minute, not one per connection.
struct LogThrottle: Sendable {
  /// Lines per uid per window.
  let limit: Int
  /// The window.
  let window: Duration
  private var windows: [uid_t: Window] = [:]

  private struct Window {
    var start: ContinuousClock.Instant
    var lines = 0
    var suppressed = 0
  }

  /// A throttle with no line written yet.
  init(limit: Int, window: Duration) {
    self.limit = limit
    self.window = window
  }

  /// Whether a line about `uid` may be written at `now` (counted when not).
  mutating func admit(uid: uid_t, at now: ContinuousClock.Instant) -> Bool {
    var entry = windows[uid] ?? Window(start: now)
    if entry.start.duration(to: now) >= window, entry.suppressed == 0 {
      entry = Window(start: now)
    }
    defer { windows[uid] = entry }
    guard entry.lines < limit else {
      entry.suppressed += 1
      return false
    }
    entry.lines += 1
    return true
  }

  /// The uids whose window ended with lines left out, and how many; those windows start over.
  mutating func summaries(at now: ContinuousClock.Instant) -> [(uid: uid_t, count: Int)] {
    var due: [(uid: uid_t, count: Int)] = []
    for (uid, entry) in windows where entry.start.duration(to: now) >= window {
      if entry.suppressed > 0 { due.append((uid, entry.suppressed)) }
      windows[uid] = nil
    }
    return due.sorted { $0.uid < $1.uid }
  }

  /// When the next summary is due (a window with lines left out ends), if any.
  var nextSummary: ContinuousClock.Instant? {
    windows.values.filter { $0.suppressed > 0 }.map { $0.start + window }.min()
  }
}
