import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkStore
import WaymarkTraccar

/// The Traccar outbox: an OsmAnd location (``OsmAnd``'s query) for the server, written to the
/// store's outbox at once (kind `osmand`), then the sender is woken.
///
/// A location goes when `intervalSeconds` of fix time passed since the last one and the device
/// moved `distanceMeters` or more from it; a device that stays within that distance sends its
/// newest fix as a heartbeat every `heartbeatSeconds`. Fix times decide, never the clock.
package final class TraccarSink: PipelineSink {
  /// The server, the device id and the rates.
  package let settings: TraccarSettings
  private let database: Database
  private let wake: () -> Void
  private let context: PipelineContext
  private var last: (time: Date, coordinate: Coordinate)?
  /// Locations queued by this sink.
  package private(set) var queuedCount = 0

  /// A sink queuing into the outbox of `database`.
  ///
  /// - Parameters:
  ///   - wake: wakes the sender after a location is queued.
  ///   - context: takes each write's outcome.
  package init(
    settings: TraccarSettings, database: Database, wake: @escaping () -> Void,
    context: PipelineContext
  ) {
    self.settings = settings
    self.database = database
    self.wake = wake
    self.context = context
  }

  /// Queues the step's fix when it is due.
  ///
  /// - Throws: ``StoreError`` when the outbox cannot be written and the context has no
  ///   ``PipelineContext/writes`` to report it to.
  package func receive(_ step: PipelineStep) throws {
    let fix = step.fix
    guard let time = fix.time, let coordinate = fix.coordinate, fix.isUsable else { return }
    if let last {
      let elapsed = time.timeIntervalSince(last.time)
      let moved = coordinate.distance(to: last.coordinate) >= settings.distanceMeters
      let due = moved ? elapsed >= settings.intervalSeconds : elapsed >= settings.heartbeatSeconds
      guard due else { return }
    }
    guard let query = OsmAnd.query(fix, deviceID: settings.deviceID) else { return }
    last = (time, coordinate)
    var failure: (any Error)?
    do {
      try database.write {
        try OutboxRepository($0).enqueue(
          [OutboxMessage(kind: .osmand, topic: "", payload: query, qos: 1)], now: time,
          maximum: settings.outboxMaximum)
      }
      queuedCount += 1
    } catch {
      failure = error
    }
    try context.noteWrite("a Traccar location", failure)
    wake()
  }
}
