import Foundation
import Waymark

/// CoreLocation's `CLMonitor`: conditions on the device's location, kept under a name, and
/// their events with CoreLocation 18's diagnoses; over Waymark's `Monitor`.
///
/// ```swift
/// let monitor = await CLMonitor("trips")
/// await monitor.add(
///   CLMonitor.CircularGeographicCondition(center: home, radius: 100), identifier: "home")
/// for try await event in await monitor.events {
///   switch event.state {
///   case .satisfied: print("arrived")
///   case .unsatisfied: print("left")
///   case .unknown, .unmonitored: break
///   }
/// }
/// ```
///
/// Circles are served by Waymark's `Monitor` (detection, persistence under the name, resumed by
/// the next run). A condition Linux cannot serve (``BeaconIdentityCondition``) is accepted and
/// reported at once: an event of state `.unmonitored` with ``Event/conditionUnsupported``. When
/// the name cannot be opened (another run holds it, Waymark refuses it, its file cannot be read
/// or written) the initializer does not fail, as CoreLocation's cannot: each condition added is
/// reported with an `.unmonitored` event with ``Event/persistenceUnavailable``, and nothing is
/// monitored; the events end when the live updates do. ``openError`` says why.
///
/// The diagnoses come from the live updates the monitor follows (the same source as
/// ``CLLocationUpdate/liveUpdates(_:)``): every event carries the current ones, and when they
/// change each condition gets an event with its current state and the new diagnoses.
public actor CLMonitor {
  /// The monitor's name.
  public nonisolated let name: String
  /// Why the monitor could not be opened under its name; `nil` when it is open.
  public nonisolated let openError: MonitorError?

  private let monitor: Monitor?
  private let source: LiveSource
  private let locationFeed: AsyncStream<Location>.Continuation
  /// Conditions the Waymark monitor does not hold (beacons; every one when it is not open).
  private var unserved: [String: Record] = [:]
  private var unservedOrder: [String] = []
  private var diagnosis: Diagnosis
  private let stream: AsyncThrowingStream<Event, any Error>
  private let continuation: AsyncThrowingStream<Event, any Error>.Continuation
  private var tasks: [Task<Void, Never>] = []
  private var started = false

  /// CoreLocation's `await CLMonitor(name)`: the monitor `name` over live locations (waymarkd,
  /// else gpsd; `WAYMARK_SIMULATED_LOG` replays a log), saved under
  /// `$XDG_STATE_HOME/waymark/monitors`. Never fails: see ``openError``.
  public init(_ name: String) async {
    await self.init(name, source: .automatic)
  }

  /// The monitor `name` over the live locations of `source`, saved in `directory`.
  ///
  /// - Parameters:
  ///   - name: the monitor's name (Waymark's `Monitor(named:)` rules).
  ///   - source: where locations come from.
  ///   - directory: where monitors are saved (default: `monitors` in the state directory).
  public init(_ name: String, source: LiveSource, directory: URL? = nil) async {
    self.name = name
    self.source = source
    let (locations, feed) = AsyncStream.makeStream(of: Location.self)
    locationFeed = feed
    var opened: Monitor?
    var failure: MonitorError?
    do {
      opened = try await Monitor(named: name, locations: locations, directory: directory)
    } catch let error as MonitorError {
      failure = error
    } catch {
      failure = .unwritable(path: name, reason: "\(error)")
    }
    monitor = opened
    openError = failure
    diagnosis = Diagnosis(persistenceUnavailable: opened == nil)
    (stream, continuation) = AsyncThrowingStream.makeStream(
      of: Event.self, throwing: (any Error).self, bufferingPolicy: .unbounded)
  }

  deinit {
    for task in tasks { task.cancel() }
    locationFeed.finish()
  }

  /// CoreLocation's `Events`: the sequence of ``events``.
  public typealias Events = AsyncThrowingStream<Event, any Error>

  /// The identifiers of the conditions, in the order they were added.
  public var identifiers: [String] {
    get async { (await monitor?.identifiers ?? []) + unservedOrder }
  }

  /// The record of `identifier`: its condition and last event; `nil` when there is none.
  public func record(for identifier: String) async -> Record? {
    if let record = unserved[identifier] { return record }
    guard let record = await monitor?.record(for: identifier) else { return nil }
    return Record(
      condition: record.condition,
      lastEvent: Event(
        identifier: identifier, state: Event.State(record.lastEvent.state),
        date: record.lastEvent.date, diagnosis: diagnosis))
  }

  /// Adds `condition` under `identifier` (replacing one of the same identifier), assuming
  /// `state` until a location decides (`.unmonitored` is taken as `.unknown`).
  ///
  /// - Parameters:
  ///   - condition: a ``CircularGeographicCondition`` (monitored) or another condition
  ///     (reported unsupported at once).
  ///   - identifier: the name its events and record carry.
  ///   - state: the state to start from.
  public func add(
    _ condition: some CLCondition, identifier: String, assuming state: Event.State = .unknown
  ) async {
    let circle = condition as? CircularGeographicCondition
    if let circle, let monitor {
      dropUnserved(identifier)
      await monitor.add(circle, identifier: identifier, assuming: state.waymarkState ?? .unknown)
      return
    }
    await monitor?.remove(identifier)
    let event = Event(
      identifier: identifier, state: .unmonitored, date: Date(), diagnosis: diagnosis,
      conditionUnsupported: circle == nil)
    if unserved[identifier] == nil { unservedOrder.append(identifier) }
    unserved[identifier] = Record(condition: condition, lastEvent: event)
    continuation.yield(event)
  }

  /// Removes the condition `identifier`, without an event.
  public func remove(_ identifier: String) async {
    dropUnserved(identifier)
    await monitor?.remove(identifier)
  }

  /// The events of every condition, in order. The first access starts following the live
  /// locations; the sequence ends when they end (a log at its end).
  public var events: Events {
    get async {
      guard !started else { return stream }
      started = true
      let source = source
      let feed = locationFeed
      guard let monitor else {
        // Nothing is monitored; the diagnoses still follow the updates, and the events end
        // with them, as a monitor's do.
        tasks.append(
          Task { [weak self] in
            do {
              for try await update in LocationUpdate.liveUpdates(.default, source: source) {
                await self?.diagnose(update)
              }
            } catch {
              // The daemon could not be reached.
            }
            await self?.finish(throwing: nil)
          })
        return stream
      }
      let waymarkEvents = await monitor.events
      tasks.append(
        Task { [weak self] in
          do {
            for try await update in LocationUpdate.liveUpdates(.default, source: source) {
              if let location = update.location { feed.yield(location) }
              await self?.diagnose(update)
            }
          } catch {
            // The daemon could not be reached: the monitor's locations end.
          }
          feed.finish()
        })
      tasks.append(
        Task { [weak self] in
          do {
            for try await event in waymarkEvents { await self?.forward(event) }
            await self?.finish(throwing: nil)
          } catch {
            await self?.finish(throwing: error)
          }
        })
      return stream
    }
  }

  private func dropUnserved(_ identifier: String) {
    guard unserved.removeValue(forKey: identifier) != nil else { return }
    unservedOrder.removeAll { $0 == identifier }
  }

  private func forward(_ event: Monitor.Event) {
    continuation.yield(
      Event(
        identifier: event.identifier, state: Event.State(event.state), date: event.date,
        diagnosis: diagnosis))
  }

  /// Takes the diagnoses of `update`; when they changed, every condition gets an event with
  /// its current state.
  private func diagnose(_ update: LocationUpdate) async {
    let next = Diagnosis(update, persistenceUnavailable: monitor == nil)
    guard next != diagnosis else { return }
    diagnosis = next
    for identifier in await identifiers {
      guard let record = await record(for: identifier) else { continue }
      continuation.yield(
        Event(
          identifier: identifier, state: record.lastEvent.state, date: Date(),
          diagnosis: next, conditionUnsupported: record.lastEvent.conditionUnsupported))
    }
  }

  private func finish(throwing error: (any Error)?) {
    if let error { continuation.finish(throwing: error) } else { continuation.finish() }
  }
}

extension CLMonitor {
  /// CoreLocation's `CLMonitor.CircularGeographicCondition`: Waymark's circle (`center`,
  /// `radius` in metres, and Waymark's detection options).
  public typealias CircularGeographicCondition = Monitor.CircularGeographicCondition
}
