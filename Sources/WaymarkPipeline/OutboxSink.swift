import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkMQTT
import WaymarkStore

/// The MQTT outbox, every message the pipeline sends: an OwnTracks location message once
/// `intervalSeconds` of fix time passed since the last one, queued before the monitor sees the
/// fix; the transitions that fix causes (``transitionMessages(for:)``), which the pipeline's
/// ``VisitTracker`` writes in their event's own transaction (a crash keeps both or neither);
/// after each fix the publisher is woken.
///
/// With Home Assistant's discovery on (`MQTTSettings.publishesHomeAssistant`) it also queues
/// the retained state the entities read (`HomeAssistant.state(_:position:place:staySince:)`):
/// at the same interval as the locations, and at once when the declared place the device is in,
/// its stay, or whether it has a position changes. A waiting state is replaced by the next, so
/// an outage leaves one state to send, the newest.
///
/// `waymarkd` queues each message at once and reports a failed write (to its context's
/// ``PipelineContext/writes``); a replay queues them in batches of `batchSize` and stops on a
/// failed write.
package final class OutboxSink: PreMonitorSink {
  /// The broker, topic, tracker id and interval.
  package let settings: MQTTSettings
  private let database: Database
  private let batchSize: Int
  private let wake: () -> Void
  private let context: PipelineContext
  private var pending: [OutboxMessage] = []
  private var lastLocation: Date?
  /// Home Assistant's discovery, when on.
  private let homeAssistant: HomeAssistant?
  /// What its state says: the declared places the device is in (id, name; the newest last),
  /// the open stay's arrival, the last fix with a position, when the last state was queued
  /// (fix time), and whether that state had a position.
  private var insidePlaces: [(id: String, name: String)] = []
  private var staySince: Date?
  private var lastPosition: Fix?
  private var lastState: Date?
  private var lastStateHadPosition = false
  /// Creation times of the places by id (OwnTracks' `wtst` in a transition).
  package var placeCreated: [String: Date]
  /// Whether messages are queued (`false` once the publisher could not start).
  package var isEnabled = true
  /// Messages queued by this sink (locations, and what ``queue(_:)`` was given).
  package private(set) var queuedCount = 0

  /// A sink queuing into the outbox of `database`.
  ///
  /// - Parameters:
  ///   - batchSize: location messages written per transaction (1: each at once).
  ///   - wake: wakes the publisher after each fix.
  ///   - placeCreated: creation times of the places by id (OwnTracks' `wtst`).
  ///   - context: dates the queued messages (the outbox's age limit) and takes each write's
  ///     outcome (without ``PipelineContext/writes``, a failed write is thrown).
  package init(
    settings: MQTTSettings, database: Database, batchSize: Int = 1,
    wake: @escaping () -> Void = {}, placeCreated: [String: Date] = [:],
    context: PipelineContext
  ) {
    self.placeCreated = placeCreated
    self.settings = settings
    self.database = database
    self.batchSize = max(1, batchSize)
    self.wake = wake
    self.context = context
    homeAssistant = settings.publishesHomeAssistant ? settings.homeAssistant : nil
  }

  /// Where a restarted daemon resumes: the declared places with an open visit (id, name) and
  /// the open stay's arrival, for Home Assistant's state.
  package func resume(places: [(id: String, name: String)], staySince: Date?) {
    insidePlaces = places
    self.staySince = staySince
  }

  /// The messages that report `event`: its OwnTracks transition. The ``VisitTracker`` asks for
  /// them (``WaymarkPipeline`` hands it this function) and writes them in the event's own
  /// transaction, so the event and its message are committed together or not at all.
  package func transitionMessages(for event: PlaceEvent) -> [OutboxMessage] {
    [
      OwnTracks.transitionMessage(
        event, placeCreated: placeCreated[event.placeID], settings: settings)
    ]
  }

  package func willMonitor(_ fix: Fix) throws {
    guard isEnabled, let time = fix.time else { return }
    if let last = lastLocation, time.timeIntervalSince(last) < settings.intervalSeconds {
      return
    }
    guard let payload = OwnTracks.location(fix, tid: settings.tid) else { return }
    lastLocation = time
    pending.append(
      OutboxMessage(kind: .location, topic: settings.topic, payload: payload, qos: settings.qos))
    if pending.count >= batchSize { try flush() }
  }

  package func receive(_ step: PipelineStep) throws {
    guard isEnabled else { return }
    if homeAssistant != nil { try queueState(after: step) }
    wake()
  }

  /// Queues Home Assistant's state after `step` when it changed or the interval passed.
  private func queueState(after step: PipelineStep) throws {
    guard let homeAssistant, let time = step.fix.time else { return }
    var changed = false
    let placeBefore = insidePlaces.last?.name
    for outcome in step.places {
      switch outcome.event {
      case .arrival(let arrival):
        insidePlaces.removeAll { $0.id == arrival.placeID }
        insidePlaces.append((arrival.placeID, arrival.placeName))
      case .departure(let departure):
        insidePlaces.removeAll { $0.id == departure.placeID }
      }
      changed = true
    }
    for event in step.stays {
      switch event {
      case .arrival(let stay): staySince = stay.arrivalDate
      case .departure: staySince = nil
      }
      changed = true
    }
    let hasPosition = step.fix.isUsable && step.fix.coordinate != nil
    if hasPosition { lastPosition = step.fix }
    changed = changed || hasPosition != lastStateHadPosition
    if !changed, let last = lastState, time.timeIntervalSince(last) < settings.intervalSeconds {
      return
    }
    guard
      let payload = HomeAssistant.state(
        step.fix, position: lastPosition, place: insidePlaces.last?.name, staySince: staySince)
    else { return }
    let place = insidePlaces.last?.name
    if lastState == nil || place != placeBefore {
      pending.append(homeAssistant.location(place: place))
    }
    lastState = time
    lastStateHadPosition = hasPosition
    pending.append(
      OutboxMessage(
        kind: .homeAssistant, topic: homeAssistant.stateTopic, payload: payload,
        qos: homeAssistant.qos, retain: true))
    if pending.count >= batchSize { try flush() }
  }

  /// Writes the messages waiting for their batch.
  package func checkpoint() -> [WaymarkPipeline.Failure] {
    guard !pending.isEmpty else { return [] }
    let error = writePending()
    try? context.noteWrite("an MQTT message", error)
    return error.map { [WaymarkPipeline.Failure(part: "an MQTT message", error: $0)] } ?? []
  }

  /// Queues `messages` (after the locations waiting for their batch) and wakes the publisher.
  ///
  /// - Throws: ``StoreError`` when the outbox cannot be written and the context has no
  ///   ``PipelineContext/writes`` to report it to.
  package func queue(_ messages: [OutboxMessage]) throws {
    guard isEnabled else { return }
    pending += messages
    try flush()
    wake()
  }

  /// Writes the messages waiting for their batch.
  ///
  /// - Throws: ``StoreError`` when the outbox cannot be written and the context has no
  ///   ``PipelineContext/writes`` to report it to.
  package func flush() throws {
    guard !pending.isEmpty else { return }
    try context.noteWrite("an MQTT message", writePending())
  }

  /// Writes the messages waiting for their batch (they are dropped when the write fails).
  ///
  /// - Returns: why the write failed, `nil` when it succeeded or there was nothing to write.
  private func writePending() -> (any Error)? {
    guard !pending.isEmpty else { return nil }
    let messages = pending
    pending.removeAll()
    do {
      try database.write {
        try OutboxRepository($0).enqueue(
          messages, now: context.time.date(), maximum: settings.outboxMaximum)
      }
      queuedCount += messages.count
      return nil
    } catch {
      return error
    }
  }
}
