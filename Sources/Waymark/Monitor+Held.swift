import FoundationEssentials
import WaymarkClient
import WaymarkCore

extension Monitor {
  /// Opens or creates the monitor `name` **held by waymarkd**: the daemon evaluates its
  /// conditions on every fix, also while this program is not running, and keeps their events
  /// until the program reads them (CoreLocation's "the system keeps monitoring").
  ///
  /// ```swift
  /// let monitor = try await Monitor(named: "trips", heldByDaemonAt: BrokerConnection.defaultPath)
  /// for try await event in await monitor.events { … }   // first the events missed, in order
  /// ```
  ///
  /// The program needs waymarkd's `always` grant with full accuracy (its client id,
  /// `<user>:<exe>`); the daemon keys the monitor by the connecting uid, that client id and
  /// `name`, so another user's program, or another program, never sees it.
  /// ``add(_:identifier:assuming:)`` and ``remove(_:)`` go to the daemon (an identical circle
  /// added again keeps its state there). ``events`` yields the events the daemon stored since
  /// the last one this monitor delivered, in order, each once, then the live ones;
  /// ``record(for:)`` follows them. The monitor's file (see
  /// ``init(named:locations:directory:configuration:)``) keeps the conditions, the records
  /// and the sequence number of the last event delivered (the cursor), saved before each event
  /// is delivered: an event is delivered once even when this program or the daemon stops
  /// between two runs. The daemon keeps at most 1,000 events per monitor; when more happened
  /// while the program was away, the oldest are lost and ``lostEventCount`` says how many.
  ///
  /// - Parameters:
  ///   - name: The monitor's name: as for an in-process monitor, and at most 64 bytes.
  ///   - socketPath: waymarkd's location socket (`BrokerConnection.defaultPath` for the
  ///     system's).
  ///   - directory: Where the monitor's file is saved (default: `monitors` in the state
  ///     directory).
  /// - Throws: ``MonitorError``: the name is refused or in use, its file unusable, or the
  ///   daemon unreachable (``MonitorError/daemon(_:)``). A refusal by the daemon (no `always`
  ///   grant) ends ``events`` with ``MonitorError/daemon(_:)``.
  public init(named name: String, heldByDaemonAt socketPath: String, directory: URL? = nil)
    async throws
  {
    guard name.utf8.count <= 64 else {
      throw MonitorError.invalidName(name, reason: "a held monitor's name has at most 64 bytes")
    }
    let connection: BrokerConnection
    do {
      connection = try BrokerConnection(path: socketPath)
    } catch {
      throw MonitorError.daemon("\(error)")
    }
    try await self.init(
      named: name, directory: directory, configuration: PlaceMonitor.Configuration(),
      link: connection
    ) { monitor in
      Task { await monitor.requestHeldEvents() }
    }
    let messages = connection.messages()
    let reader = Task.detached { [weak self] in
      for await message in messages {
        guard let monitor = self, await monitor.receiveHeld(message) else { return }
      }
      await self?.finish(throwing: .daemon("the connection to waymarkd closed"))
    }
    heldReader = reader
  }

  /// Asks the daemon for the events after the cursor (the first access to ``events``).
  func requestHeldEvents() {
    guard let link else { return }
    _ = send(.events(after: cursor ?? 0), on: link)
  }

  /// Handles one line of the daemon; returns whether to go on reading.
  func receiveHeld(_ message: BrokerMessage) async -> Bool {
    guard let link else { return false }
    switch DaemonMessage.parse(message) {
    case .success(.authorization(let authorization)):
      let state = authorization.state
      guard state.status == .authorizedAlways, state.accuracy == .full else {
        finish(
          throwing: .daemon(
            "not authorized (\(state.status.rawValue), \(state.accuracy.rawValue)): a held "
              + "monitor needs always with full accuracy"))
        return false
      }
    case .success(.heldMonitorEvent(let event)) where event.name == name:
      guard
        await deliverHeld(
          identifier: event.identifier, state: event.isSatisfied ? .satisfied : .unsatisfied,
          date: event.date, sequence: Int64(event.sequence))
      else { return false }
      if caughtUp { _ = send(.acknowledge(through: Int64(event.sequence)), on: link) }
    case .success(.heldMonitor(let answer)) where answer.name == name:
      guard answer.operation == "events" else {
        // The answer to the oldest change sent.
        if !pendingAnswers.isEmpty { pendingAnswers.removeFirst().resume() }
        break
      }
      lostEventCount += answer.lost ?? 0
      // A cursor at or past the daemon's next number comes from another store (wiped or
      // replaced): start again from the daemon's numbering, or its events would be skipped.
      if let next = answer.next, let known = cursor, known >= Int64(next) {
        cursor = Int64(next) - 1
        guard await saveOrFinish() else { return false }
      }
      if answer.more == true {
        _ = send(.events(after: cursor ?? 0), on: link)
      } else {
        caughtUp = true
        if let cursor, cursor > 0 { _ = send(.acknowledge(through: cursor), on: link) }
      }
    case .success(.error(let text)):
      finish(throwing: .daemon(text))
      return false
    default:
      break
    }
    return !isFinished
  }
}

/// A line a held ``Monitor`` sends to waymarkd (`MONITOR`, protocol 1.3).
enum HeldChange {
  case add(Monitor.CircularGeographicCondition, identifier: String, assumed: Monitor.Event.State)
  case remove(String)
  case events(after: Int64)
  case acknowledge(through: Int64)

  /// The request for the monitor `name`.
  func request(monitor name: String) -> DaemonRequest {
    switch self {
    case .add(let circle, let identifier, let assumed):
      let condition = DaemonRequest.MonitorCondition(
        identifier: identifier, latitude: circle.center.latitude,
        longitude: circle.center.longitude, radiusMeters: circle.radius,
        exitRadiusMeters: circle.exitRadius, confirmations: circle.confirmations,
        dwellSeconds: circle.dwellSeconds, group: circle.group,
        overlap: circle.overlap?.rawValue, assume: assumed.rawValue)
      return .monitor(name: name, .add([condition]))
    case .remove(let identifier):
      return .monitor(name: name, .remove([identifier]))
    case .events(let cursor):
      return .monitor(name: name, .events(after: Int(cursor)))
    case .acknowledge(let sequence):
      return .monitor(name: name, .acknowledge(through: Int(sequence)))
    }
  }
}
