import CSQLite
import FoundationEssentials
import WaymarkCore

/// The recorded track of one device (``StoreDevice``): points in time order, unique on their
/// time (to the millisecond) among the device's. The `local` device's (waymarkd's) points are
/// in the table `track_point`, keyed by time alone; other devices' in `device_track_point`.
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
      accuracy) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (time) DO NOTHING
    """

  private static let deviceInsertSQL = """
    INSERT INTO device_track_point (time, segment, latitude, longitude, altitude, speed, course,
      accuracy, device) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
    ON CONFLICT (device, time) DO NOTHING
    """

  /// Whether the points are `track_point`'s (the `local` device's).
  private var isLocal: Bool { device == StoreDevice.local }

  /// The device's table, the condition (ending in `AND`) that picks its rows there, and the
  /// values to bind: `values`, then the device, the condition's parameter, when the table holds
  /// several devices.
  private func scoped(_ values: [SQLValue]) -> (
    table: String, condition: String, values: [SQLValue]
  ) {
    isLocal
      ? ("track_point", "", values)
      : ("device_track_point", "device = ?\(values.count + 1) AND ", values + [.text(device)])
  }

  /// Inserts `points`, skipping each one whose time (in whole milliseconds) is already stored.
  ///
  /// One prepared statement is stepped per point; the enclosing ``Database/write(durability:_:)`` makes the
  /// batch one transaction.
  ///
  /// - Returns: how many points were inserted.
  /// - Throws: ``StoreError`` (a coordinate out of range breaks a `CHECK`).
  @discardableResult
  public func insert(_ points: some Sequence<TrackPoint>) throws -> Int {
    let statement = try connection.statement(isLocal ? Self.insertSQL : Self.deviceInsertSQL)
    defer { statement.reset() }
    var inserted = 0
    for point in points {
      let values: [SQLValue] = [
        .integer(Timestamp.milliseconds(point.timestamp)), .integer(Int64(point.segment)),
        .real(point.coordinate.latitude), .real(point.coordinate.longitude),
        .real(point.altitude), .real(point.speed), .real(point.course),
        .real(point.horizontalAccuracy),
      ]
      try statement.bind(isLocal ? values : values + [.text(device)])
      while try statement.step() {}
      inserted += Int(sqlite3_changes(connection.handle))
    }
    return inserted
  }

  private static let columns =
    "time, segment, latitude, longitude, altitude, speed, course, accuracy"

  /// The latest point, or `nil` when the track is empty.
  public func last() throws -> TrackPoint? {
    let scope = scoped([])
    return try connection.queryFirst(
      """
      SELECT \(Self.columns) FROM \(scope.table) WHERE \(scope.condition)1
      ORDER BY time DESC LIMIT 1
      """, scope.values, Self.point)
  }

  /// Calls `body` with each point from `since` (inclusive) to `until` (exclusive), in time order.
  public func enumerate(
    since: Date? = nil, until: Date? = nil, _ body: (TrackPoint) throws -> Void
  ) throws {
    let scope = scoped([StoreTime.value(since), StoreTime.value(until)])
    try connection.query(
      """
      SELECT \(Self.columns) FROM \(scope.table)
      WHERE \(scope.condition)(?1 IS NULL OR time >= ?1) AND (?2 IS NULL OR time < ?2)
      ORDER BY time
      """, scope.values
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
    let scope = scoped([StoreTime.value(since), StoreTime.value(until)])
    return try connection.queryFirst(
      """
      SELECT count(*) FROM \(scope.table)
      WHERE \(scope.condition)(?1 IS NULL OR time >= ?1) AND (?2 IS NULL OR time < ?2)
      """, scope.values
    ) { $0.int(0) } ?? 0
  }

  /// Deletes the device's points older than `cutoff` (retention).
  ///
  /// - Returns: how many were deleted.
  @discardableResult
  public func delete(before cutoff: Date) throws -> Int {
    let scope = scoped([StoreTime.value(cutoff)])
    return try connection.execute(
      "DELETE FROM \(scope.table) WHERE \(scope.condition)time < ?1", scope.values)
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
