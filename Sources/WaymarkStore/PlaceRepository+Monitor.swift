import FoundationEssentials
import WaymarkCore

extension PlaceRepository {
  /// One place as a monitor needs it, read in place from the query's current row: valid only
  /// inside the call that receives it.
  public struct MonitorRow {
    fileprivate let row: Row

    /// Calls `body` with the id's UTF-8 bytes (no copy; valid only inside `body`).
    public func withID<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
      try row.withText(0, body)
    }

    /// Calls `body` with the name's UTF-8 bytes (no copy; valid only inside `body`).
    public func withName<T>(_ body: (UnsafeBufferPointer<UInt8>) throws -> T) rethrows -> T {
      try row.withText(1, body)
    }

    /// The centre of the place's circle.
    public var coordinate: Coordinate {
      Coordinate(latitude: row.double(2), longitude: row.double(3))
    }

    /// The radius of the place's circle, metres.
    public var radiusMeters: Double { row.double(4) }

    /// The place's detection overrides (all `nil` for most places, read without a string then).
    public var detection: PlaceDetectionOverrides {
      guard (5...10).contains(where: { !row.isNull(Int32($0)) }) else {
        return PlaceDetectionOverrides()
      }
      return PlaceDetectionOverrides(
        exitRadiusMeters: row.optionalDouble(5), maximumAccuracyMeters: row.optionalDouble(6),
        confirmations: row.optionalInt64(7).map { Int($0) }, dwellSeconds: row.optionalDouble(8),
        group: row.optionalText(9), overlap: row.optionalText(10).flatMap(PlaceOverlap.init))
    }
  }

  private static let selectMonitorSQL = """
    SELECT id, name, latitude, longitude, radius, exit_radius, maximum_accuracy, confirmations,
      dwell_seconds, place_group, overlap
    FROM place ORDER BY id
    """

  /// Calls `body` for every place, ordered by id, with only what a place monitor reads (id,
  /// name, circle, detection overrides) and without making a `Place` or a `String` for it:
  /// what loads a million places for the daemon's monitor in a fraction of a second.
  ///
  /// The fields are those of ``all()`` (the same places in the same order).
  public func forEachMonitorRow(_ body: (MonitorRow) throws -> Void) throws {
    try connection.query(Self.selectMonitorSQL) { try body(MonitorRow(row: $0)) }
  }
}

extension PlaceRepository {
  /// The creation time of every place that has one, by id (OwnTracks' `wtst`): two columns
  /// read, no `Place` made, so that the daemon does not read the whole table a second time
  /// beside ``forEachMonitorRow(_:)``.
  public func creationTimes() throws -> [String: Date] {
    var times: [String: Date] = [:]
    try connection.query("SELECT id, created FROM place WHERE created IS NOT NULL") { row in
      if let created = row.optionalInt64(1) { times[row.text(0)] = StoreTime.date(created) }
    }
    return times
  }
}
