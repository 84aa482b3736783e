import Foundation

/// A value behind a `pthread_mutex_t`.
///
/// Used instead of `Synchronization.Mutex` because ThreadSanitizer on Linux does not see the
/// futex path of `Mutex` as synchronization and reports false races under contention; it does
/// intercept pthread mutexes, so `swift test --sanitize=thread` stays meaningful.
final class GPSDLock<Value>: @unchecked Sendable {
  private var value: Value
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  init(_ value: Value) {
    self.value = value
    mutex = UnsafeMutablePointer<pthread_mutex_t>.allocate(capacity: 1)
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deallocate()
  }

  /// Runs `body` with exclusive access to the value. Never call out of it.
  func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value)
  }
}
