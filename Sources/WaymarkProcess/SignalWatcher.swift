import Dispatch
import FoundationEssentials
import Glibc
import WaymarkCore

/// Signals turned into calls on a queue instead of their default actions: SIGTERM, SIGINT and
/// SIGHUP for the daemon's main loop, SIGINT and SIGTERM for the CLI's long-running commands.
///
/// The signals are ignored at the process level (so their default actions never run) and
/// watched with dispatch signal sources. Hooks start with default dispositions again
/// (`HookProcess`).
package final class SignalWatcher: Sendable {
  private let sources: Locked<[any DispatchSourceSignal]>

  private let signals: [Int32]

  /// Starts watching `signals`; `handler` runs on a private queue for each delivery.
  package init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
    self.signals = signals
    let queue = DispatchQueue(label: "waymark-signals")
    var sources: [any DispatchSourceSignal] = []
    for number in signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler { handler(number) }
      source.resume()
      sources.append(source)
    }
    self.sources = Locked(sources)
  }

  /// Stops watching; with `restoringDefaults`, the signals' default actions come back.
  package func cancel(restoringDefaults: Bool = false) {
    let sources = self.sources.withLock { sources in
      defer { sources.removeAll() }
      return sources
    }
    for source in sources { source.cancel() }
    if restoringDefaults {
      for number in signals { signal(number, SIG_DFL) }
    }
  }
}
