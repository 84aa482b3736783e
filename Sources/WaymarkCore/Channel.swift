/// The one way to hand values to another thread: a bounded first-in, first-out channel that any
/// thread (or task) may send into and that receivers drain in order.
///
/// What a send does while ``capacity`` values wait is the channel's ``Overflow`` policy, chosen
/// (and said why) where the channel is made:
///
/// - ``Overflow/wait``: the sender waits for room, blocking its thread in ``send(_:)`` or
///   suspending its task in ``send(_:)-async`` (back-pressure; nothing is lost);
/// - ``Overflow/dropOldest``: the oldest waiting value goes (counted in ``dropped``, and handed
///   back to the sender) and the new one is queued: the sender never waits;
/// - ``Overflow/refuse``: the new value is not queued (``SendOutcome/full``): the sender never
///   waits and decides what to do with it.
///
/// Receivers take one value (``receive(timeoutMilliseconds:)`` blocking a thread,
/// ``receive()-async`` suspending a task) or every waiting value at once (``receiveAll()``, woken
/// by the channel's `whenNonEmpty` once a batch). A producer whose value comes out of a callback
/// that must not block waits for room first (``waitForRoom(timeoutMilliseconds:)``,
/// ``waitForRoom()-async``), then sends with ``sendIgnoringCapacity(_:)``.
///
/// A channel made with ``init(capacity:droppingOldestWhere:)`` drops only the oldest value its
/// predicate accepts, and queues the new value over ``capacity`` when none is (values that must
/// never be lost beside ones that a newer one replaces).
///
/// ``close()`` refuses later sends and releases waiting senders (their values are not queued);
/// receivers still get what was queued, then `nil`. Built on ``Locked`` and its condition; its
/// state is a `ChannelState`.
package final class Channel<Element: Sendable>: Sendable {
  /// What a send does when ``capacity`` values wait.
  package typealias Overflow = ChannelOverflow

  /// What a send did.
  package enum SendOutcome: Sendable {
    /// The value is queued.
    case sent
    /// The value is queued; the channel was full and the oldest waiting value (this one) went.
    case sentDroppingOldest(Element)
    /// The channel was full (policy ``Overflow/refuse``): the value was not queued.
    case full
    /// The channel is closed: the value was not queued.
    case closed

    /// Whether the value was queued.
    package var isSent: Bool {
      switch self {
      case .sent, .sentDroppingOldest: true
      case .full, .closed: false
      }
    }
  }

  private let state: Locked<ChannelState<Element>>
  private let whenNonEmpty: (@Sendable () -> Void)?
  /// What a send does while ``capacity`` values wait.
  package let overflow: Overflow
  /// Which values ``Overflow/dropOldest`` may drop (`nil`: any).
  private let isEvictable: (@Sendable (Element) -> Bool)?

  /// Creates an empty channel.
  ///
  /// - Parameters:
  ///   - capacity: the values that may wait (at least 1).
  ///   - overflow: what a send does while that many wait.
  ///   - whenNonEmpty: called (on the sending thread, outside the lock) each time a value goes
  ///     into the channel while none waited: a receiver that takes everything at once
  ///     (``receiveAll()``) is woken once a batch, never once a value. Not called for a value
  ///     handed straight to a receiver suspended in ``receive()-async``.
  package init(
    capacity: Int, overflow: Overflow, whenNonEmpty: (@Sendable () -> Void)? = nil
  ) {
    state = Locked(ChannelState(capacity: max(1, capacity)))
    self.overflow = overflow
    self.whenNonEmpty = whenNonEmpty
    isEvictable = nil
  }

  /// Creates an empty channel whose sends never wait: while `capacity` values wait, a send
  /// drops the oldest value that `isEvictable` accepts (``Overflow/dropOldest``, counted in
  /// ``dropped``); when none does, the new value is queued over `capacity` (the sender bounds
  /// how many such values it sends).
  ///
  /// - Parameters:
  ///   - capacity: the values that may wait before evictable ones go (at least 1).
  ///   - isEvictable: which values may be dropped; called under the channel's lock, it must
  ///     only look at the value.
  ///   - whenNonEmpty: as for ``init(capacity:overflow:whenNonEmpty:)``.
  package init(
    capacity: Int, droppingOldestWhere isEvictable: @escaping @Sendable (Element) -> Bool,
    whenNonEmpty: (@Sendable () -> Void)? = nil
  ) {
    state = Locked(ChannelState(capacity: max(1, capacity)))
    overflow = .dropOldest
    self.isEvictable = isEvictable
    self.whenNonEmpty = whenNonEmpty
  }

  /// Queues `element`, blocking the calling thread while the channel is full when the policy is
  /// ``Overflow/wait`` (never call it so from the concurrency pool: use the async send).
  @discardableResult
  package func send(_ element: Element) -> SendOutcome { sendBlocking(element) }

  private func sendBlocking(_ element: Element) -> SendOutcome {
    var wakes = ChannelWakes<Element>()
    let outcome: SendOutcome
    if overflow == .wait {
      outcome = state.withLock(
        waitingUntil: { $0.hasRoom || $0.isClosed },
        { state in
          guard !state.isClosed else { return .closed }
          state.put(element, &wakes)
          return .sent
        })
    } else {
      outcome = state.withLock { state in enqueue(element, in: &state, &wakes) }
    }
    if outcome.isSent { act(on: wakes) }
    return outcome
  }

  /// Queues `element` at once whatever the policy and however many wait (nothing is dropped,
  /// nothing waits; only a closed channel refuses it): the send of a producer that waits for
  /// room itself, before it makes its value (``waitForRoom(timeoutMilliseconds:)``,
  /// ``waitForRoom()-async``), and whose value may come out of a callback that must not
  /// block. The capacity then paces that producer; it is not a bound on the queue.
  @discardableResult
  package func sendIgnoringCapacity(_ element: Element) -> SendOutcome {
    var wakes = ChannelWakes<Element>()
    let outcome = state.withLock { state -> SendOutcome in
      guard !state.isClosed else { return .closed }
      state.put(element, &wakes)
      return .sent
    }
    if outcome.isSent { act(on: wakes) }
    return outcome
  }

  /// Queues `element`, suspending the calling task (not blocking its thread) while the channel
  /// is full when the policy is ``Overflow/wait``.
  @discardableResult
  package func send(_ element: Element) async -> SendOutcome {
    guard overflow == .wait else { return sendBlocking(element) }
    let queued = await withCheckedContinuation { (sender: CheckedContinuation<Bool, Never>) in
      var wakes = ChannelWakes<Element>()
      let ready = state.withLock { state -> Bool? in
        if state.isClosed { return false }
        guard state.hasRoom, state.suspendedSenders.isEmpty else {
          state.suspendedSenders.append((element, sender))
          return nil
        }
        state.put(element, &wakes)
        return true
      }
      if ready == true { act(on: wakes) }
      if let ready { sender.resume(returning: ready) }
    }
    return queued ? .sent : .closed
  }

  /// The ``Overflow/dropOldest`` and ``Overflow/refuse`` sends, under the lock.
  private func enqueue(
    _ element: Element, in state: inout ChannelState<Element>,
    _ wakes: inout ChannelWakes<Element>
  ) -> SendOutcome {
    guard !state.isClosed else { return .closed }
    guard !state.hasRoom else {
      state.put(element, &wakes)
      return .sent
    }
    switch overflow {
    case .refuse, .wait:
      return .full
    case .dropOldest:
      let dropped =
        isEvictable.map { state.items.removeFirst(where: $0) } ?? state.items.removeFirst()
      state.put(element, &wakes)
      guard let dropped else { return .sent }
      state.droppedCount += 1
      return .sentDroppingOldest(dropped)
    }
  }

  /// Removes and returns the oldest value, blocking the calling thread until there is one.
  ///
  /// - Parameter milliseconds: the longest wait, on the monotonic clock; `nil` waits until a
  ///   value comes or the channel is closed.
  /// - Returns: the value; `nil` once the channel is closed and empty, or when the wait timed
  ///   out.
  package func receive(timeoutMilliseconds milliseconds: Int? = nil) -> Element? {
    var wakes = ChannelWakes<Element>()
    let element = state.withLock(
      waitingUntil: { $0.count > 0 || $0.isClosed }, timeoutMilliseconds: milliseconds,
      { state in state.take(&wakes) })
    if element != nil { act(on: wakes) }
    return element
  }

  /// Removes and returns the oldest value, suspending the calling task (not blocking its
  /// thread) until there is one; `nil` once the channel is closed and empty.
  package func receive() async -> Element? {
    await withCheckedContinuation { (receiver: CheckedContinuation<Element?, Never>) in
      var wakes = ChannelWakes<Element>()
      let ready = state.withLock { state -> Element?? in
        if let element = state.take(&wakes) { return .some(element) }
        if state.isClosed { return .some(nil) }
        state.suspendedReceivers.append(receiver)
        return nil
      }
      if case .some(.some) = ready { act(on: wakes) }
      if let ready { receiver.resume(returning: ready) }
    }
  }

  /// Removes and returns the oldest value, or `nil` at once when none waits.
  package func receiveIfAvailable() -> Element? {
    var wakes = ChannelWakes<Element>()
    let element = state.withLock { state in state.take(&wakes) }
    if element != nil { act(on: wakes) }
    return element
  }

  /// Removes and returns every waiting value, oldest first, without waiting (with the values
  /// of the senders it lets in meanwhile): the receive of a consumer woken by `whenNonEmpty`.
  package func receiveAll() -> [Element] {
    var wakes = ChannelWakes<Element>()
    let elements = state.withLock { state in
      var elements: [Element] = []
      while let element = state.take(&wakes) { elements.append(element) }
      return elements
    }
    // Taken together, the senders' values never made the channel non-empty for a consumer.
    wakes.becameNonEmpty = false
    act(on: wakes)
    return elements
  }

  /// Blocks the calling thread while ``capacity`` values wait, without sending: the
  /// back-pressure of a producer whose value comes later (``sendIgnoringCapacity(_:)``).
  ///
  /// - Parameter milliseconds: the longest wait, on the monotonic clock; `nil` waits until
  ///   there is room or the channel is closed.
  /// - Returns: `true` when there is room; `false` once the channel is closed (receivers take
  ///   no more: produce no more) or when the wait timed out.
  package func waitForRoom(timeoutMilliseconds milliseconds: Int? = nil) -> Bool {
    state.withLock(
      waitingUntil: { $0.hasRoom || $0.isClosed }, timeoutMilliseconds: milliseconds,
      { !$0.isClosed && $0.hasRoom })
  }

  /// Suspends the calling task (not blocking its thread) while ``capacity`` values wait,
  /// without sending, as ``waitForRoom(timeoutMilliseconds:)`` does for a thread.
  ///
  /// - Returns: `true` when there is room; `false` once the channel is closed.
  package func waitForRoom() async -> Bool {
    await withCheckedContinuation { (waiter: CheckedContinuation<Bool, Never>) in
      let ready = state.withLock { state -> Bool? in
        if state.isClosed { return false }
        if state.hasRoom { return true }
        state.roomWaiters.append(waiter)
        return nil
      }
      if let ready { waiter.resume(returning: ready) }
    }
  }

  /// Refuses later sends and releases the senders waiting for room (their values are not
  /// queued; they see ``SendOutcome/closed``) and the tasks waiting for room (`false`);
  /// receivers get the waiting values, then `nil`.
  package func close() {
    let (senders, receivers, roomWaiters) = state.withLock { state in
      state.isClosed = true
      defer {
        state.suspendedSenders.removeAll()
        state.suspendedReceivers.removeAll()
        state.roomWaiters.removeAll()
      }
      return (state.suspendedSenders.map(\.sender), state.suspendedReceivers, state.roomWaiters)
    }
    state.signal()
    for sender in senders { sender.resume(returning: false) }
    for receiver in receivers { receiver.resume(returning: nil) }
    for waiter in roomWaiters { waiter.resume(returning: false) }
  }

  /// Changes how many values may wait; values already waiting over a smaller capacity stay
  /// (the next sends see the channel full).
  package func setCapacity(_ capacity: Int) {
    var wakes = ChannelWakes<Element>()
    state.withLock { state in
      state.capacity = max(1, capacity)
      state.admitWaiting(&wakes)
    }
    act(on: wakes)
  }

  /// After a change under the lock: wakes the threads waiting on the condition, then resumes
  /// the tasks and calls `whenNonEmpty` as collected (outside the lock).
  private func act(on wakes: ChannelWakes<Element>) {
    state.signal()
    for sender in wakes.senders { sender.resume(returning: true) }
    for waiter in wakes.roomWaiters { waiter.resume(returning: true) }
    for (receiver, element) in wakes.receivers { receiver.resume(returning: element) }
    if wakes.becameNonEmpty, let whenNonEmpty { whenNonEmpty() }
  }

  /// How many values waited while ``capacity`` were queued (policy ``Overflow/dropOldest``)
  /// and were dropped.
  package var dropped: Int { state.withLock { $0.droppedCount } }

  /// How many values wait.
  package var count: Int { state.withLock { $0.count } }

  /// The most values that waited at once (a diagnostic of how far the receivers fell behind).
  package var highWater: Int { state.withLock { $0.highWater } }

  /// How many values may wait.
  package var capacity: Int { state.withLock { $0.capacity } }

  /// Whether ``close()`` was called.
  package var isClosed: Bool { state.withLock { $0.isClosed } }
}

/// What a send into a full ``Channel`` does (the same for every element type, so that a
/// ``Worker`` takes it without naming its jobs' type).
package enum ChannelOverflow: Sendable, Equatable {
  /// Wait for room (back-pressure).
  case wait
  /// Drop the oldest waiting value to make room.
  case dropOldest
  /// Refuse the new value.
  case refuse
}
