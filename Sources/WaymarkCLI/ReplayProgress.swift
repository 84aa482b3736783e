import FoundationEssentials
import Glibc

/// The progress bar of `waymark replay` on a terminal: percentage of the file read, megabytes,
/// epochs and events, redrawn on one line at most ten times a second.
///
/// It is shown only when stderr is a terminal and stdout is not (or nothing is printed on
/// stdout), so that it never mixes with machine output on a screen or lands in a log file.
final class ReplayProgress {
  private let totalBytes: Int
  private let sink: OutputSink
  private let clock = ContinuousClock()
  private var lastDraw: ContinuousClock.Instant?
  /// Width of the bar in characters.
  static let barWidth = 30

  init(totalBytes: Int, sink: OutputSink) {
    self.totalBytes = max(totalBytes, 1)
    self.sink = sink
  }

  /// Whether a replay of a `fileSize`-byte file should show progress.
  static func shouldShow(fileSize: Int, printsToStandardOutput: Bool) -> Bool {
    guard fileSize > 0, OutputSink.standardError.isTerminal else { return false }
    return !printsToStandardOutput || !OutputSink.standardOutput.isTerminal
  }

  /// The line for `bytes` read, without the carriage return.
  static func line(bytes: Int, totalBytes: Int, epochs: Int, events: Int?) -> String {
    let fraction = min(1, Double(bytes) / Double(max(totalBytes, 1)))
    let filled = Int(saturating: (fraction * Double(barWidth)).rounded(.down))
    let bar =
      String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled)
    let percent = String(Int(saturating: (fraction * 100).rounded(.down)))
    let megabytes = "\((Double(bytes) / 1e6).fixed(1))/\((Double(totalBytes) / 1e6).fixed(1)) MB"
    var text = "[\(bar)] \(String(repeating: " ", count: max(0, 3 - percent.count)))\(percent)% "
    text += "\(megabytes), \(epochs) epochs"
    if let events { text += ", \(events) events" }
    return text
  }

  /// Redraws the line if a tenth of a second has passed since the last draw.
  func update(bytes: Int, epochs: Int, events: Int?) {
    let now = clock.now
    if let lastDraw, lastDraw.duration(to: now) < .milliseconds(100) { return }
    lastDraw = now
    draw(bytes: bytes, epochs: epochs, events: events)
  }

  /// Draws the final state and ends the line.
  func finish(bytes: Int, epochs: Int, events: Int?) {
    draw(bytes: bytes, epochs: epochs, events: events)
    sink.write("\n")
  }

  private func draw(bytes: Int, epochs: Int, events: Int?) {
    sink.write(
      "\r" + Self.line(bytes: bytes, totalBytes: totalBytes, epochs: epochs, events: events)
        + "\u{1B}[K")
  }
}
