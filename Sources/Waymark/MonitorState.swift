import FoundationEssentials
import WaymarkCore

/// The deterministic core of ``Monitor``: its conditions, their records and the place monitor
/// engine that decides their states. A value with no clock, no I/O and no callbacks: the same
/// conditions and the same fixes give the same events.
///
/// Each condition is a place of a `PlaceMonitorEngine` (the place id is the identifier). Adding
/// or removing a condition rebuilds the engine over the new set and restores the previous
/// engine's snapshot into it, so the other conditions keep their state (an open stay goes on, a
/// pending confirmation keeps its count) and the last accepted fix is kept.
package struct MonitorState: Sendable {
  /// One condition and its record.
  package struct Entry: Sendable, Hashable, Codable {
    package var identifier: String
    package var condition: Monitor.CircularGeographicCondition
    package var lastEvent: Monitor.Event
    /// Added as `.satisfied` before the monitor had any fix: the stay is opened at the next
    /// location's time (a stay needs a fix time and a last fix inside).
    package var awaitsAnchor: Bool
  }

  /// What a monitor's file holds.
  package struct Saved: Sendable, Codable {
    package var version: Int
    package var entries: [Entry]
    package var engine: PlaceMonitor.Snapshot
    /// For a monitor held by waymarkd: the sequence number of the last event delivered to the
    /// app (events up to it are acknowledged); `nil` for an in-process monitor.
    package var cursor: Int64?
  }

  /// The file format's version.
  package static let version = 1

  package let configuration: PlaceMonitor.Configuration
  package private(set) var entries: [Entry]
  private var engine: PlaceMonitorEngine
  /// Whether an entry awaits its anchor, and how many are `.unknown`: kept so that a fix costs
  /// nothing per condition when neither applies (the usual case).
  private var awaitsAnchors = false
  private var unknownCount = 0

  /// A state with no condition.
  package init(configuration: PlaceMonitor.Configuration) {
    self.configuration = configuration
    entries = []
    engine = PlaceMonitorEngine(places: [], configuration: configuration)
  }

  /// The state `saved` describes.
  package init(_ saved: Saved, configuration: PlaceMonitor.Configuration) {
    self.configuration = configuration
    entries = saved.entries
    engine = PlaceMonitorEngine(
      places: entries.map { $0.condition.place(identifier: $0.identifier) },
      configuration: configuration)
    engine.restore(saved.engine)
    recount()
  }

  /// What to save.
  package var saved: Saved {
    Saved(version: Self.version, entries: entries, engine: engine.snapshot(), cursor: nil)
  }

  /// The identifiers, in the order they were first added.
  package var identifiers: [String] { entries.map(\.identifier) }

  /// The record of `identifier`; `nil` for an identifier not monitored.
  package func record(for identifier: String) -> Monitor.Record? {
    entries.first { $0.identifier == identifier }.map {
      Monitor.Record(condition: $0.condition, lastEvent: $0.lastEvent)
    }
  }

  /// Adds `condition` under `identifier` (replacing the condition already there, which keeps its
  /// position) with the state `assumed`. The other conditions keep their states.
  package mutating func add(
    _ condition: Monitor.CircularGeographicCondition, identifier: String,
    assuming assumed: Monitor.Event.State
  ) {
    let anchor = engine.snapshot().previous
    let entry = Entry(
      identifier: identifier, condition: condition,
      lastEvent: Monitor.Event(
        identifier: identifier, state: assumed, date: anchor?.time ?? .distantPast,
        condition: condition),
      awaitsAnchor: assumed == .satisfied && anchor == nil)
    if let position = entries.firstIndex(where: { $0.identifier == identifier }) {
      entries[position] = entry
    } else {
      entries.append(entry)
    }
    rebuild(resetting: identifier)
    if assumed == .satisfied, let anchor { open(identifier, at: anchor.time) }
    recount()
  }

  /// Removes the condition under `identifier`; `false` if there is none.
  package mutating func remove(_ identifier: String) -> Bool {
    guard let position = entries.firstIndex(where: { $0.identifier == identifier }) else {
      return false
    }
    entries.remove(at: position)
    rebuild(resetting: identifier)
    recount()
    return true
  }

  /// Feeds one location and returns the events it caused, oldest first: the engine's arrivals
  /// (`.satisfied`) and departures (`.unsatisfied`), in its order, then the `.unknown`
  /// conditions this fix shows clearly outside (`.unsatisfied`), in the order of the conditions.
  package mutating func process(_ location: Location) -> [Monitor.Event] {
    if awaitsAnchors {
      for position in entries.indices where entries[position].awaitsAnchor {
        open(entries[position].identifier, at: location.timestamp)
        entries[position].awaitsAnchor = false
      }
      awaitsAnchors = false
    }

    var events: [Monitor.Event] = []
    var changed = Set<String>()
    for placeEvent in engine.process(location) {
      guard let position = entries.firstIndex(where: { $0.identifier == placeEvent.placeID })
      else { continue }
      let state: Monitor.Event.State
      switch placeEvent {
      case .arrival: state = .satisfied
      case .departure: state = .unsatisfied
      }
      record(
        Monitor.Event(
          identifier: placeEvent.placeID, state: state, date: placeEvent.time,
          condition: entries[position].condition), at: position, into: &events)
      changed.insert(placeEvent.placeID)
    }
    guard unknownCount > 0, engine.snapshot().previous?.time == location.timestamp
    else { return events }
    // An unknown condition the engine does not see entering: unsatisfied once a fix its
    // accuracy gate accepts lies clearly beyond its exit radius.
    let accuracy = location.horizontalAccuracy ?? configuration.assumedAccuracyMeters
    for position in entries.indices
    where entries[position].lastEvent.state == .unknown
      && !changed.contains(entries[position].identifier)
    {
      let entry = entries[position]
      let place = entry.condition.place(identifier: entry.identifier)
      let rules = configuration.rules(for: place)
      guard accuracy <= rules.maximumAccuracyMeters,
        engine.state(for: entry.identifier) == .outside,
        place.coordinate.distance(to: location.coordinate) - accuracy > rules.exitRadiusMeters
      else { continue }
      record(
        Monitor.Event(
          identifier: entry.identifier, state: .unsatisfied, date: location.timestamp,
          condition: entry.condition), at: position, into: &events)
    }
    return events
  }

  /// Records `event`, decided elsewhere (by waymarkd for a held monitor), as the last event of
  /// its condition; `false` when no condition has its identifier.
  package mutating func apply(_ event: Monitor.Event) -> Bool {
    guard let position = entries.firstIndex(where: { $0.identifier == event.identifier })
    else { return false }
    if entries[position].lastEvent.state == .unknown { unknownCount -= 1 }
    entries[position].lastEvent = event
    if event.state == .unknown { unknownCount += 1 }
    return true
  }

  /// The time of the last location the engine accepted, if any.
  package var lastFixTime: Date? { engine.snapshot().previous?.time }

  private mutating func record(
    _ event: Monitor.Event, at position: Int, into events: inout [Monitor.Event]
  ) {
    if entries[position].lastEvent.state == .unknown { unknownCount -= 1 }
    entries[position].lastEvent = event
    events.append(event)
  }

  private mutating func recount() {
    awaitsAnchors = entries.contains { $0.awaitsAnchor }
    unknownCount = entries.count { $0.lastEvent.state == .unknown }
  }

  /// A new engine over the current entries with the old one's state; the place `identifier`
  /// starts idle.
  private mutating func rebuild(resetting identifier: String) {
    var snapshot = engine.snapshot()
    snapshot.places[identifier] = nil
    engine = PlaceMonitorEngine(
      places: entries.map { $0.condition.place(identifier: $0.identifier) },
      configuration: configuration)
    engine.restore(snapshot)
  }

  /// Opens a stay at the condition `identifier` at `time`, as if a fix at its centre had
  /// confirmed it then: the device is assumed there until fixes show it out.
  private mutating func open(_ identifier: String, at time: Date) {
    guard let entry = entries.first(where: { $0.identifier == identifier }) else { return }
    let center = PlaceMonitor.Sample(
      time: time, coordinate: entry.condition.center, accuracyMeters: 0)
    engine.setState(
      .inside(
        PlaceMonitor.Stay(
          arrival: time, lastInside: center, lastFix: time, fixCount: 0, bestAccuracyMeters: 0)),
      for: identifier)
  }
}
