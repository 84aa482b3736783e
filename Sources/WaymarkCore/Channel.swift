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
/// ``close()`` refuses later sends and releases waiting senders (their values are not queued);
/// receivers still get what was queued, then `nil`. Built on ``Locked`` and its condition.
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

  private struct State {
    var items = FIFOBuffer<Element>()
    var capacity: Int
    var isClosed = false
    var droppedCount = 0
    /// Tasks suspended in the async send while full, oldest first, with their values.
    var suspendedSenders: [(element: Element, sender: CheckedContinuation<Bool, Never>)] = []

    var count: Int { items.count }
    var hasRoom: Bool { count < capacity }

    mutating func append(_ element: Element) { items.append(element) }

    mutating func removeFirst() -> Element? { items.removeFirst() }

    /// After a removal: the oldest suspended sender's value takes the room; returns the sender
    /// to resume (outside the lock).
    mutating func admitSuspendedSender() -> CheckedContinuation<Bool, Never>? {
      guard hasRoom, !suspendedSenders.isEmpty else { return nil }
      let waiting = suspendedSenders.removeFirst()
      items.append(waiting.element)
      return waiting.sender
    }
  }

  private let state: Locked<State>
  /// What a send does while ``capacity`` values wait.
  package let overflow: Overflow

  /// Creates an empty channel.
  ///
  /// - Parameters:
  ///   - capacity: the values that may wait (at least 1).
  ///   - overflow: what a send does while that many wait.
  package init(capacity: Int, overflow: Overflow) {
    state = Locked(State(capacity: max(1, capacity)))
    self.overflow = overflow
  }

  /// Queues `element`, blocking the calling thread while the channel is full when the policy is
  /// ``Overflow/wait`` (never call it so from the concurrency pool: use the async send).
  @discardableResult
  package func send(_ element: Element) -> SendOutcome { sendBlocking(element) }

  private func sendBlocking(_ element: Element) -> SendOutcome {
    let outcome: SendOutcome
    if overflow == .wait {
      outcome = state.withLock(
        waitingUntil: { $0.hasRoom || $0.isClosed },
        { state in
          guard !state.isClosed else { return .closed }
          state.append(element)
          return .sent
        })
    } else {
      outcome = state.withLock { state in enqueue(element, in: &state) }
    }
    if outcome.isSent { state.signal() }
    return outcome
  }

  /// Queues `element`, suspending the calling task (not blocking its thread) while the channel
  /// is full when the policy is ``Overflow/wait``.
  @discardableResult
  package func send(_ element: Element) async -> SendOutcome {
    guard overflow == .wait else { return sendBlocking(element) }
    let queued = await withCheckedContinuation { (sender: CheckedContinuation<Bool, Never>) in
      let ready = state.withLock { state -> Bool? in
        if state.isClosed { return false }
        guard state.hasRoom, state.suspendedSenders.isEmpty else {
          state.suspendedSenders.append((element, sender))
          return nil
        }
        state.append(element)
        return true
      }
      if let ready { sender.resume(returning: ready) }
    }
    if queued { state.signal() }
    return queued ? .sent : .closed
  }

  /// The ``Overflow/dropOldest`` and ``Overflow/refuse`` sends, under the lock.
  private func enqueue(_ element: Element, in state: inout State) -> SendOutcome {
    guard !state.isClosed else { return .closed }
    guard !state.hasRoom else {
      state.append(element)
      return .sent
    }
    switch overflow {
    case .refuse, .wait:
      return .full
    case .dropOldest:
      let dropped = state.removeFirst()
      state.droppedCount += 1
      state.append(element)
      return dropped.map { .sentDroppingOldest($0) } ?? .sent
    }
  }

  /// Removes and returns the oldest value, blocking the calling thread until there is one.
  ///
  /// - Parameter milliseconds: the longest wait, on the monotonic clock; `nil` waits until a
  ///   value comes or the channel is closed.
  /// - Returns: the value; `nil` once the channel is closed and empty, or when the wait timed
  ///   out.
  package func receive(timeoutMilliseconds milliseconds: Int? = nil) -> Element? {
    let (element, sender) = state.withLock(
      waitingUntil: { $0.count > 0 || $0.isClosed }, timeoutMilliseconds: milliseconds,
      { state in
        let element = state.removeFirst()
        return (element, element == nil ? nil : state.admitSuspendedSender())
      })
    if element != nil { state.signal() }
    sender?.resume(returning: true)
    return element
  }

  /// Removes and returns the oldest value, or `nil` at once when none waits.
  package func receiveIfAvailable() -> Element? {
    let (element, sender) = state.withLock { state in
      let element = state.removeFirst()
      return (element, element == nil ? nil : state.admitSuspendedSender())
    }
    if element != nil { state.signal() }
    sender?.resume(returning: true)
    return element
  }

  /// Removes and returns every waiting value, oldest first, without waiting.
  package func receiveAll() -> [Element] {
    let (elements, senders) = state.withLock { state in
      var elements: [Element] = []
      var senders: [CheckedContinuation<Bool, Never>] = []
      while let element = state.removeFirst() {
        elements.append(element)
        if let sender = state.admitSuspendedSender() { senders.append(sender) }
      }
      return (elements, senders)
    }
    state.signal()
    for sender in senders { sender.resume(returning: true) }
    return elements
  }

  /// Refuses later sends and releases the senders waiting for room (their values are not
  /// queued; they see ``SendOutcome/closed``); receivers get the waiting values, then `nil`.
  package func close() {
    let senders = state.withLock { state in
      state.isClosed = true
      defer { state.suspendedSenders.removeAll() }
      return state.suspendedSenders.map(\.sender)
    }
    state.signal()
    for sender in senders { sender.resume(returning: false) }
  }

  /// Changes how many values may wait; values already waiting over a smaller capacity stay
  /// (the next sends see the channel full).
  package func setCapacity(_ capacity: Int) {
    let senders = state.withLock { state in
      state.capacity = max(1, capacity)
      var senders: [CheckedContinuation<Bool, Never>] = []
      while let sender = state.admitSuspendedSender() { senders.append(sender) }
      return senders
    }
    state.signal()
    for sender in senders { sender.resume(returning: true) }
  }

  /// How many values waited while ``capacity`` were queued (policy ``Overflow/dropOldest``)
  /// and were dropped.
  package var dropped: Int { state.withLock { $0.droppedCount } }

  /// How many values wait.
  package var count: Int { state.withLock { $0.count } }

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
