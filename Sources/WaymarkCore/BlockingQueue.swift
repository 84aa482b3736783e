import Glibc

/// A first-in, first-out queue that any thread may fill and one thread drains, waiting while
/// it is empty: how a loop that does blocking work (fsync'd writes) runs on a thread of its own
/// and not on the concurrency pool.
///
/// Bounded: when `capacity` items wait, ``push(_:)`` drops the oldest one first.
public final class BlockingQueue<Element: Sendable>: @unchecked Sendable {
  // @unchecked: every stored property is touched only while `mutex` is held.
  private let mutex: UnsafeMutablePointer<pthread_mutex_t>
  private let condition: UnsafeMutablePointer<pthread_cond_t>
  private var items: [Element] = []
  private var head = 0
  private let capacity: Int
  private var droppedCount = 0

  /// Creates an empty queue that holds at most `capacity` items.
  public init(capacity: Int) {
    self.capacity = max(1, capacity)
    mutex = .allocate(capacity: 1)
    mutex.initialize(to: pthread_mutex_t())
    pthread_mutex_init(mutex, nil)
    condition = .allocate(capacity: 1)
    condition.initialize(to: pthread_cond_t())
    // Timed waits on the monotonic clock: a deadline on CLOCK_REALTIME moves with the system
    // clock, so setting it back an hour would make a 1 s wait last an hour and a second.
    var attributes = pthread_condattr_t()
    pthread_condattr_init(&attributes)
    pthread_condattr_setclock(&attributes, BlockingQueue.waitClock)
    pthread_cond_init(condition, &attributes)
    pthread_condattr_destroy(&attributes)
  }

  /// The clock of ``pop(timeoutMilliseconds:)``'s deadline: CLOCK_MONOTONIC, which system clock
  /// changes (NTP steps, `date -s`) do not move.
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

  deinit {
    pthread_cond_destroy(condition)
    pthread_mutex_destroy(mutex)
    condition.deinitialize(count: 1)
    condition.deallocate()
    mutex.deinitialize(count: 1)
    mutex.deallocate()
  }

  /// Appends `element` (dropping the oldest waiting one when full) and wakes the consumer.
  public func push(_ element: Element) {
    pthread_mutex_lock(mutex)
    if items.count - head >= capacity {
      head += 1
      droppedCount += 1
    }
    items.append(element)
    pthread_cond_signal(condition)
    pthread_mutex_unlock(mutex)
  }

  /// Removes and returns the oldest element, waiting until there is one.
  public func pop() -> Element {
    pthread_mutex_lock(mutex)
    while head == items.count { pthread_cond_wait(condition, mutex) }
    let element = items[head]
    head += 1
    if head == items.count {
      items.removeAll(keepingCapacity: true)
      head = 0
    } else if head > 1024 && head * 2 > items.count {
      items.removeFirst(head)
      head = 0
    }
    pthread_mutex_unlock(mutex)
    return element
  }

  /// Removes and returns the oldest element, waiting at most `milliseconds` for one.
  public func pop(timeoutMilliseconds milliseconds: Int) -> Element? {
    var deadline = BlockingQueue.deadline(afterMilliseconds: milliseconds)
    pthread_mutex_lock(mutex)
    while head == items.count {
      if pthread_cond_timedwait(condition, mutex, &deadline) != 0 { break }
    }
    pthread_mutex_unlock(mutex)
    return popIfAvailable()
  }

  /// Removes and returns the oldest element, or `nil` at once when there is none.
  public func popIfAvailable() -> Element? {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    guard head < items.count else { return nil }
    let element = items[head]
    head += 1
    if head == items.count {
      items.removeAll(keepingCapacity: true)
      head = 0
    }
    return element
  }

  /// How many elements were dropped because the queue was full.
  public var dropped: Int {
    pthread_mutex_lock(mutex)
    defer { pthread_mutex_unlock(mutex) }
    return droppedCount
  }
}
