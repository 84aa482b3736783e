import FoundationEssentials
import WaymarkCore

/// Conditions on the device's location that persist under a name, CoreLocation's `CLMonitor`.
///
/// ```swift
/// let monitor = try await Monitor(named: "trips", locations: manager.locations)
/// if await monitor.record(for: "home") == nil {
///   await monitor.add(
///     Monitor.CircularGeographicCondition(center: home, radius: 100), identifier: "home",
///     assuming: .unsatisfied)
/// }
/// for try await event in await monitor.events {
///   print(event.identifier, event.state, event.date)
/// }
/// ```
///
/// The conditions, their records (last event and state) and the detection state of every
/// condition are saved under the monitor's name (see ``init(named:locations:directory:configuration:)``)
/// when a condition is added or removed, after every fix that caused events (before they are
/// delivered), when the locations end and on ``close()``. A monitor opened again by name
/// resumes where the last one stopped: an open stay goes on, a pending confirmation keeps its
/// fixes, and a location not after the last one accepted (the same log replayed) is ignored, so
/// no event is repeated.
///
/// Detection is `PlaceMonitorEngine`'s, on fix time only: the same conditions and the same
/// locations give the same events, whatever the wall clock or the speed of the replay.
///
/// Where the locations come from is the `locations` argument: `LocationManager.locations`, a
/// log through `NMEAReplay`, or any `AsyncSequence` of `Location`. The monitor starts reading
/// them on the first access to ``events``, so conditions added before that see every location.
/// Reading holds the monitor until the locations end; over a stream that does not end (a live
/// `LocationManager`), ``close()`` stops it and releases the name.
public actor Monitor {
  /// The monitor's name.
  public nonisolated let name: String
  /// The file the monitor is saved in.
  public nonisolated let fileURL: URL

  private var state: MonitorState
  private let store: MonitorStore
  private let stream: AsyncThrowingStream<Event, any Error>
  private let continuation: AsyncThrowingStream<Event, any Error>.Continuation
  /// Starts reading the locations; `nil` once started.
  private var startReading: (@Sendable (Monitor) -> Task<Void, Never>)?
  private var reading: Task<Void, Never>?
  var isFinished = false
  /// The daemon's connection, for a monitor held by waymarkd; `nil` in-process.
  let link: BrokerConnection?
  /// For a monitor held by waymarkd: the sequence number of the last event delivered.
  var cursor: Int64?
  /// For a monitor held by waymarkd: events the daemon dropped at its bound before this app
  /// read them, since the monitor was opened.
  public internal(set) var lostEventCount = 0
  /// For a monitor held by waymarkd: the changes sent and not yet answered, oldest first.
  var pendingAnswers: [CheckedContinuation<Void, Never>] = []
  /// For a monitor held by waymarkd: whether the events missed are all delivered.
  var caughtUp = false
  /// For a monitor held by waymarkd: the task reading the daemon's lines.
  var heldReader: Task<Void, Never>?

  /// Opens the monitor saved under `name`, or creates it, and takes it: a second monitor of the
  /// same name cannot be open at the same time (in this process or another) until this one is
  /// closed or released.
  ///
  /// - Parameters:
  ///   - name: The monitor's name: its file is `<name>.json` in `directory`. Not empty, at
  ///     most 200 bytes of UTF-8, without `/`, `..`, a leading dot or control characters.
  ///   - locations: Where the locations come from, read from the first access to ``events``
  ///     until they end. Locations must come in fix-time order; one not after the last one
  ///     accepted is ignored.
  ///   - directory: Where monitors are saved; by default `monitors` in the state directory
  ///     (`$XDG_STATE_HOME/waymark/monitors`, else `~/.local/state/waymark/monitors`),
  ///     created with mode 0700. Files are 0600.
  ///   - configuration: The detection defaults (a condition's options override some).
  /// - Throws: ``MonitorError``: the name is refused, the monitor is open elsewhere, or its
  ///   file cannot be read or created.
  public init<Locations: AsyncSequence & Sendable>(
    named name: String, locations: Locations, directory: URL? = nil,
    configuration: PlaceMonitor.Configuration = PlaceMonitor.Configuration()
  ) async throws where Locations.Element == Location {
    try await self.init(
      named: name, directory: directory, configuration: configuration, link: nil
    ) { monitor in
      Task.detached {
        var iterator = locations.makeAsyncIterator()
        do {
          while let location = try await iterator.next() {
            guard await monitor.process(location) else { return }
          }
          await monitor.locationsEnded(error: nil)
        } catch {
          await monitor.locationsEnded(error: error)
        }
      }
    }
  }

  /// Opens the store of `name` and keeps `startReading` for the first access to ``events``.
  init(
    named name: String, directory: URL?, configuration: PlaceMonitor.Configuration,
    link: BrokerConnection?, startReading: @escaping @Sendable (Monitor) -> Task<Void, Never>
  ) async throws {
    let store = try MonitorStore(
      name: name, directory: directory ?? MonitorStore.defaultDirectory())
    let saved = try store.load()
    self.name = name
    self.store = store
    self.link = link
    fileURL = store.fileURL
    cursor = saved?.cursor
    state =
      saved.map { MonitorState($0, configuration: configuration) }
      ?? MonitorState(configuration: configuration)
    (stream, continuation) = AsyncThrowingStream.makeStream(
      of: Event.self, throwing: (any Error).self, bufferingPolicy: .unbounded)
    self.startReading = startReading
    if saved == nil { try await MonitorWriter.shared.save(state.saved, in: store) }
  }

  // MARK: - Conditions

  /// The identifiers of the conditions, in the order they were first added.
  public var identifiers: [String] { state.identifiers }

  /// The record of the condition `identifier`: the condition and its last event; `nil` when no
  /// condition has that identifier.
  public func record(for identifier: String) -> Record? {
    state.record(for: identifier)
  }

  /// Adds a condition, or replaces the one with the same identifier (which keeps its place in
  /// ``identifiers``). The other conditions keep their states. Saved before this returns.
  ///
  /// - Parameters:
  ///   - condition: The circle.
  ///   - identifier: The name events and records carry.
  ///   - assumed: The state to start from; its record's last event until a fix changes it.
  ///     From `.unsatisfied`, entering gives `.satisfied`; from `.satisfied`, the device is
  ///     taken to be inside since the last accepted fix (or the next location, before any)
  ///     and leaving gives `.unsatisfied`; from `.unknown`, entering gives `.satisfied` and a
  ///     fix clearly beyond the exit radius gives `.unsatisfied`.
  ///
  /// A failure to save ends ``events`` with a ``MonitorError``. For a monitor held by waymarkd
  /// this returns once the daemon has stored the condition (or refused it: ``events`` then
  /// ends with ``MonitorError/daemon(_:)``).
  public func add(
    _ condition: CircularGeographicCondition, identifier: String,
    assuming assumed: Event.State = .unknown
  ) async {
    state.add(condition, identifier: identifier, assuming: assumed)
    guard await saveOrFinish() else { return }
    await tell(.add(condition, identifier: identifier, assumed: assumed))
  }

  /// Removes the condition `identifier`, without an event; nothing happens for an unknown
  /// identifier. Saved before this returns (and, for a monitor held by waymarkd, once the
  /// daemon answered).
  public func remove(_ identifier: String) async {
    if state.remove(identifier), await saveOrFinish() { await tell(.remove(identifier)) }
  }

  // MARK: - Events

  /// The events of every condition, in fix-time order, each once: `.satisfied` on entering,
  /// `.unsatisfied` on leaving (or when an `.unknown` condition is found outside).
  ///
  /// One sequence per monitor, as `CLMonitor`'s: every access returns the same one, and its
  /// events go to whoever iterates it. The first access starts reading the locations. The
  /// sequence ends after the locations end (and the monitor is saved) or on ``close()``; it
  /// throws the locations' error, or a ``MonitorError`` when the monitor cannot be saved.
  public var events: AsyncThrowingStream<Event, any Error> {
    if let start = startReading {
      startReading = nil
      reading = start(self)
    }
    return stream
  }

  /// Saves the monitor, stops reading the locations, ends ``events`` and releases the name, so
  /// that it can be opened again. Later calls do nothing.
  ///
  /// - Throws: ``MonitorError/unwritable(path:reason:)`` when the final save fails.
  public func close() async throws {
    reading?.cancel()
    heldReader?.cancel()
    startReading = nil
    link?.close()
    answerPending()
    defer { store.release() }
    guard !isFinished else { return }
    isFinished = true
    do {
      try await MonitorWriter.shared.save(saved, in: store)
    } catch {
      continuation.finish(throwing: error)
      throw error
    }
    continuation.finish()
  }

  // MARK: - Reading

  /// Runs one location through the conditions, saves if it caused events, then delivers them.
  /// Returns whether to go on.
  private func process(_ location: Location) async -> Bool {
    guard !isFinished else { return false }
    let events = state.process(location)
    guard !events.isEmpty else { return true }
    guard await saveOrFinish() else { return false }
    for event in events { continuation.yield(event) }
    return true
  }

  func locationsEnded(error: (any Error)?) async {
    guard !isFinished else { return }
    guard await saveOrFinish() else { return }
    // A close() while saving has ended the events already.
    guard !isFinished else { return }
    isFinished = true
    if let error { continuation.finish(throwing: error) } else { continuation.finish() }
  }

  /// Saves on ``MonitorWriter``'s thread (the actor waits without holding a thread of the
  /// pool); on failure ends ``events`` with the error. Returns whether it saved.
  @discardableResult
  func saveOrFinish() async -> Bool {
    do {
      try await MonitorWriter.shared.save(saved, in: store)
      return true
    } catch {
      if !isFinished {
        isFinished = true
        continuation.finish(throwing: error)
      }
      return false
    }
  }

  /// What the store saves: the state, and the cursor of a held monitor.
  private var saved: MonitorState.Saved {
    var saved = state.saved
    saved.cursor = cursor
    return saved
  }

  /// Records an event waymarkd decided for a held monitor: the condition's record, the cursor
  /// (saved), then the event to ``events``. Returns whether to go on.
  func deliverHeld(
    identifier: String, state newState: Event.State, date: Date, sequence: Int64
  ) async -> Bool {
    guard !isFinished else { return false }
    guard sequence > (cursor ?? 0) else { return true }  // Delivered already.
    cursor = sequence
    // An event of a condition removed here is acknowledged but not delivered: its record
    // is gone.
    let condition = state.record(for: identifier)?.condition
    let event = condition.map {
      Event(identifier: identifier, state: newState, date: date, condition: $0)
    }
    if let event { _ = state.apply(event) }
    guard await saveOrFinish() else { return false }
    if let event { continuation.yield(event) }
    return true
  }

  /// Ends ``events`` with `error` (the daemon refused or went away) and lets the changes
  /// waiting for an answer return.
  func finish(throwing error: MonitorError) {
    answerPending()
    guard !isFinished else { return }
    isFinished = true
    continuation.finish(throwing: error)
  }

  /// Lets every change waiting for the daemon's answer return.
  func answerPending() {
    let waiting = pendingAnswers
    pendingAnswers.removeAll()
    for answer in waiting { answer.resume() }
  }

  /// Sends a change to the daemon holding the monitor and waits for its answer; a failure
  /// ends ``events``.
  private func tell(_ change: HeldChange) async {
    guard let link, !isFinished else { return }
    guard send(change, on: link) else { return }
    await withCheckedContinuation { pendingAnswers.append($0) }
  }

  /// Sends `change`; on failure ends ``events`` and returns `false`.
  func send(_ change: HeldChange, on link: BrokerConnection) -> Bool {
    do {
      try link.send(change.request(monitor: name))
      return true
    } catch {
      finish(throwing: .daemon("\(error)"))
      return false
    }
  }
}
