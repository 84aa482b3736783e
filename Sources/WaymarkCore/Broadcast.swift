import Synchronization

/// A replaying multicast stream: one producer, any number of independent subscribers.
///
/// Each iteration of ``updates(bufferingNewest:)`` (or of ``subscription``) is a subscription of
/// its own: it first receives the latest value (when the broadcast replays and has one), then
/// every value sent afterwards, in order. This is RxSwift's `BehaviorSubject` (with `replay`) or
/// `PublishSubject` (without), done with Swift concurrency:
///
/// - a slow subscriber drops its *own* oldest buffered values (it keeps the newest
///   `bufferingNewest` ones) and never delays the producer or the other subscribers;
/// - a subscription ends when its iterating task is cancelled or its iterator is released, and it
///   is removed at once (``subscriberCount`` goes down): nothing leaks;
/// - ``finish()`` ends every subscription after it has delivered what it buffered; later
///   subscriptions get the latest value (when replaying) and end.
///
/// Inside the package a subscriber may also be a closure called on the thread of each
/// ``send(_:)``, with no stream, task or buffer in between (`subscribe(replaying:_:)`): it gets
/// every value, in order, and holds the sender back while it runs (`GPSDSource`'s
/// subscribers, fed by its reader thread).
///
/// ```swift
/// let broadcast = Broadcast<Int>()
/// broadcast.send(1)
/// for await value in broadcast.subscription { print(value) }  // 1, then live values
/// ```
public final class Broadcast<Element: Sendable>: Sendable {
  // `send` is `@inlinable` (with what it touches `@usableFromInline`): specialised for its
  // element type where it is called, so that a send does not look generic metadata up at run
  // time (in the replay with places that was a quarter of the instructions). And always
  // inlined: with the closure subscribers it grew past what the optimiser inlines, and a call
  // of its own cost the replay with places 0.8 % of its instructions (three sends a fix).
  /// A subscriber of ``subscribe(replaying:_:)``, with its id.
  @usableFromInline typealias Receiver = (id: Int, deliver: @Sendable (Element) -> Void)

  @usableFromInline
  struct State {
    @usableFromInline var latest: Element?
    @usableFromInline var isFinished = false
    @usableFromInline var nextID = 0
    @usableFromInline var subscribers: [Int: AsyncStream<Element>.Continuation] = [:]
    /// The subscribers called on the sending thread (``subscribe(replaying:_:)``), in the
    /// order they subscribed; a send takes the array (a reference, not a copy).
    @usableFromInline var receivers: [Receiver] = []

    /// ``receivers``, `nil` when there is none.
    @usableFromInline var receiversToCall: [Receiver]? { receivers.isEmpty ? nil : receivers }

    @usableFromInline
    init(latest: Element?) { self.latest = latest }
  }

  @usableFromInline let state: Locked<State>
  /// Whether a send has nothing to do: no subscriber of either kind, and no latest value to
  /// keep (or the broadcast finished). Written under `state` whenever the subscribers change;
  /// read without it by ``send(_:)``, which then returns at once (a manager's sends with
  /// nobody listening, as in a replay, take no lock and copy nothing). A subscriber added
  /// before a send (in the sense of any synchronization between the two threads) is seen by it.
  @usableFromInline let idle: Atomic<Bool>
  /// The ids of subscriptions that ended and are still in `state.subscribers`. A subscription's
  /// end (`onTermination`) runs while the runtime holds the ending task's status lock, and a
  /// `yield` under `state` may need that same lock to resume the task: so the end never waits
  /// for `state` (that was a deadlock: a send yielding under `state` while a cancelled
  /// subscriber's end waited for it). It leaves its id here, under a lock never held across a
  /// `yield`, and the next access under `state` removes it.
  @usableFromInline let ended = Locked<[Int]>([])
  /// Whether a new subscription first receives the latest value.
  public let replaysLatest: Bool
  /// How many values each subscription buffers by default before dropping its oldest.
  public let defaultBufferSize: Int

