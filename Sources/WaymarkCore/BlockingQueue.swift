/// The bounded queue of Waymark: a first-in, first-out queue that any thread may fill and one
/// thread drains, waiting while it is empty: how a loop that does blocking work (fsync'd
/// writes, hooks, the broker's sockets) runs on a thread of its own and not on the concurrency
/// pool.
///
/// Bounded: when `capacity` items wait, ``push(_:)`` first drops the oldest item that
/// `isEvictable` allows (any item by default); when none may go, the item is queued anyway.
/// Once ``close()`` is called, pushes are refused and ``next()`` returns `nil` when the queue is
/// empty. Built on ``Locked`` and its condition.
public final class BlockingQueue<Element: Sendable>: Sendable {
  private struct State {
    var items = FIFOBuffer<Element>()
    var droppedCount = 0
    var isClosed = false
    var capacity: Int

    var isEmpty: Bool { items.isEmpty }

    mutating func removeFirst() -> Element? { items.removeFirst() }

    mutating func removeAll() -> [Element] { items.removeAll() }
  }

  /// What ``push(_:)`` did.
  public enum PushOutcome: Sendable {
    /// The element waits in the queue.
    case queued
    /// The element waits in the queue; the queue was full and `dropped` went to make room.
    case queuedDropping(Element)
    /// The queue is closed: the element was not queued.
    case refused
  }

  private let state: Locked<State>
  private let isEvictable: @Sendable (Element) -> Bool

  /// Creates an empty queue that holds at most `capacity` items.
  ///
  /// - Parameters:
  ///   - capacity: the items that may wait before the oldest evictable one is dropped.
  ///   - isEvictable: which items may be dropped when the queue is full (all by default).
  public init(capacity: Int, isEvictable: @escaping @Sendable (Element) -> Bool = { _ in true }) {
    state = Locked(State(capacity: max(1, capacity)))
    self.isEvictable = isEvictable
  }

  /// Appends `element` (dropping the oldest evictable waiting one when full) and wakes the
  /// consumer; refused once the queue is closed.
  @discardableResult
  public func push(_ element: Element) -> PushOutcome {
    let outcome = state.withLock { state -> PushOutcome in
      guard !state.isClosed else { return .refused }
      var outcome = PushOutcome.queued
      if state.items.count >= state.capacity,
        let dropped = state.items.removeFirst(where: isEvictable)
      {
        outcome = .queuedDropping(dropped)
        state.droppedCount += 1
      }
      state.items.append(element)
      return outcome
    }
    state.signal()
    return outcome
  }

  /// Removes and returns the oldest element, waiting until there is one.
  public func pop() -> Element {
    state.withLock(waitingUntil: { !$0.isEmpty }, { $0.removeFirst()! })
  }

  /// Removes and returns the oldest element, waiting until there is one or the queue is closed.
  ///
  /// - Returns: the element, or `nil` when the queue is closed and empty.
  public func next() -> Element? {
    state.withLock(waitingUntil: { !$0.isEmpty || $0.isClosed }, { $0.removeFirst() })
  }

  /// Removes and returns the oldest element, waiting at most `milliseconds` for one.
  public func pop(timeoutMilliseconds milliseconds: Int) -> Element? {
    state.withLock(
      waitingUntil: { !$0.isEmpty }, timeoutMilliseconds: milliseconds, { $0.removeFirst() })
  }

  /// Removes and returns the oldest element, or `nil` at once when there is none.
  public func popIfAvailable() -> Element? {
    state.withLock { $0.removeFirst() }
  }

  /// Removes and returns every waiting element, oldest first, without waiting.
  ///
  /// - Returns: the elements and whether the queue is closed, read together.
  public func popAll() -> (elements: [Element], isClosed: Bool) {
    state.withLock { ($0.removeAll(), $0.isClosed) }
  }

  /// Refuses further pushes and wakes a consumer waiting in ``next()``; the waiting elements
  /// stay until popped.
  public func close() {
    state.withLock { $0.isClosed = true }
    state.signal()
  }

  /// Changes how many items may wait; items already waiting over a smaller capacity stay.
  public func setCapacity(_ capacity: Int) {
    state.withLock { $0.capacity = max(1, capacity) }
  }

  /// How many elements were dropped because the queue was full.
  public var dropped: Int { state.withLock { $0.droppedCount } }

  /// How many elements wait.
  public var count: Int { state.withLock { $0.items.count } }
}
