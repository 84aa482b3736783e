import FoundationEssentials
import WaymarkCore

/// Watches places and reports arrivals and departures, each with the reason it fired.
///
/// Feed it locations (`process(_:)`, one fix or a whole stream); it runs a documented state machine per
/// place (docs/guide/places-and-visits.md, "Detection") driven only by fix time, over a spatial
/// index so that a million places cost no more per fix than a thousand. Every event goes, in the same order, to:
///
/// - the return value of `process(_:)`,
/// - every `events` stream (one per subscriber, unbounded, so a slow reader loses nothing and
///   never blocks the producer),
/// - the `delegate`,
/// - the `poster`, if any: `WaymarkNotifications` posts to a `NotificationCenter` as
///   `.placeMonitorDidArrive` / `.placeMonitorDidDepart` (see `PlaceNotificationKey` and
///   `observeEvents(queue:_:)` there).
///
/// The state of every place can be exported with `snapshot()` and resumed with `restore(_:)`,
/// so a restart in the middle of a visit closes that visit correctly later.
///
/// Thread safety: all methods may be called from any thread. Events are delivered after the
/// internal lock is released, in the order the fixes were processed, never concurrently.
public final class PlaceMonitor: Sendable {
  private struct Shared {
    var engine: PlaceMonitorEngine
    var pending: [PlaceEvent] = []
    var isDelivering = false
  }

  private struct WeakDelegate {
    weak var value: (any PlaceMonitorDelegate)?
  }

  private let shared: Locked<Shared>
  private let weakDelegate = Locked(WeakDelegate())
  // No replay (events are not state) and unbounded buffers (events are rare, none may be lost,
  // the producer never waits).
  private let streams = Broadcast<PlaceEvent>(replaysLatest: false, bufferingNewest: .max)

  /// The detection defaults in force.
  public let configuration: Configuration
  /// Who else receives every event; `nil` for nobody.
  public let poster: (any PlaceEventPoster)?

  /// Creates a monitor over `places`.
  ///
  /// - Parameters:
  ///   - places: The places to watch. Ids should be unique; a later duplicate is ignored.
  ///   - configuration: Detection defaults (places may override some).
  ///   - poster: Who else receives every event, after the delegate; default nobody. To post to
  ///     a `NotificationCenter`, use `init(places:configuration:notificationCenter:)` from
  ///     `WaymarkNotifications`.
  public init(
    places: [Place], configuration: Configuration = Configuration(),
    poster: (any PlaceEventPoster)? = nil
  ) {
    self.configuration = configuration
    self.poster = poster
    shared = Locked(
      Shared(engine: PlaceMonitorEngine(places: places, configuration: configuration)))
  }

  /// Creates a monitor over the places of `table` (see ``PlaceTable``: what a store loader
  /// fills without a `Place` value per place).
  ///
  /// - Parameters:
  ///   - table: The places to watch, in their order.
  ///   - configuration: Detection defaults (places may override some).
  ///   - poster: Who else receives every event, after the delegate; default nobody.
  public init(
    table: PlaceTable, configuration: Configuration = Configuration(),
    poster: (any PlaceEventPoster)? = nil
  ) {
    self.configuration = configuration
    self.poster = poster
    shared = Locked(
      Shared(engine: PlaceMonitorEngine(table: table, configuration: configuration)))
  }

  /// The object told about each event, held weakly. Called on the thread that processed the
  /// fix, after the monitor's lock is released.
  public var delegate: (any PlaceMonitorDelegate)? {
    get { weakDelegate.withLock { $0.value } }
    set { weakDelegate.withLock { $0.value = newValue } }
  }

  /// Number of places watched.
  public var placeCount: Int { shared.withLock { $0.engine.placeCount } }

  /// A new stream of every event from now on; it ends when `finish()` is called or the
  /// subscriber stops iterating. Each access makes an independent subscriber.
  public var events: AsyncStream<PlaceEvent> { streams.subscribe() }

  // MARK: - Feeding

