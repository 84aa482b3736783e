import FoundationEssentials
import Synchronization
import WaymarkCore

/// Live fixes from gpsd, with the health of the connection.
///
/// All subscribers of one `GPSDSource` share one gpsd connection, read by one dedicated thread
/// (never the Swift concurrency pool). The thread starts with the first subscriber (to
/// ``fixes()`` or ``health()``) and stops as soon as the last one goes away; it sleeps in
/// poll(2) between reports, with no timer of its own. Each subscriber has its own bounded buffer: a slow
/// consumer loses its oldest fixes and never blocks the reader.
///
/// The session reconnects by itself with capped exponential backoff and jitter, waiting on the
/// injected clock, and treats a gpsd that stays silent for the receive timeout (even after a
/// probe) as lost.
///
/// ```swift
/// let gpsd = GPSDSource(configuration: .init(endpoint: GPSDEndpoint(parsing: "localhost")!))
/// for await fix in gpsd.fixes() where fix.isUsable { print(fix.coordinate!) }
/// ```
public final class GPSDSource: Sendable {
  /// The settings this source was made with.
  public let configuration: GPSDConfiguration
  private let startReader: @Sendable (ReaderControl, any ReaderSink) -> Void
  private let hub: Hub

  /// Creates a source; nothing connects until someone subscribes.
  ///
  /// - Parameters:
  ///   - configuration: endpoint, timeouts, backoff, buffer size.
  ///   - clock: the clock that backoff waits and the receive timeout are measured on.
  public init<C: Clock<Duration>>(configuration: GPSDConfiguration, clock: C) {
    self.configuration = configuration
    self.hub = Hub()
    self.startReader = { control, sink in
      let reader = GPSDReader(
        configuration: configuration, clock: clock, control: control, sink: sink)
      DetachedThread.start(name: "gpsd-reader") { reader.run() }
    }
  }

  /// Creates a source that waits on the continuous clock.
  public convenience init(configuration: GPSDConfiguration = GPSDConfiguration()) {
    self.init(configuration: configuration, clock: ContinuousClock())
  }