  /// Creates a broadcast.
  ///
  /// - Parameters:
  ///   - initial: the value a first subscriber receives before any ``send(_:)`` (when replaying).
  ///   - replaysLatest: whether new subscriptions start with the latest value.
  ///   - bufferingNewest: the default per-subscriber buffer, in values (at least 1).
  public init(initial: Element? = nil, replaysLatest: Bool = true, bufferingNewest: Int = 64) {
    self.state = Locked(State(latest: replaysLatest ? initial : nil))
    self.idle = Atomic(!replaysLatest)
    self.replaysLatest = replaysLatest
    self.defaultBufferSize = max(1, bufferingNewest)
  }

  /// The latest value sent (or the initial value), when the broadcast replays.
  public var latest: Element? { state.withLock { $0.latest } }

  /// How many subscriptions are live.
  public var subscriberCount: Int {
    state.withLock { state in
      removeEnded(&state)
      return state.subscribers.count + state.receivers.count
    }
  }

  /// Whether ``finish()`` was called.
  public var isFinished: Bool { state.withLock { $0.isFinished } }

  /// Sends `value` to every live subscription and remembers it as the latest.
  ///
  /// Never waits: a subscription whose buffer is full drops its oldest value.
  /// A subscriber called on the sending thread (the package's `subscribe(replaying:_:)`) is
  /// called on this thread, after the streams were given the value and outside the lock,
  /// before `send` returns.
  @inlinable @inline(__always)
  public func send(_ value: Element) {
    if idle.load(ordering: .acquiring) { return }
    let receivers = state.withLock { state -> [Receiver]? in
      guard !state.isFinished else { return nil }
      if replaysLatest { state.latest = value }
      // With no subscriber, the ids of ended ones name nothing here (an id is in `ended` only
      // after its subscription was added), so the lock of `ended` is not taken: most sends of a
      // replay have no subscriber. A later send with subscribers removes them.
      guard !state.subscribers.isEmpty else { return state.receiversToCall }
      removeEnded(&state)
      // Yielding under the lock keeps every subscription's order identical to the order of
      // `send` calls, including the replayed value of a subscription being added concurrently.
      // `yield` never runs subscriber code (only `finish` and cancellation run `onTermination`,
      // which takes `ended`, not `state`).
      for continuation in state.subscribers.values {
        continuation.yield(value)
      }
      return state.receiversToCall
    }
    // Most sends have none: `nil` takes no reference to an array.
    guard let receivers else { return }
    for receiver in receivers { receiver.deliver(value) }
  }

  /// Adds a subscriber called on the thread of each ``send(_:)`` (no stream, no task, no
  /// buffer in between: it gets every value and must return quickly, as it holds the sender
  /// back), and, when `replaying` and the broadcast has a latest value, with that value at once
  /// on the calling thread. A value sent while this subscribes may reach it before the latest.
  /// Every sender of such a broadcast should be one thread at a time: its subscribers then get
  /// the values in the order they were sent.
  ///
  /// - Returns: the subscriber's id, for ``unsubscribe(_:)``.
  package func subscribe(
    replaying: Bool = true, _ deliver: @escaping @Sendable (Element) -> Void
  ) -> Int {
    let (id, latest) = state.withLock { state -> (Int, Element?) in
      let id = state.nextID
      state.nextID += 1
      if !state.isFinished { state.receivers.append((id, deliver)) }
      noteSubscribers(&state)
      return (id, replaying ? state.latest : nil)
    }
    if let latest { deliver(latest) }
    return id
  }

  /// Removes the subscriber `id` of ``subscribe(replaying:_:)``: it is called no more once this
  /// returns, except by a send already under way on another thread.
  package func unsubscribe(_ id: Int) {
    state.withLock { state in
      state.receivers.removeAll { $0.id == id }
      noteSubscribers(&state)
    }
  }

