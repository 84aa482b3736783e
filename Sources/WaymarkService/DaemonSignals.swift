import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

/// SIGTERM, SIGINT and SIGHUP turned into calls on a queue, for the daemon's main loop.
///
/// The signals are ignored at the process level (so their default actions never run) and
/// watched with dispatch signal sources. Hooks start with default dispositions again
/// (`HookProcess`).
final class DaemonSignals: Sendable {
  private let sources: Mutex<[any DispatchSourceSignal]>

  /// Starts watching `signals`; `handler` runs on a private queue for each delivery.
  init(_ signals: [Int32], handler: @escaping @Sendable (Int32) -> Void) {
    let queue = DispatchQueue(label: "waymarkd-signals")
    var sources: [any DispatchSourceSignal] = []
    for number in signals {
      signal(number, SIG_IGN)
      let source = DispatchSource.makeSignalSource(signal: number, queue: queue)
      source.setEventHandler { handler(number) }
      source.resume()
      sources.append(source)
    }
    self.sources = Mutex(sources)
  }

  /// Stops watching.
  func cancel() {
    let sources = self.sources.withLock { sources in
      defer { sources.removeAll() }
      return sources
    }
    for source in sources { source.cancel() }
  }
}
