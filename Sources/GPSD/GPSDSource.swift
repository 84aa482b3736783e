import FoundationEssentials
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
    subscribe(continuation) { continuation.yield($0.fix) }
    return stream
  }

  /// Fixes with the instant `gps_read` returned each one, for latency measurements: a source
  /// on the continuous clock only (on any other clock the stream stays empty).
  @_spi(Benchmarks)
  public func timedFixes() -> AsyncStream<(fix: Fix, readAt: ContinuousClock.Instant)> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: (fix: Fix, readAt: ContinuousClock.Instant).self,
      bufferingPolicy: .bufferingNewest(configuration.bufferCapacity))
    subscribe(continuation) { timed in
      if let readAt = timed.readAt { continuation.yield((timed.fix, readAt)) }
    }
    return stream
  }

  /// The connection's health: the current value first, then every change (a change of
  /// `SourceHealth.lastFixTime` alone is not published; read ``currentHealth`` for it).
  public func health() -> AsyncStream<SourceHealth> {
    let (stream, continuation) = AsyncStream.makeStream(
      of: SourceHealth.self, bufferingPolicy: .bufferingNewest(64))
    let id = subscribeHealth { continuation.yield($0) }
    continuation.onTermination = { _ in self.unsubscribe(health: id) }
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
    let fixID = subscribeFixes { fix($0.fix) }
    let healthID = subscribeHealth(health)
    return Attachment { self.unsubscribe(fix: fixID, health: healthID) }
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
    // Subscribed before the reader is started or kept: see `unsubscribe(fix:health:)`. A change
    // the reader publishes meanwhile may reach it twice, as a change and as the current health
    // (a state, not an event: the second is the same value).
    let id = hub.health.subscribe(replaying: false, deliver)
    let (current, start) = hub.state.withLock { state in
      (state.health, startIfNeeded(&state))
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
    deliver: @escaping @Sendable (Hub.TimedFix) -> Void
  ) {
    let id = subscribeFixes(deliver)
    continuation.onTermination = { _ in self.unsubscribe(fix: id) }
  }

  /// Adds a fix subscriber and starts the reader if needed.
  private func subscribeFixes(_ deliver: @escaping @Sendable (Hub.TimedFix) -> Void) -> Int {
    let id = hub.fixes.subscribe(deliver)
    let start = hub.state.withLock { state in startIfNeeded(&state) }
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

  /// Removes the subscribers `fix` and `health` and stops the reader when they were the last.
  ///
  /// A subscriber is added to its broadcast before the reader is started (under `hub.state`),
  /// and removed before the subscriber counts are read (under `hub.state` too): so a reader is
  /// stopped only when no subscriber remains, and one that subscribes meanwhile finds it
  /// running or starts a new one.
  private func unsubscribe(fix: Int? = nil, health: Int? = nil) {
    if let fix { hub.fixes.unsubscribe(fix) }
    if let health { hub.health.unsubscribe(health) }
    let control = hub.state.withLock { state -> ReaderControl? in
      guard hub.fixes.subscriberCount == 0, hub.health.subscriberCount == 0 else { return nil }
      defer { state.current = nil }
      return state.current
    }
    control?.stop()
  }

  /// The subscribers (two ``Broadcast``s, delivering on the reader thread) and the reader's
  /// state.
  final class Hub: Sendable {
    /// A fix with the instant `gps_read` returned it on the continuous clock (`nil` when the
    /// source's clock is another).
    typealias TimedFix = (fix: Fix, readAt: ContinuousClock.Instant?)

    struct State {
      var health = SourceHealth()
      var serverVersion: String?
      var devices: [String] = []
      var current: ReaderControl?
      var controls: [ReaderControl] = []
    }

    let state = Locked(State())
    /// The fix subscribers, called on the reader thread with each fix (none replayed).
    let fixes = Broadcast<TimedFix>(replaysLatest: false)
    /// The health subscribers, called on the reader thread with each published change (a new
    /// subscriber gets the current health from `subscribeHealth`, not from a replay).
    let health = Broadcast<SourceHealth>(replaysLatest: false)
  }

  /// Receives the reader's output; ignores a reader that has been replaced.
  final class Sink: ReaderSink {
    let hub: Hub
    let control: ReaderControl

    init(hub: Hub, control: ReaderControl) {
      self.hub = hub
      self.control = control
    }

    func deliver(_ fix: Fix, readAt: ContinuousClock.Instant?) {
      guard hub.state.withLock({ $0.current === control }) else { return }
      hub.fixes.send((fix, readAt))
    }

    func updateServer(version: String?, devices: [String]?) {
      hub.state.withLock { state in
        guard state.current === control else { return }
        if let version { state.serverVersion = version }
        if let devices { state.devices = devices }
      }
    }

    func updateHealth(_ change: (inout SourceHealth) -> Void) {
      let changed = hub.state.withLock { state -> SourceHealth? in
        guard state.current === control else { return nil }
        var health = state.health
        change(&health)
        var withoutTime = health
        withoutTime.lastFixTime = state.health.lastFixTime
        let published = withoutTime != state.health
        state.health = health
        return published ? health : nil
      }
      guard let changed else { return }
      hub.health.send(changed)
    }
  }
}
