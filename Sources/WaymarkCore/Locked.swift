/// A value protected by a `pthread_mutex_t` (``PthreadLock``): the lock behind ``Broadcast``, the location manager
/// and the test doubles.
///
/// Why not `Synchronization.Mutex`: on Linux (Swift 6.3) its contended path waits in a futex
/// inside the uninstrumented standard library, so ThreadSanitizer misses the happens-before edge
/// and reports races on correctly locked state (`swift test --sanitize=thread` fails under
/// contention; a four-thread `withLock` loop reproduces it). ThreadSanitizer intercepts
/// `pthread_mutex_lock`, and the pthread mutex also behaves better under contention.
///
/// The value is reachable only inside ``withLock(_:)``; never call out (resume continuations,
/// finish streams, call delegates) while holding the lock.
public final class Locked<Value>: @unchecked Sendable {
  private let mutex = PthreadLock()
  private var value: Value

  /// Creates a lock holding `value`.
  public init(_ value: Value) {
    self.value = value
  }

  /// Runs `body` with exclusive access to the value and returns its result.
  @inline(__always)
  public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    mutex.lock()
    defer { mutex.unlock() }
    return try body(&value)
  }
}