  /// Feeds one location and returns the events it caused (also delivered to the streams, the
  /// delegate and the poster before this returns, unless another thread is
  /// delivering at that moment, in which case that thread delivers them, in order).
  ///
  /// - Parameter location: A fix; its `timestamp` is the only clock the monitor uses.
  /// - Returns: The events, oldest first; usually empty.
  @discardableResult
  public func process(_ location: Location) -> [PlaceEvent] {
    let (events, shouldDeliver) = shared.withLock { shared -> ([PlaceEvent], Bool) in
      let events = shared.engine.process(location)
      guard !events.isEmpty else { return (events, false) }
      shared.pending.append(contentsOf: events)
      if shared.isDelivering { return (events, false) }
      shared.isDelivering = true
      return (events, true)
    }
    if shouldDeliver { drain() }
    return events
  }

  /// Feeds every location of `locations` until it ends or the task is cancelled.
  ///
  /// - Parameter locations: A location stream, for example `LocationManager.locations`.
  public func process<Locations: AsyncSequence<Location, Never>>(_ locations: Locations) async {
    for await location in locations {
      if Task.isCancelled { break }
      process(location)
    }
  }

  /// Ends every `events` stream. Later events still reach the delegate and the poster.
  public func finish() {
    streams.finish()
  }

  private func drain() {
    while true {
      let batch = shared.withLock { shared -> [PlaceEvent] in
        if shared.pending.isEmpty {
          shared.isDelivering = false
          return []
        }
        defer { shared.pending.removeAll() }
        return shared.pending
      }
      if batch.isEmpty { return }
      deliver(batch)
    }
  }

  private func deliver(_ batch: [PlaceEvent]) {
    for event in batch { streams.send(event) }
    let delegate = self.delegate
    for event in batch {
      switch event {
      case .arrival(let arrival): delegate?.placeMonitor(self, didArriveAt: arrival)
      case .departure(let departure): delegate?.placeMonitor(self, didDepartFrom: departure)
      }
      poster?.post(event, from: self)
    }
  }

  /// Replaces the watched places. Places that remain (same id) keep their state, so an open
  /// visit goes on; places that are gone are dropped without a departure event. The index is
  /// rebuilt before the lock is taken, so fixes keep flowing meanwhile.
  ///
  /// - Parameter places: The new set of places.
  public func setPlaces(_ places: [Place]) {
    let rebuilt = PlaceMonitorEngine(places: places, configuration: configuration)
    shared.withLock { shared in
      var engine = rebuilt
      engine.restore(shared.engine.snapshot())
      shared.engine = engine
    }
  }

  // MARK: - State

  /// The state of the place with `placeID`; `nil` when no such place is watched.
  public func state(for placeID: String) -> State? {
    shared.withLock { $0.engine.state(for: placeID) }
  }

  /// The id of the watched place whose circle holds `coordinate` and whose centre is nearest
  /// (the earlier place on a tie), or `nil` when no circle holds it: what
  /// `Stay.place(in:)` finds among the same places, through the index.
  public func nearestPlaceID(containing coordinate: Coordinate) -> String? {
    shared.withLock { $0.engine.nearestPlaceID(containing: coordinate) }
  }

  /// The name of the watched place with `placeID`; `nil` when no such place is watched.
  public func name(of placeID: String) -> String? {
    shared.withLock { $0.engine.name(of: placeID) }
  }

  /// Everything needed to resume after a restart (see `Snapshot`).
  public func snapshot() -> Snapshot {
    shared.withLock { $0.engine.snapshot() }
  }

  /// Resumes from a snapshot taken by this or an earlier process. Delivers nothing.
  public func restore(_ snapshot: Snapshot) {
    shared.withLock { $0.engine.restore(snapshot) }
  }

  /// Replaces the state of one place (for stores that persist one row per place).
  public func restore(_ state: State, for placeID: String) {
    shared.withLock { $0.engine.setState(state, for: placeID) }
  }

  /// The visits now open (places the device is confirmed at), ordered by place id.
  public func openVisits() -> [Visit] {
    shared.withLock { $0.engine.openVisits() }
  }
}
