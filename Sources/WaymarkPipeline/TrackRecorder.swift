import FoundationEssentials
import Waymark
import WaymarkCore
import WaymarkStore

/// Records the track, as `gpxlogger` does but into the store: fixes thinned by
/// ``TrackThinner`` and written in batches. Used by `waymarkd` and `waymark replay --store`.
///
/// **Batches.** Kept points wait in memory and are written in one transaction (one fsync) when
/// ``Settings/batchPoints`` of them wait, or when a fix comes ``Settings/batchSeconds`` of fix
/// time after the first waiting point, whichever is first; and on ``flush()`` (the daemon's
/// periodic save and its stop). So a crash loses at most the waiting points, never a committed
/// one. A failed write keeps the points for the next attempt, a batch later (so a failing disk
/// costs one attempt per batch, not one per fix), up to ten batches (beyond that the oldest
/// are dropped and counted in ``dropped``).
///
/// **Retention.** With ``Settings/retentionDays`` above 0, the points older than that many days
/// before the latest point are deleted, in the transaction of a batch: the first batch, then
/// one batch per hour of fix time. The cut-off is fix time (a replay keeps its log's time);
/// with a `now` (the daemon's wall clock), it is counted back from the earlier of the latest
/// point and now, so a point dated ahead of the clock cannot delete the history.
///
/// Not thread-safe, and its writes block on the disk: one caller, on a thread of its own (the
/// daemon's main loop, after the fix's place events are committed; the replay's reading task).
package final class TrackRecorder {
  /// How the track is thinned, batched and kept.
  package typealias Settings = TrackRecordingSettings

  /// Seconds of fix time between two retention passes.
  package static let retentionIntervalSeconds: Double = 3600

  /// The settings in force.
  package private(set) var settings: Settings
  private let database: Database
  private var thinner: TrackThinner
  private var pending: [TrackPoint] = []
  /// A batch is due at this many waiting points, or at a fix at or after `dueTime`.
  private var dueCount: Int
  private var dueTime: Date?
  private var nextRetention: Date?
  /// Points kept by the rule so far.
  package private(set) var kept = 0
  /// Points written that were not in the store yet.
  package private(set) var inserted = 0
  /// Points deleted by retention.
  package private(set) var deleted = 0
  /// Points dropped after failed writes.
  package private(set) var dropped = 0
  private let now: (@Sendable () -> Date)?
  /// The device whose track this is (``StoreDevice``).
  package let device: String

  /// Creates a recorder that continues the track of `device` stored in `database`.
  ///
  /// - Parameters:
  ///   - device: the device whose track is written (and whose old points retention deletes).
  ///   - now: the wall clock that bounds retention's reference time (the daemon's); `nil`: fix
  ///     time alone (a replay).
  /// - Throws: ``StoreError`` when the store cannot be read.
  package init(
    database: Database, settings: Settings = Settings(), device: String = StoreDevice.local,
    now: (@Sendable () -> Date)? = nil
  ) throws {
    self.database = database
    self.device = device
    self.settings = settings
    self.now = now
    dueCount = settings.batchPoints
    let last = try database.read { try TrackRepository($0, device: device).last() }
    thinner = TrackThinner(rule: settings.rule, resumingAfter: last)
  }

  /// Points waiting for their batch.
  package var pendingCount: Int { pending.count }

  /// Feeds one fix: keeps it or not by the rule, and writes the waiting points when a batch is
  /// due.
  ///
  /// - Returns: whether the fix was kept.
  /// - Throws: ``StoreError`` when a due batch cannot be written (its points keep waiting).
  @discardableResult
  package func record(_ fix: Fix) throws -> Bool {
    let point = thinner.process(fix)
    if let point {
      if pending.isEmpty { dueTime = point.timestamp.addingTimeInterval(settings.batchSeconds) }
      pending.append(point)
      kept += 1
    }
    guard !pending.isEmpty else { return point != nil }
    let timeIsUp = fix.time.flatMap { time in dueTime.map { time >= $0 } } ?? false
    if pending.count >= dueCount || timeIsUp { try flush() }
    return point != nil
  }

  /// Writes the waiting points in one transaction (with the retention pass when one is due).
  ///
  /// - Throws: ``StoreError``; the points keep waiting (up to ten batches).
  package func flush() throws {
    guard let latest = pending.map(\.timestamp).max() else { return }
    var cutoff: Date?
    if settings.retentionDays > 0, nextRetention.map({ latest >= $0 }) ?? true {
      let reference = now.map { min(latest, $0()) } ?? latest
      cutoff = reference.addingTimeInterval(-Double(settings.retentionDays) * 86_400)
    }
    let batch = pending
    do {
      let (added, removed) = try database.write { connection in
        let track = TrackRepository(connection, device: device)
        return (try track.insert(batch), try cutoff.map { try track.delete(before: $0) } ?? 0)
      }
      inserted += added
      deleted += removed
      pending.removeAll(keepingCapacity: true)
      (dueCount, dueTime) = (settings.batchPoints, nil)
      if cutoff != nil { nextRetention = latest.addingTimeInterval(Self.retentionIntervalSeconds) }
    } catch {
      let limit = max(1, settings.batchPoints) * 10
      if pending.count > limit {
        dropped += pending.count - limit
        pending.removeFirst(pending.count - limit)
      }
      dueCount = pending.count + settings.batchPoints
      dueTime = latest.addingTimeInterval(settings.batchSeconds)
      throw error
    }
  }

  /// Applies new settings (a reload); the track goes on from where it is.
  package func update(_ settings: Settings) {
    self.settings = settings
    thinner.rule = settings.rule
    dueCount = min(dueCount, settings.batchPoints)
  }
}
