import FoundationEssentials
import Glibc
import Synchronization
import WaymarkCore

/// The daemon's log: one line per record on standard error, prefixed with the syslog priority
/// in angle brackets (`<5>arrived at Home`), which journald turns into the record's priority.
///
/// No timestamps (journald adds them). Each record is written with one `write(2)` call, so
/// records from several threads never interleave. Controls inside a message (CR, LF, NUL, ESC,
/// C1, U+2028/2029, …) are written as visible escapes (``LogText``), so one record stays one line. Coordinates are logged only at ``LogPriority/debug``.
package final class DaemonLog: Sendable {
  private let descriptor: Int32
  private let threshold: Atomic<Int32>

  /// A log on `descriptor` (standard error by default) that drops records less severe than
  /// `level`.
  package init(descriptor: Int32 = 2, level: LogPriority = .info) {
    self.descriptor = descriptor
    self.threshold = Atomic(level.rawValue)
  }

  /// The most detailed priority written.
  package var level: LogPriority {
    get { LogPriority(rawValue: threshold.load(ordering: .relaxed)) ?? .info }
    set { threshold.store(newValue.rawValue, ordering: .relaxed) }
  }

  /// Whether records of `priority` are written.
  package func isEnabled(_ priority: LogPriority) -> Bool {
    priority.rawValue <= threshold.load(ordering: .relaxed)
  }

  /// Writes one record. The message is built only when the priority is enabled.
  package func log(_ priority: LogPriority, _ message: @autoclosure () -> String) {
    guard isEnabled(priority) else { return }
    // Every control, separator and override is escaped, scalar by scalar (LogText): a message
    // that carries outside text (a program path, a place name) stays one record and cannot
    // forge a priority prefix or a second line. Backslashes are kept, so that outside text the
    // caller already escaped (LogText.escaped) is not escaped twice.
    let text = LogText.controlsEscaped(message())
    let bytes = Array("<\(priority.rawValue)>\(text)\n".utf8)
    bytes.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        let written = write(descriptor, raw.baseAddress! + offset, raw.count - offset)
        if written < 0 {
          if errno == EINTR { continue }
          return
        }
        offset += written
      }
    }
  }

  /// Writes an `err` record.
  package func error(_ message: @autoclosure () -> String) { log(.error, message()) }
  /// Writes a `warning` record.
  package func warning(_ message: @autoclosure () -> String) { log(.warning, message()) }
  /// Writes a `notice` record.
  package func notice(_ message: @autoclosure () -> String) { log(.notice, message()) }
  /// Writes an `info` record.
  package func info(_ message: @autoclosure () -> String) { log(.info, message()) }
  /// Writes a `debug` record (the only level that may contain coordinates).
  package func debug(_ message: @autoclosure () -> String) { log(.debug, message()) }
}
