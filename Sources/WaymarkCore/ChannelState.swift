/// A ``Channel``'s state, under its lock: the waiting values and the tasks suspended on it.
struct ChannelState<Element: Sendable> {
  var items = FIFOBuffer<Element>()
  var capacity: Int
  var isClosed = false
  var droppedCount = 0
  var highWater = 0
  /// Tasks suspended in the async send while full, oldest first, with their values.
  var suspendedSenders: [(element: Element, sender: CheckedContinuation<Bool, Never>)] = []
  /// Tasks suspended in the async receive, oldest first (only while no value waits).
  var suspendedReceivers: [CheckedContinuation<Element?, Never>] = []
  /// Tasks suspended in the async wait for room while full.
  var roomWaiters: [CheckedContinuation<Bool, Never>] = []

  init(capacity: Int) { self.capacity = capacity }

  var count: Int { items.count }
  var hasRoom: Bool { count < capacity }

  /// Hands `element` to the oldest suspended receiver, or queues it.
  mutating func put(_ element: Element, _ wakes: inout ChannelWakes<Element>) {
    if !suspendedReceivers.isEmpty {
      wakes.receivers.append((suspendedReceivers.removeFirst(), element))
      return
    }
    items.append(element)
    let count = items.count
    if count == 1 { wakes.becameNonEmpty = true }
    if count > highWater { highWater = count }
  }

  /// Removes the oldest value and lets the waiting senders into the room it made.
  mutating func take(_ wakes: inout ChannelWakes<Element>) -> Element? {
    guard let element = items.removeFirst() else { return nil }
    if !suspendedSenders.isEmpty || !roomWaiters.isEmpty { admitWaiting(&wakes) }
    return element
  }

  /// While there is room: the oldest suspended senders' values go in (the senders to resume
  /// are collected), then the tasks waiting for room are released.
  mutating func admitWaiting(_ wakes: inout ChannelWakes<Element>) {
    while hasRoom, !suspendedSenders.isEmpty {
      let waiting = suspendedSenders.removeFirst()
      put(waiting.element, &wakes)
      wakes.senders.append(waiting.sender)
    }
    if hasRoom, !roomWaiters.isEmpty {
      wakes.roomWaiters += roomWaiters
      roomWaiters.removeAll()
    }
  }
}
