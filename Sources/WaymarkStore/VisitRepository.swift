import FoundationEssentials
import WaymarkCore

/// Visits in the store: open on arrival, close on departure, list.
///
/// A visit is unique on (place, arrival time), so recording the same arrival twice (a replay of
/// an already recorded log) finds the existing row instead of adding one. At most one visit per
/// place is open (departure `NULL`).
public struct VisitRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  /// The stored state of one visit row, as the recorder needs it.
  public struct Entry: Sendable, Hashable {
    /// The row id.
    public var id: Int64
    /// The arrival time.
    public var arrival: Date
    /// The departure time, `nil` while open.
    public var departure: Date?
    /// Fixes counted so far.
    public var fixCount: Int
    /// Best horizontal accuracy so far, metres.
    public var bestAccuracyMeters: Double?
    /// Time of the last fix counted, milliseconds since 1970.
    public var lastFixMilliseconds: Int64?
  }

  /// Inserts a visit unless one with the same place and arrival exists.
  ///
  /// - Returns: the stored row and whether it was inserted now.
  public func insert(_ visit: Visit) throws -> (entry: Entry, inserted: Bool) {
    let changed = try connection.execute(
      """
      INSERT INTO visit (place_id, arrival, departure, fix_count, best_accuracy, source)
      VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (place_id, arrival) DO NOTHING
      """,
      [
        .text(visit.placeID), StoreTime.value(visit.arrivalDate),
        StoreTime.value(visit.departureDate), .integer(Int64(visit.fixCount)),
        .real(visit.bestAccuracyMeters), .text(visit.source),
      ])
    guard let entry = try entry(placeID: visit.placeID, arrival: visit.arrivalDate) else {
      throw StoreError(.notFound, message: "visit vanished after insert", path: connection.path)
    }
    return (entry, changed > 0)
  }

  /// The visit of `placeID` that arrived at `arrival`, or `nil`.
  public func entry(placeID: String, arrival: Date) throws -> Entry? {
    try connection.queryFirst(
      """
      SELECT id, arrival, departure, fix_count, best_accuracy, last_fix FROM visit
      WHERE place_id = ? AND arrival = ?
      """, [.text(placeID), StoreTime.value(arrival)], Self.entry)
  }

  /// The open visit of `placeID`, or `nil`.
  public func openEntry(placeID: String) throws -> Entry? {
    try connection.queryFirst(
      """
      SELECT id, arrival, departure, fix_count, best_accuracy, last_fix FROM visit
      WHERE place_id = ? AND departure IS NULL
      """, [.text(placeID)], Self.entry)
  }

  /// Every open visit, by place id.
  public func openEntries() throws -> [String: Entry] {
    var entries: [String: Entry] = [:]
    try connection.query(
      """
      SELECT id, arrival, departure, fix_count, best_accuracy, last_fix, place_id FROM visit
      WHERE departure IS NULL
      """
    ) { entries[$0.text(6)] = Self.entry($0) }
    return entries
  }

  /// Adds counted fixes to a visit: `count` more fixes, the best accuracy so far, and the time of
  /// the last one counted.
  public func addFixes(
    id: Int64, count: Int, bestAccuracyMeters: Double?, lastFixMilliseconds: Int64
  ) throws {
    try connection.execute(
      """
      UPDATE visit SET fix_count = fix_count + ?,
        best_accuracy = CASE WHEN ? IS NULL THEN best_accuracy
          WHEN best_accuracy IS NULL THEN ? ELSE min(best_accuracy, ?) END,
        last_fix = max(coalesce(last_fix, ?), ?)
      WHERE id = ?
      """,
      [
        .integer(Int64(count)), .real(bestAccuracyMeters), .real(bestAccuracyMeters),
        .real(bestAccuracyMeters), .integer(lastFixMilliseconds), .integer(lastFixMilliseconds),
        .integer(id),
      ])
  }

  /// Closes an open visit.
  ///
  /// - Returns: whether the visit was open and is now closed.
  @discardableResult
  public func close(id: Int64, departure: Date) throws -> Bool {
    try connection.execute(
      "UPDATE visit SET departure = max(arrival, ?) WHERE id = ? AND departure IS NULL",
      [StoreTime.value(departure), .integer(id)]) > 0
  }

  /// Calls `body` for each visit, oldest arrival first, optionally only of one place and only
  /// those arriving at or after `since`.
  public func enumerate(
    placeID: String? = nil, since: Date? = nil, _ body: (VisitRecord) throws -> Void
  ) throws {
    try connection.query(
      """
      SELECT v.id, v.place_id, v.arrival, v.departure, v.fix_count, v.best_accuracy, v.source,
        p.name, p.latitude, p.longitude
      FROM visit v JOIN place p ON p.id = v.place_id
      WHERE (?1 IS NULL OR v.place_id = ?1) AND (?2 IS NULL OR v.arrival >= ?2)
      ORDER BY v.arrival, v.place_id
      """, [.text(placeID), StoreTime.value(since)]
    ) { row in
      let visit = Visit(
        placeID: row.text(1), arrivalDate: StoreTime.date(row.int64(2)),
        departureDate: row.optionalInt64(3).map(StoreTime.date), fixCount: row.int(4),
        bestAccuracyMeters: row.optionalDouble(5), source: row.optionalText(6))
      try body(
        VisitRecord(
          id: row.int64(0), visit: visit, placeName: row.text(7),
          coordinate: Coordinate(latitude: row.double(8), longitude: row.double(9))))
    }
  }

  /// Every visit (see ``enumerate(placeID:since:_:)``).
  public func all(placeID: String? = nil, since: Date? = nil) throws -> [VisitRecord] {
    var records: [VisitRecord] = []
    try enumerate(placeID: placeID, since: since) { records.append($0) }
    return records
  }

  /// The number of visits; closed ones only when `closedOnly`.
  public func count(closedOnly: Bool = false) throws -> Int {
    let sql =
      closedOnly
      ? "SELECT count(*) FROM visit WHERE departure IS NOT NULL" : "SELECT count(*) FROM visit"
    return try connection.queryFirst(sql) { $0.int(0) } ?? 0
  }

  static func entry(_ row: Row) -> Entry {
    Entry(
      id: row.int64(0), arrival: StoreTime.date(row.int64(1)),
      departure: row.optionalInt64(2).map(StoreTime.date), fixCount: row.int(3),
      bestAccuracyMeters: row.optionalDouble(4), lastFixMilliseconds: row.optionalInt64(5))
  }
}
