import Glibc

/// A value protected by a lock: the one lock type of Waymark, behind ``Broadcast``, the
/// channel, the location manager, the store, the broker and the test doubles.
///
/// Why a `pthread_mutex_t` and not `Synchronization.Mutex`: on Linux (Swift 6.3) `Mutex`'s
/// contended path waits in a futex inside the uninstrumented standard library, so
/// ThreadSanitizer misses the happens-before edge and reports races on correctly locked state
/// (`swift test --sanitize=thread` fails under contention; a four-thread `withLock` loop
/// reproduces it). ThreadSanitizer intercepts `pthread_mutex_lock` and `pthread_cond_wait`, and
/// the pthread mutex also behaves better under contention. Why not `NSLock`: the daemon's
/// modules link FoundationEssentials only. Why one type: the lock is tied to the state it
/// protects (swift-system's thin typed wrapper over C: this file is the only caller of the
/// `pthread_mutex_*` and `pthread_cond_*` functions), so every other file reaches the state only
/// inside ``withLock(_:)`` and nothing can forget to unlock.
///
/// The value lives in an allocation of its own, as the mutex and the condition do, not in a
/// stored property: Swift gives an empty stored property (`Locked<()>`, a lock guarding state
/// kept elsewhere, as the broker's loop does) field offset 0, so ThreadSanitizer's marker for
/// the `inout` access to it would be a write to the object's first word, its type pointer,
/// which generic code reads outside the lock to find `Value`: a race report on correctly locked
/// code (`swift test --sanitize=thread --filter LockedTests` shows it with the value stored
/// inline). Accesses through the pointer are instrumented as the loads and stores they are.
///
/// The lock also carries a condition (``withLock(waitingUntil:timeoutMilliseconds:_:)``,
/// ``signal()``), so that a consumer can sleep until a producer changes the value (the bounded
/// queue). Never call out (resume continuations, finish streams, call delegates) while holding
/// the lock: collect what to do inside, act after. Not recursive.
public final class Locked<Value>: @unchecked Sendable {
  // @unchecked: `value.pointee` is touched only while `mutex` is held.
  // `withLock` is `@inlinable`: specialised and inlined where it is called, in every module (a
  // call of the generic entry point looked its metadata up at run time on each lock: 350
  // instructions a fix in the replay's authorization gate).
  @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>
  @usableFromInline let value: UnsafeMutablePointer<Value>

  /// Creates a lock holding `value`.
  public init(_ value: Value) {
    self.value = .allocate(capacity: 1)
    self.value.initialize(to: value)
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    // Timed waits on the monotonic clock: a deadline on CLOCK_REALTIME moves with the system
    // clock, so setting it back an hour would make a 1 s wait last an hour and a second.
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, Locked.waitClock)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deinitialize(count: 1)
    condition.deallocate()
    mutex.deinitialize(count: 1)
    mutex.deallocate()
    value.deinitialize(count: 1)
    value.deallocate()
  }

  /// Runs `body` with exclusive access to the value and returns its result.
  @inlinable @inline(__always)
  public func withLock<Result>(_ body: (inout Value) throws -> Result) rethrows -> Result {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value.pointee)
  }

  /// Runs `body` with exclusive access to the value if no other thread holds the lock.
  ///
  /// - Returns: what `body` returns, or `nil` at once when the lock is held (by another thread
  ///   or by this one: the lock is not recursive).
  @inline(__always)
  public func withLockIfAvailable<Result>(
    _ body: (inout Value) throws -> Result
  ) rethrows -> Result? {
    guard pthread_mutex_trylock(mutex) == 0 else { return nil }
    defer { pthread_mutex_unlock(mutex) }
    return try body(&value.pointee)
  }

  /// Waits, with the lock released, until `isReady` holds for the value (checked under the lock
  /// after every ``signal()``) or `timeoutMilliseconds` have passed, then runs `body` with
  /// exclusive access to the value, ready or not.
  ///
  /// - Parameters:
  ///   - isReady: the condition to wait for; it must only read the value.
  ///   - timeoutMilliseconds: the longest wait, milliseconds on `CLOCK_MONOTONIC`; `nil` waits
  ///     without limit.
  ///   - body: runs under the lock once the wait ends.
  /// - Returns: what `body` returns.
  public func withLock<Result>(
    waitingUntil isReady: (Value) -> Bool, timeoutMilliseconds: Int? = nil,
    _ body: (inout Value) throws -> Result
  ) rethrows -> Result {
    var deadline = timeoutMilliseconds.map { Locked.deadline(afterMilliseconds: $0) }
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    while !isReady(value.pointee) {
      if deadline == nil {
        pthread_cond_wait(condition, mutex)
      } else if pthread_cond_timedwait(condition, mutex, &deadline!) != 0 {
        break
      }
    }
    return try body(&value.pointee)
  }

  /// Wakes the threads waiting in ``withLock(waitingUntil:timeoutMilliseconds:_:)`` to check
  /// their condition again; call it after changing the value, inside or outside the lock.
  @inline(__always)
  public func signal() { pthread_cond_broadcast(condition) }

  /// The clock of the timed waits' deadlines: CLOCK_MONOTONIC, which system clock changes (NTP
  /// steps, `date -s`) do not move.
  static var waitClock: clockid_t { CLOCK_MONOTONIC }

  /// The instant `milliseconds` from now on ``waitClock``, as `pthread_cond_timedwait` takes it.
  static func deadline(afterMilliseconds milliseconds: Int) -> timespec {
    var deadline = timespec()
    clock_gettime(waitClock, &deadline)
    let nanoseconds = Int(deadline.tv_nsec) + (milliseconds % 1000) * 1_000_000
    deadline.tv_sec += milliseconds / 1000 + nanoseconds / 1_000_000_000
    deadline.tv_nsec = nanoseconds % 1_000_000_000
    return deadline
  }
}