  /// Ends every subscription; further ``send(_:)`` calls are ignored.
  public func finish() {
    let finished = state.withLock { state in
      state.isFinished = true
      state.receivers.removeAll()
      idle.store(true, ordering: .releasing)
      defer { state.subscribers.removeAll() }
      return Array(state.subscribers.values)
    }
    for continuation in finished { continuation.finish() }
  }

  /// Starts a subscription now and returns its stream.
  ///
  /// Prefer ``updates(bufferingNewest:)`` or ``subscription``, which subscribe when iteration
  /// starts; this is for callers that must not miss a value sent between now and then.
  ///
  /// - Parameter bufferingNewest: values buffered for this subscriber before its oldest is
  ///   dropped; `nil` uses ``defaultBufferSize``.
  public func subscribe(bufferingNewest: Int? = nil) -> AsyncStream<Element> {
    let size = max(1, bufferingNewest ?? defaultBufferSize)
    let (stream, continuation) = AsyncStream.makeStream(
      of: Element.self, bufferingPolicy: .bufferingNewest(size))
    let registered = state.withLock { state -> Bool in
      if let latest = state.latest { continuation.yield(latest) }
      guard !state.isFinished else { return false }
      removeEnded(&state)
      let id = state.nextID
      state.nextID += 1
      state.subscribers[id] = continuation
      noteSubscribers(&state)
      // The stream is not reachable by anyone else yet, so it cannot have terminated before
      // this handler is installed.
      continuation.onTermination = { [weak self] _ in self?.remove(id) }
      return true
    }
    if !registered { continuation.finish() }
    return stream
  }

  /// A subscription's end: noted in `ended`, never waiting for `state`.
  private func remove(_ id: Int) {
    ended.withLock { $0.append(id) }
  }

  /// Removes the subscriptions that ended since the last call (under `state`).
  @inlinable
  func removeEnded(_ state: inout State) {
    let ids = ended.withLock { ids in
      defer { ids.removeAll() }
      return ids
    }
    guard !ids.isEmpty else { return }
    for id in ids { state.subscribers[id] = nil }
    noteSubscribers(&state)
  }

  /// Sets ``idle`` after the subscribers changed (under `state`).
  @inlinable
  func noteSubscribers(_ state: inout State) {
    let nothingToDo =
      state.isFinished
      || (!replaysLatest && state.subscribers.isEmpty && state.receivers.isEmpty)
    idle.store(nothingToDo, ordering: .releasing)
  }

  /// A sequence whose every iteration is a new subscription with the default buffer.
  public var subscription: Updates { Updates(broadcast: self, bufferSize: nil) }

  /// A sequence whose every iteration is a new subscription buffering `size` values.
  public func updates(bufferingNewest size: Int? = nil) -> Updates {
    Updates(broadcast: self, bufferSize: size)
  }

  /// An `AsyncSequence` that subscribes to a ``Broadcast`` each time it is iterated.
  public struct Updates: AsyncSequence, Sendable {
    public typealias Failure = Never
    let broadcast: Broadcast<Element>
    let bufferSize: Int?

    /// Subscribes and returns the subscription's iterator.
    public func makeAsyncIterator() -> AsyncIterator {
      AsyncIterator(base: broadcast.subscribe(bufferingNewest: bufferSize).makeAsyncIterator())
    }

    /// Iterates one subscription; releasing it ends the subscription.
    public struct AsyncIterator: AsyncIteratorProtocol {
      public typealias Failure = Never
      var base: AsyncStream<Element>.Iterator

      /// The next value, or `nil` once the broadcast finished or the task was cancelled.
      public mutating func next() async -> Element? {
        await base.next(isolation: nil)
      }

      /// The next value, or `nil` once the broadcast finished or the task was cancelled.
      public mutating func next(
        isolation actor: isolated (any Actor)?
      ) async throws(Never) -> Element? {
        await base.next(isolation: actor)
      }
    }
  }
}
