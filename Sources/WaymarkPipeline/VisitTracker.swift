import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkStore

/// Place monitoring and visit recording as one unit, used by `waymarkd` and by
/// `waymark replay`: a ``PlaceMonitor``, the store's ``VisitRecorder``, the saved-state codec
/// (``SavedMonitorState``) and one resume policy.
///
/// **Resume policy.** The store keeps the monitor's state of every non-idle place and the last
/// accepted fix. The saved state is restored when the first usable fix is *later* than that
/// last fix (the device went on: a restarted daemon, the next log of a drive), so an open visit
/// continues and is closed by its departure. A first fix at or before it (the same log replayed
/// again, say after a crash) starts fresh: the same events come again and the store records
/// each transition once (visits are unique on place and arrival).
///
/// Every event is committed (`synchronous=FULL`) together with its place's state before
/// ``process(_:)`` returns it, or reported as failed; with ``holdsFailedEvents`` (the daemon),
/// one that failed for a reason that may pass (a full disk) is held and committed later, in
/// order, before any later event. The ``WaymarkPipeline`` runs it on its output thread, never on
/// the concurrency pool (the daemon's main loop, the replay's `replay-outputs`).
package final class VisitTracker {
  /// The monitor.
  package var monitor: PlaceMonitor { storedMonitor }
  /// ``monitor``'s storage. Private, so whole-module optimization drops the run-time
  /// exclusivity check a `package` stored `var` of a class has on every access (one per fix in
  /// ``process(_:)``).
  private var storedMonitor: PlaceMonitor
  /// The recorder, when there is a store.
  package let recorder: VisitRecorder?
  private var saved: [String: MonitorStateRepository.Entry]
  private var savedLastFix: MonitorStateRepository.LastFix?
  private var savedNonIdle: Set<String>
  private var decidedResume = false
  private let unreadableState: (String) -> Void
  /// Whether the saved state was restored (decided at the first usable fix).
  package private(set) var resumed = false
  /// Messages that report an event (MQTT), queued in the event's own transaction.
  package var outboxMessages: ((PlaceEvent) -> [OutboxMessage])?
  /// Past this many queued messages, the oldest location messages are dropped.
  package var outboxMaximum: Int?
  /// Whether an event whose recording fails for a reason that may pass
  /// (``StoreError/isTransient``: a full disk, an I/O error, a lock) is held and recorded again
  /// before any later event, at each fix and each ``save()`` (`waymarkd`). Off, the failure is
  /// only reported (`waymark replay` stops on it).
  package var holdsFailedEvents = false
  /// Events held after a failed write, oldest first, with their MQTT messages.
  private var held: [(event: PlaceEvent, outbox: [OutboxMessage])] = []
  /// At most this many events are held; beyond, the oldest is dropped (and counted).
  package static let heldLimit = 10_000
  /// Events dropped because more than ``heldLimit`` were held.
  package private(set) var droppedEvents = 0

  /// Creates a tracker of `places`; with a `database`, events are recorded there and the saved
  /// state is resumed by the policy above.
  ///
  /// - Parameters:
  ///   - places: the places to monitor.
  ///   - configuration: the detection defaults.
  ///   - database: the store, or `nil` to record nothing.
  ///   - source: the name recorded with visits (`waymarkd`, a log's path).
  ///   - device: the device whose visits and saved state are recorded and resumed.
  ///   - unreadableState: told the id of a place whose saved state cannot be read (it starts
  ///     outside).
  /// - Throws: ``StoreError`` when the store cannot be read.
  package convenience init(
    places: [Place], configuration: PlaceMonitor.Configuration = PlaceMonitor.Configuration(),
    database: Database?, source: String, device: String = StoreDevice.local,
    unreadableState: @escaping (String) -> Void = { _ in }
  ) throws {
    try self.init(
      table: PlaceTable(places), configuration: configuration, database: database,
      source: source, device: device, unreadableState: unreadableState)
  }

  /// Creates a tracker of the places of `table` (``PlaceTable/load(from:storeSnapshot:)``
  /// reads the store's without a `Place` per place), as ``init(places:configuration:database:source:device:unreadableState:)``.
  ///
  /// `time` dates the MQTT messages queued with an event.
  ///
  /// - Throws: ``StoreError`` when the store cannot be read.
  package init(
    table: PlaceTable,
    configuration: PlaceMonitor.Configuration = PlaceMonitor.Configuration(),
    database: Database?, source: String, device: String = StoreDevice.local,
    time: TimeSource = .system, unreadableState: @escaping (String) -> Void = { _ in }
  ) throws {
    storedMonitor = PlaceMonitor(table: table, configuration: configuration)
    self.unreadableState = unreadableState
    if let database {
      (saved, savedLastFix) = try database.read { connection in
        let states = MonitorStateRepository(connection, device: device)
        return (try states.all(), try states.lastFix())
      }
      recorder = try VisitRecorder(
        database: database, source: source, device: device, now: { [time] in time.date() })
    } else {
      (saved, savedLastFix, recorder) = ([:], nil, nil)
    }
    savedNonIdle = Set(saved.keys)
  }

  /// What became of one event.
  package struct Outcome {
    /// The event.
    package let event: PlaceEvent
    /// Whether the store did not have it yet (`false` for a transition recorded before).
    package let isNew: Bool
    /// Why it could not be recorded, or `nil` (recorded, or no store).
    package let failure: (any Error)?
    /// Whether the event is held, to be recorded again (``holdsFailedEvents``).
    package var isHeld = false
    /// Whether this is an event of an earlier fix, held and tried again now: recorded, or
    /// ``failure`` says why not (a failure that does not pass; the event is dropped).
    package var isLate = false
  }

  /// Events held after a failed write, waiting to be recorded again.
  package var heldCount: Int { held.count }

  /// Feeds one fix: counts it for open visits, runs the monitor and records its events, each
  /// committed with its place's state before this returns.
  ///
  /// With ``holdsFailedEvents``, the held events are recorded first (outcomes with
  /// ``Outcome/isLate``), and while any is still held the fix's events join them.
  package func process(_ fix: Fix) -> [Outcome] {
    guard let location = Location(fix) else {
      recorder?.observe(fix)
      return []
    }
    if !decidedResume {
      decidedResume = true
      resumeIfLater(than: location.timestamp)
    }
    recorder?.observe(fix)
    // Nothing is held but after a failed write: the usual fix makes no list for it.
    var outcomes = held.isEmpty ? [] : recordHeld()
    for event in monitor.process(location) {
      let outbox = recorder == nil ? [] : outboxMessages?(event) ?? []
      if !held.isEmpty {
        hold(event, outbox)
        outcomes.append(Outcome(event: event, isNew: false, failure: heldFailure, isHeld: true))
        continue
      }
      let outcome = record(event, outbox: outbox)
      if holdsFailedEvents, let failure = outcome.failure, failure.isTransientStoreFailure {
        hold(event, outbox)
        heldFailure = failure
        outcomes.append(Outcome(event: event, isNew: false, failure: failure, isHeld: true))
      } else {
        outcomes.append(outcome)
      }
    }
    return outcomes
  }

  /// Why the oldest held event failed last.
  private var heldFailure: (any Error)?

  private func hold(_ event: PlaceEvent, _ outbox: [OutboxMessage]) {
    held.append((event, outbox))
    if held.count > Self.heldLimit {
      held.removeFirst(held.count - Self.heldLimit)
      droppedEvents += 1
    }
  }

  /// Records `event` with its place's current state.
  private func record(_ event: PlaceEvent, outbox: [OutboxMessage]) -> Outcome {
    guard let recorder else { return Outcome(event: event, isNew: true, failure: nil) }
    let state = monitor.state(for: event.placeID) ?? .outside
    do {
      let isNew = try recorder.record(
        event, snapshot: SavedMonitorState.encode(state), outbox: outbox,
        outboxMaximum: outboxMaximum)
      if state.isInside { savedNonIdle.insert(event.placeID) }
      return Outcome(event: event, isNew: isNew, failure: nil)
    } catch {
      return Outcome(event: event, isNew: false, failure: error)
    }
  }

  /// Records the held events in order, until one fails again (it and the later ones stay).
  private func recordHeld() -> [Outcome] {
    var outcomes: [Outcome] = []
    while let (event, outbox) = held.first {
      var outcome = record(event, outbox: outbox)
      if let failure = outcome.failure, failure.isTransientStoreFailure {
        heldFailure = failure
        break
      }
      held.removeFirst()
      outcome.isLate = true
      outcomes.append(outcome)
    }
    return outcomes
  }

  /// Saves the state of every place that is not idle (and of those that became idle since the
  /// last save) and the pending fix counts, in one transaction.
  ///
  /// - Throws: ``StoreError``; with ``holdsFailedEvents``, the failure of a held event that
  ///   still cannot be recorded (they are tried first, and nothing else is written then).
  package func save() throws {
    guard let recorder else { return }
    lateOutcomes += recordHeld()
    if !held.isEmpty, let heldFailure { throw heldFailure }
    let current = monitor.snapshot().places
    // Before the first fix the saved state is still the store's: nothing to write over it.
    guard decidedResume else { return }
    try recorder.saveSnapshots(
      SavedMonitorState.entries(current: current, previouslySaved: savedNonIdle))
    savedNonIdle = Set(current.keys)
  }

  /// Held events that ``save()`` recorded, for the caller to report; taking them empties the
  /// list.
  package func takeLateOutcomes() -> [Outcome] {
    defer { lateOutcomes = [] }
    return lateOutcomes
  }

  private var lateOutcomes: [Outcome] = []

  /// Replaces the places (on a reload): the state of places that remain is carried over.
  package func replacePlaces(_ places: PlaceTable, configuration: PlaceMonitor.Configuration) {
    let snapshot = monitor.snapshot()
    let next = PlaceMonitor(table: places, configuration: configuration)
    next.restore(snapshot)
    storedMonitor = next
  }

  /// Whether a visit is open (after the first fix: the monitor's view).
  package var hasOpenVisit: Bool { decidedResume && !monitor.openVisits().isEmpty }

  /// The places with an open visit: the monitor's, or before the first fix the store's.
  package var openPlaceIDs: [String] {
    if decidedResume { return monitor.openVisits().map(\.placeID) }
    return recorder.map { Array($0.openVisits.keys).sorted() } ?? []
  }

  private func resumeIfLater(than time: Date) {
    guard let last = savedLastFix, time > last.time else { return }
    monitor.restore(
      SavedMonitorState.snapshot(
        entries: saved, lastFix: last,
        assumedAccuracyMeters: monitor.configuration.assumedAccuracyMeters,
        unreadable: unreadableState))
    resumed = true
  }
}

extension Error {
  /// Whether this is a ``StoreError`` that may pass (``StoreError/isTransient``).
  var isTransientStoreFailure: Bool { (self as? StoreError)?.isTransient ?? false }
}