  /// Fixes as gpsd reports them (one per TPV that changed anything), newest kept when the
  /// buffer is full. Ending the iteration unsubscribes.
  public func fixes() -> AsyncStream<Fix> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: Fix.self, bufferingPolicy: .bufferingNewest(configuration.bufferCapacity))
    subscribe(continuation) { fix, _ in continuation.yield(fix) }
    return stream
  }

  /// Fixes with the instant `gps_read` returned each one, for latency measurements.
  @_spi(Benchmarks)
  public func timedFixes() -> AsyncStream<(fix: Fix, readAt: ContinuousClock.Instant)> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: (fix: Fix, readAt: ContinuousClock.Instant).self,
      bufferingPolicy: .bufferingNewest(configuration.bufferCapacity))
    subscribe(continuation) { fix, readAt in continuation.yield((fix, readAt)) }
    return stream
  }

  /// The connection's health: the current value first, then every change (a change of
  /// `SourceHealth.lastFixTime` alone is not published; read ``currentHealth`` for it).
  public func health() -> AsyncStream<SourceHealth> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: SourceHealth.self, bufferingPolicy: .bufferingNewest(64))
    let id = subscribeHealth { continuation.yield($0) }
    continuation.onTermination = { _ in self.unsubscribe { $0.healthSubscribers[id] = nil } }
    return stream
  }

  /// Fixes and health delivered on the reader thread itself, with no stream and no task in
  /// between: `fix` gets each fix as gpsd reports it, `health` the current health at once (on
  /// the calling thread), then every change. Both must return quickly; a `fix` that waits
  /// holds the reader back (gpsd then buffers, and drops a client that stays behind), and
  /// nothing is lost meanwhile. The reader starts with the first subscriber and stops after
  /// the last; `Attachment.cancel()` ends this one.
  package func attach(
    fix: @escaping @Sendable (Fix) -> Void, health: @escaping @Sendable (SourceHealth) -> Void
  ) -> Attachment {
    // The fixes first: the reader they start then has a subscriber for its first fix, and the
    // health subscriber still gets the current health and every change after it.
    let fixID = subscribeFixes { delivered, _ in fix(delivered) }
    let healthID = subscribeHealth(health)
    return Attachment {
      self.unsubscribe { state in
        state.fixSubscribers[fixID] = nil
        state.healthSubscribers[healthID] = nil
      }
    }
  }

  /// A subscription made by `attach(fix:health:)`.
  package final class Attachment: Sendable {
    private let end: Locked<(@Sendable () -> Void)?>

    init(end: @escaping @Sendable () -> Void) { self.end = Locked(end) }

    /// Ends the subscription (once; later calls do nothing). A delivery under way may still
    /// complete.
    package func cancel() {
      let end = self.end.withLock { end in
        defer { end = nil }
        return end
      }
      end?()
    }
  }

  /// Adds a health subscriber, gives it the current health and starts the reader if needed.
  private func subscribeHealth(_ deliver: @escaping @Sendable (SourceHealth) -> Void) -> Int {
    let id = hub.nextID()
    let (current, start) = hub.state.withLock { state in
      state.healthSubscribers[id] = deliver
      return (state.health, startIfNeeded(&state))
    }
    deliver(current)
    start?()
    return id
  }

  /// The latest health, including the latest fix time.
  public var currentHealth: SourceHealth { hub.state.withLock { $0.health } }

  /// gpsd's release (from its VERSION banner) on the current connection, when known.
  public var serverVersion: String? { hub.state.withLock { $0.serverVersion } }

  /// The devices gpsd reports active on the current connection, sorted.
  public var devices: [String] { hub.state.withLock { $0.devices } }

  /// Whether a reader thread is running (it may be finishing after the last unsubscribe).
  public var isRunning: Bool { hub.state.withLock { $0.controls.contains { !$0.isFinished } } }

  /// This source as a `FixSource` value, for the location manager and the CLI.
  public var fixSource: FixSource {
    FixSource(
      name: "gpsd \(configuration.endpoint)", health: { self.health() }, fixes: { self.fixes() })
  }

  private func subscribe<T>(
    _ continuation: AsyncStream<T>.Continuation,
    deliver: @escaping @Sendable (Fix, ContinuousClock.Instant) -> Void
  ) {
    let id = subscribeFixes(deliver)
    continuation.onTermination = { _ in self.unsubscribe { $0.fixSubscribers[id] = nil } }
  }

  /// Adds a fix subscriber and starts the reader if needed.
  private func subscribeFixes(
    _ deliver: @escaping @Sendable (Fix, ContinuousClock.Instant) -> Void
  ) -> Int {
    let id = hub.nextID()
    let start = hub.state.withLock { state in
      state.fixSubscribers[id] = deliver
      return startIfNeeded(&state)
    }
    start?()
    return id
  }

  /// Creates the reader's control under the lock; the returned closure starts the thread and
  /// must be called after unlocking.
  private func startIfNeeded(_ state: inout Hub.State) -> (@Sendable () -> Void)? {
    guard state.current == nil else { return nil }
    let control = ReaderControl()
    state.current = control
    state.controls.removeAll { $0.isFinished }
    state.controls.append(control)
    state.health = SourceHealth()
    let startReader = self.startReader
    let hub = self.hub
    return { startReader(control, Sink(hub: hub, control: control)) }
  }

  /// Removes a subscriber with `remove` and stops the reader when it was the last one.
  private func unsubscribe(_ remove: (inout Hub.State) -> Void) {
    let control = hub.state.withLock { state in
      remove(&state)
      return state.stopIfIdle()
    }
    control?.stop()
  }

  /// Shared state of the subscribers and the reader.
  final class Hub: Sendable {
    struct State {
      var fixSubscribers: [Int: @Sendable (Fix, ContinuousClock.Instant) -> Void] = [:]
      var healthSubscribers: [Int: @Sendable (SourceHealth) -> Void] = [:]
      var health = SourceHealth()
      var serverVersion: String?
      var devices: [String] = []
      var current: ReaderControl?
      var controls: [ReaderControl] = []

      mutating func stopIfIdle() -> ReaderControl? {
        guard fixSubscribers.isEmpty, healthSubscribers.isEmpty else { return nil }
        defer { current = nil }
        return current
      }
    }

    let state = Locked(State())
    private let ids = Atomic<Int>(0)

    func nextID() -> Int { ids.add(1, ordering: .relaxed).newValue }
  }

  /// Receives the reader's output; ignores a reader that has been replaced.
  final class Sink: ReaderSink {
    let hub: Hub
    let control: ReaderControl

    init(hub: Hub, control: ReaderControl) {
      self.hub = hub
      self.control = control
    }

    func deliver(_ fix: Fix, readAt: ContinuousClock.Instant) {
      let subscribers = hub.state.withLock { state in
        state.current === control ? Array(state.fixSubscribers.values) : []
      }
      for deliver in subscribers { deliver(fix, readAt) }
    }

    func updateServer(version: String?, devices: [String]?) {
      hub.state.withLock { state in
        guard state.current === control else { return }
        if let version { state.serverVersion = version }
        if let devices { state.devices = devices }
      }
    }

    func updateHealth(_ change: (inout SourceHealth) -> Void) {
      let (changed, subscribers) = hub.state.withLock {
        state -> (SourceHealth?, [@Sendable (SourceHealth) -> Void]) in
        guard state.current === control else { return (nil, []) }
        var health = state.health
        change(&health)
        var withoutTime = health
        withoutTime.lastFixTime = state.health.lastFixTime
        let published = withoutTime != state.health
        state.health = health
        return published ? (health, Array(state.healthSubscribers.values)) : (nil, [])
      }
      guard let changed else { return }
      for deliver in subscribers { deliver(changed) }
    }
  }
}
