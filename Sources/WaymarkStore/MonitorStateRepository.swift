import FoundationEssentials
import WaymarkCore

/// What the place monitor needs to resume after a restart: an opaque snapshot per place and the
/// last fix seen.
///
/// The snapshot's format belongs to the monitor; the store keeps it as text. Both are kept per
/// device: a repository reads and writes one device's (``StoreDevice``).
public struct MonitorStateRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection
  /// The device whose state this repository reads and writes.
  public let device: String

  /// Wraps the connection of a transaction, for the state of `device` (default
  /// ``StoreDevice/local``).
  public init(_ connection: Connection, device: String = StoreDevice.local) {
    self.connection = connection
    self.device = device
  }

  /// One place's saved monitor state.
  public struct Entry: Sendable, Hashable {
    /// The monitor's serialized state for the place.
    public var snapshot: String
    /// Time of the last fix the state reflects.
    public var lastFixTime: Date?

    /// Creates an entry.
    public init(snapshot: String, lastFixTime: Date?) {
      self.snapshot = snapshot
      self.lastFixTime = lastFixTime
    }
  }

  /// The last fix recorded, for commands such as `waymark stamp`.
  public struct LastFix: Sendable, Hashable {
    /// Fix time.
    public var time: Date
    /// Position.
    public var coordinate: Coordinate
    /// Horizontal accuracy, metres, when known.
    public var horizontalAccuracyMeters: Double?
    /// Where the fix came from.
    public var source: String?

    /// Creates a last-fix record.
    public init(
      time: Date, coordinate: Coordinate, horizontalAccuracyMeters: Double?, source: String?
    ) {
      self.time = time
      self.coordinate = coordinate
      self.horizontalAccuracyMeters = horizontalAccuracyMeters
      self.source = source
    }
  }

  /// Saves (replaces) the state of `placeID`. Nothing is saved for a place that is not in the
  /// store (removed while a monitor still had it): its state went with it.
  public func save(placeID: String, _ entry: Entry) throws {
    try connection.execute(
      """
      INSERT INTO monitor_state (device, place_id, snapshot, last_fix_time)
      SELECT ?4, ?1, ?2, ?3 WHERE EXISTS (SELECT 1 FROM place WHERE id = ?1)
      ON CONFLICT (device, place_id) DO UPDATE SET snapshot = excluded.snapshot,
        last_fix_time = excluded.last_fix_time
      """,
      [
        .text(placeID), .text(entry.snapshot), StoreTime.value(entry.lastFixTime),
        .text(device),
      ])
  }

  /// Every saved state of the device, by place id.
  public func all() throws -> [String: Entry] {
    var entries: [String: Entry] = [:]
    try connection.query(
      "SELECT place_id, snapshot, last_fix_time FROM monitor_state WHERE device = ?",
      [.text(device)]
    ) {
      entries[$0.text(0)] = Entry(
        snapshot: $0.text(1), lastFixTime: $0.optionalInt64(2).map(StoreTime.date))
    }
    return entries
  }

  /// Forgets the device's monitor state.
  public func removeAll() throws {
    try connection.execute("DELETE FROM monitor_state WHERE device = ?", [.text(device)])
  }

  /// Saves the device's last fix, replacing the previous one only when `fix` is not older.
  public func saveLastFix(_ fix: LastFix) throws {
    try connection.execute(
      """
      INSERT INTO last_fix (device, time, latitude, longitude, accuracy, source)
      VALUES (?, ?, ?, ?, ?, ?)
      ON CONFLICT (device) DO UPDATE SET time = excluded.time, latitude = excluded.latitude,
        longitude = excluded.longitude, accuracy = excluded.accuracy, source = excluded.source
      WHERE excluded.time >= last_fix.time
      """,
      [
        .text(device), StoreTime.value(fix.time), .real(fix.coordinate.latitude),
        .real(fix.coordinate.longitude),
        .real(fix.horizontalAccuracyMeters), .text(fix.source),
      ])
  }

  /// The device's last fix recorded, or `nil`.
  public func lastFix() throws -> LastFix? {
    try connection.queryFirst(
      "SELECT time, latitude, longitude, accuracy, source FROM last_fix WHERE device = ?",
      [.text(device)]
    ) {
      LastFix(
        time: StoreTime.date($0.int64(0)),
        coordinate: Coordinate(latitude: $0.double(1), longitude: $0.double(2)),
        horizontalAccuracyMeters: $0.optionalDouble(3), source: $0.optionalText(4))
    }
  }
}
