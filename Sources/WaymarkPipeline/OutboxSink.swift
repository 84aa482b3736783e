import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkMQTT
import WaymarkStore

/// The MQTT outbox: an OwnTracks location message once `intervalSeconds` of fix time passed
/// since the last one, queued before the monitor sees the fix (the transitions it causes are
/// queued by the ``VisitTracker``, in their event's transaction); after each fix the publisher
/// is woken.
///
/// `waymarkd` queues each message at once and reports a failed write (`onWrite`); a replay
/// queues them in batches of `batchSize` and stops on a failed write.
public final class OutboxSink: PreMonitorSink {
  /// The broker, topic, tracker id and interval.
  public let settings: MQTTSettings
  private let database: Database
  private let batchSize: Int
  private let wake: () -> Void
  private let onWrite: ((String, (any Error)?) -> Void)?
  private var pending: [OutboxMessage] = []
  private var lastLocation: Date?
  /// Whether messages are queued (`false` once the publisher could not start).
  public var isEnabled = true
  /// Messages queued by this sink (locations, and what ``queue(_:)`` was given).
  public private(set) var queuedCount = 0

  /// A sink queuing into the outbox of `database`.
  ///
  /// - Parameters:
  ///   - batchSize: location messages written per transaction (1: each at once).
  ///   - wake: wakes the publisher after each fix.
  ///   - onWrite: told each write's outcome (`nil` error: written); `nil` to throw instead.
  public init(
    settings: MQTTSettings, database: Database, batchSize: Int = 1,
    wake: @escaping () -> Void = {}, onWrite: ((String, (any Error)?) -> Void)? = nil
  ) {
    self.settings = settings
    self.database = database
    self.batchSize = max(1, batchSize)
    self.wake = wake
    self.onWrite = onWrite
  }

  public func willMonitor(_ fix: Fix) throws {
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

  public func receive(_ step: PipelineStep) throws {
    if isEnabled { wake() }
  }

  public func finish(closed: [StayDetector.Event], open: Stay?) throws {
    try flush()
  }

  /// Queues `messages` (after the locations waiting for their batch) and wakes the publisher.
  ///
  /// - Throws: ``StoreError`` when the outbox cannot be written and there is no `onWrite`.
  public func queue(_ messages: [OutboxMessage]) throws {
    guard isEnabled else { return }
    pending += messages
    try flush()
    wake()
  }

  /// Writes the messages waiting for their batch.
  ///
  /// - Throws: ``StoreError`` when the outbox cannot be written and there is no `onWrite`.
  public func flush() throws {
    guard !pending.isEmpty else { return }
    let messages = pending
    pending.removeAll()
    do {
      try database.write {
        try OutboxRepository($0).enqueue(
          messages, now: Date(), maximum: settings.outboxMaximum)
      }
      queuedCount += messages.count
      onWrite?("an MQTT message", nil)
    } catch {
      guard let onWrite else { throw error }
      onWrite("an MQTT message", error)
    }
  }
}
