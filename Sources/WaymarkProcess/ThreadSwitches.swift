import FoundationEssentials
import Glibc

/// A thread's context switches so far, as `/proc/<pid>/task/<tid>/status` counts them: the
/// times it blocked and was woken (voluntary), and the times another runnable thread took its
/// CPU (involuntary).
package struct ThreadSwitches: Equatable, Sendable {
  /// Switches after the thread blocked: its wake-ups.
  package var voluntary = 0
  /// Switches while it could run: preemptions.
  package var involuntary = 0

  /// Both kinds.
  package var total: Int { voluntary + involuntary }

  /// Zero of each.
  package init() {}

  /// The counts of a `status` text (`voluntary_ctxt_switches:\t12`,
  /// `nonvoluntary_ctxt_switches:\t3`); a line missing or unreadable counts 0.
  package init(status: String) {
    for line in status.split(separator: "\n") where line.contains("ctxt_switches:") {
      let count = Int(line.split(whereSeparator: \.isWhitespace).last ?? "") ?? 0
      if line.hasPrefix("nonvoluntary") {
        involuntary = count
      } else if line.hasPrefix("voluntary") {
        voluntary = count
      }
    }
  }

  /// Every thread of process `pid` now, by thread id: its name (`comm`, which the kernel cuts
  /// to 15 bytes) and its switches; empty when the process is gone.
  package static func threads(of pid: pid_t) -> [Int32: (name: String, switches: ThreadSwitches)] {
    let tasks = "/proc/\(pid)/task"
    var threads: [Int32: (name: String, switches: ThreadSwitches)] = [:]
    for entry in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
      guard let tid = Int32(entry),
        let status = ProcFile.contents(of: "\(tasks)/\(entry)/status")
      else { continue }
      let comm = ProcFile.contents(of: "\(tasks)/\(entry)/comm") ?? "?"
      let name = comm.hasSuffix("\n") ? String(comm.dropLast()) : comm
      threads[tid] = (name, ThreadSwitches(status: status))
    }
    return threads
  }
}
