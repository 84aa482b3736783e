import Glibc
import WaymarkCore

/// Signals taken by a thread of its own that waits for them (`sigwaitinfo`), for a program
/// that must not wake while nothing happens: no dispatch source, no task, no timer.
///
/// `init(_:)` blocks the signals in the calling thread; every thread started after it
/// inherits that mask, so the signals stay pending until the waiting thread takes them (none
/// is lost and none runs its default action). Make it first, on the main thread, before any
/// other thread starts: a thread started earlier could take a signal in its place. Children
/// started by `ProcessSpawner` begin with an empty mask.
package final class SignalWaiter: Sendable {
  private let signals: [Int32]
  private let stopped = Locked(false)

  /// Blocks `signals` in the calling thread (and so in every thread it starts from now on).
  package init(_ signals: [Int32]) {
    self.signals = signals
    var set = SignalWaiter.set(of: signals)
    pthread_sigmask(SIG_BLOCK, &set, nil)
  }

  /// Starts the thread `threadName` that calls `handler` with each signal as it comes, in order.
  package func start(threadName: String, _ handler: @escaping @Sendable (Int32) -> Void) {
    let signals = self.signals
    let stopped = self.stopped
    DetachedThread.start(name: threadName) {
      var set = SignalWaiter.set(of: signals)
      while true {
        let number = sigwaitinfo(&set, nil)
        if stopped.withLock({ $0 }) { return }
        if number > 0 { handler(number) }
      }
    }
  }

  /// Stops handing signals over: one that comes after this is taken and ignored.
  package func cancel() { stopped.withLock { $0 = true } }

  private static func set(of signals: [Int32]) -> sigset_t {
    var set = sigset_t()
    sigemptyset(&set)
    for number in signals { sigaddset(&set, number) }
    return set
  }
}
