import CSQLite
import FoundationEssentials
import WaymarkCore

/// The recorded track of one device (``StoreDevice``): points in time order, unique on their
/// time (to the millisecond) among the device's.
///
/// Recording the same point again (a replay of an already recorded log) changes nothing: the
/// stored one is kept. Which fixes become points is `TrackThinner`'s decision (module
/// `Waymark`); this type only stores them.
public struct TrackRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection
  /// The device whose track this repository reads and writes.
  public let device: String

  /// Wraps the connection of a transaction, for the track of `device` (default
  /// ``StoreDevice/local``).
  public init(_ connection: Connection, device: String = StoreDevice.local) {
    self.connection = connection
    self.device = device
  }

  private static let insertSQL = """
    INSERT INTO track_point (time, segment, latitude, longitude, altitude, speed, course,
      accuracy, device) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (device, time) DO NOTHING
    """

  /// Inserts `points`, skipping each one whose time (in whole milliseconds) is already stored.
  ///
  /// One prepared statement is stepped per point; the enclosing ``Database/write(durability:_:)`` makes the
  /// batch one transaction.
  ///
  /// - Returns: how many points were inserted.
  /// - Throws: ``StoreError`` (a coordinate out of range breaks a `CHECK`).
  @discardableResult
  public func insert(_ points: some Sequence<TrackPoint>) throws -> Int {
    let statement = try connection.statement(Self.insertSQL)
    defer { statement.reset() }
    var inserted = 0
    for point in points {
      try statement.bind([
        .integer(Timestamp.milliseconds(point.timestamp)), .integer(Int64(point.segment)),
        .real(point.coordinate.latitude), .real(point.coordinate.longitude),
        .real(point.altitude), .real(point.speed), .real(point.course),
        .real(point.horizontalAccuracy), .text(device),
      ])
      while try statement.step() {}
      inserted += Int(sqlite3_changes(connection.handle))
    }
    return inserted
  }

  private static let columns =
    "time, segment, latitude, longitude, altitude, speed, course, accuracy"

  /// The latest point, or `nil` when the track is empty.
  public func last() throws -> TrackPoint? {
    try connection.queryFirst(
      "SELECT \(Self.columns) FROM track_point WHERE device = ? ORDER BY time DESC LIMIT 1",
      [.text(device)], Self.point)
  }

  /// Calls `body` with each point from `since` (inclusive) to `until` (exclusive), in time order.
  public func enumerate(
    since: Date? = nil, until: Date? = nil, _ body: (TrackPoint) throws -> Void
  ) throws {
    try connection.query(
      """
      SELECT \(Self.columns) FROM track_point
      WHERE device = ?3 AND (?1 IS NULL OR time >= ?1) AND (?2 IS NULL OR time < ?2)
      ORDER BY time
      """, [StoreTime.value(since), StoreTime.value(until), .text(device)]
    ) { try body(Self.point($0)) }
  }

  /// Every point from `since` to `until` (see ``enumerate(since:until:_:)``).
  public func all(since: Date? = nil, until: Date? = nil) throws -> [TrackPoint] {
    var points: [TrackPoint] = []
    try enumerate(since: since, until: until) { points.append($0) }
    return points
  }

  /// The number of points from `since` (inclusive) to `until` (exclusive).
  public func count(since: Date? = nil, until: Date? = nil) throws -> Int {
    try connection.queryFirst(
      """
      SELECT count(*) FROM track_point
      WHERE device = ?3 AND (?1 IS NULL OR time >= ?1) AND (?2 IS NULL OR time < ?2)
      """, [StoreTime.value(since), StoreTime.value(until), .text(device)]
    ) { $0.int(0) } ?? 0
  }

  /// Deletes the device's points older than `cutoff` (retention).
  ///
  /// - Returns: how many were deleted.
  @discardableResult
  public func delete(before cutoff: Date) throws -> Int {
    try connection.execute(
      "DELETE FROM track_point WHERE device = ? AND time < ?",
      [.text(device), StoreTime.value(cutoff)])
  }

  private static func point(_ row: Row) -> TrackPoint {
    TrackPoint(
      timestamp: StoreTime.date(row.int64(0)),
      coordinate: Coordinate(latitude: row.double(2), longitude: row.double(3)),
      altitude: row.optionalDouble(4), speed: row.optionalDouble(5),
      course: row.optionalDouble(6), horizontalAccuracy: row.optionalDouble(7),
      segment: row.int(1))
  }
}
