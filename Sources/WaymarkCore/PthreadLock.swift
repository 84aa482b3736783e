import Glibc

/// A bare `pthread_mutex_t` for code that must lock and unlock in different places or try the
/// lock first (the store's nested-access check). Prefer ``Locked``, which ties the lock to the
/// state it protects. Not recursive.
public final class PthreadLock: @unchecked Sendable {
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>

  /// Creates an unlocked lock.
  public init() {
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
  }

  deinit {
    pthread_mutex_destroy(mutex)
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Waits for the lock and takes it.
  @inline(__always)
  public func lock() { pthread_mutex_lock(mutex) }

  /// Takes the lock if it is free; `false` when another holder has it.
  @inline(__always)
  public func tryLock() -> Bool { pthread_mutex_trylock(mutex) == 0 }

  /// Releases the lock; only its holder may call this.
  @inline(__always)
  public func unlock() { pthread_mutex_unlock(mutex) }
}
