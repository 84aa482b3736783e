import FoundationEssentials
import WaymarkCore

/// Visits in the store: open on arrival, close on departure, list, delete.
///
/// A visit belongs to a device (``StoreDevice``) and is unique on (device, place, arrival time),
/// so recording the same arrival twice (a replay of an already recorded log) finds the existing
/// row instead of adding one. At most one visit per device and place is open (departure
/// `NULL`); inserting and the recorder's look-ups (``entry(placeID:arrival:)``,
/// ``openEntry(placeID:)``, ``openEntries()``) concern the repository's device, the listings and
/// deletions every device's. Each visit keeps a snapshot of its place, taken from the
/// place row when the visit is inserted, and outlives the place: removing a place marks its
/// visits (``VisitRecord/placeRemoved``) instead of deleting them. Uniqueness, open visits and
/// the recorder's look-ups concern the visits of places in the store only, so a place added
/// again with a removed place's id never continues, or collides with, the removed one's visits.
public struct VisitRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection
  /// The device whose visits this repository records.
  public let device: String

  /// Wraps the connection of a transaction, for the visits of `device` (default
  /// ``StoreDevice/local``).
  public init(_ connection: Connection, device: String = StoreDevice.local) {
    self.connection = connection
    self.device = device
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

  /// Inserts a visit unless one with the same place and arrival exists, with a snapshot of the
  /// place's name, centre and descriptive fields as they are in the store now.
  ///
  /// - Returns: the stored row and whether it was inserted now.
  /// - Throws: ``StoreError``; kind ``StoreError/Kind/notFound`` when the place is not in the
  ///   store.
  public func insert(_ visit: Visit) throws -> (entry: Entry, inserted: Bool) {
    let changed = try connection.execute(
      """
      INSERT INTO visit (place_id, arrival, departure, fix_count, best_accuracy, source, name,
        latitude, longitude, category, subtitle, address, town, url, image, detail, device)
      SELECT id, ?2, ?3, ?4, ?5, ?6, name, latitude, longitude, category, subtitle, address,
        town, url, image, detail, ?7
      FROM place WHERE id = ?1
      ON CONFLICT (device, place_id, arrival) WHERE place_removed IS NULL DO NOTHING
      """,
      [
        .text(visit.placeID), StoreTime.value(visit.arrivalDate),
        StoreTime.value(visit.departureDate), .integer(Int64(visit.fixCount)),
        .real(visit.bestAccuracyMeters), .text(visit.source), .text(device),
      ])
    guard let entry = try entry(placeID: visit.placeID, arrival: visit.arrivalDate) else {
      throw StoreError(
        .notFound, message: "no place with id '\(visit.placeID)' in the store",
        path: connection.path)
    }
    return (entry, changed > 0)
  }

  /// The visit of `placeID` (a place in the store) that arrived at `arrival`, or `nil`.
  public func entry(placeID: String, arrival: Date) throws -> Entry? {
    try connection.queryFirst(
      """
      SELECT id, arrival, departure, fix_count, best_accuracy, last_fix FROM visit
      WHERE device = ? AND place_id = ? AND arrival = ? AND place_removed IS NULL
      """, [.text(device), .text(placeID), StoreTime.value(arrival)], Self.entry)
  }

  /// The open visit of `placeID` (a place in the store), or `nil`.
  public func openEntry(placeID: String) throws -> Entry? {
    try connection.queryFirst(
      """
      SELECT id, arrival, departure, fix_count, best_accuracy, last_fix FROM visit
      WHERE device = ? AND place_id = ? AND departure IS NULL AND place_removed IS NULL
      """, [.text(device), .text(placeID)], Self.entry)
  }

  /// Every open visit of the places in the store, by place id.
  public func openEntries() throws -> [String: Entry] {
    var entries: [String: Entry] = [:]
    try connection.query(
      """
      SELECT id, arrival, departure, fix_count, best_accuracy, last_fix, place_id FROM visit
      WHERE device = ? AND departure IS NULL AND place_removed IS NULL
      """, [.text(device)]
    ) { entries[$0.text(6)] = Self.entry($0) }
    return entries
  }

  /// Adds counted fixes to a visit: `count` more fixes, the best accuracy so far, and the time of
  /// the last one counted. The visits of a removed place are history and do not change.
  public func addFixes(
    id: Int64, count: Int, bestAccuracyMeters: Double?, lastFixMilliseconds: Int64
  ) throws {
    try connection.execute(
      """
      UPDATE visit SET fix_count = fix_count + ?,
        best_accuracy = CASE WHEN ? IS NULL THEN best_accuracy
          WHEN best_accuracy IS NULL THEN ? ELSE min(best_accuracy, ?) END,
        last_fix = max(coalesce(last_fix, ?), ?)
      WHERE id = ? AND place_removed IS NULL
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

  /// Calls `body` for each visit, oldest arrival first.
  ///
  /// - Parameters:
  ///   - placeID: only the visits of this place id: those of the place in the store and those
  ///     of removed places that had the id.
  ///   - since: only visits arriving at or after this time.
  ///   - removedOnly: only the visits of removed places.
  ///   - body: called with each visit.
  public func enumerate(
    placeID: String? = nil, since: Date? = nil, removedOnly: Bool = false,
    _ body: (VisitRecord) throws -> Void
  ) throws {
    try connection.query(
      """
      SELECT \(Self.recordColumns) FROM visit
      WHERE (?1 IS NULL OR place_id = ?1) AND (?2 IS NULL OR arrival >= ?2)
        AND (?3 = 0 OR place_removed IS NOT NULL)
      ORDER BY arrival, place_id, device, id
      """, [.text(placeID), StoreTime.value(since), .integer(removedOnly ? 1 : 0)]
    ) { try body(Self.record($0)) }
  }

  /// Every visit (see ``enumerate(placeID:since:removedOnly:_:)``).
  public func all(
    placeID: String? = nil, since: Date? = nil, removedOnly: Bool = false
  ) throws -> [VisitRecord] {
    var records: [VisitRecord] = []
    try enumerate(placeID: placeID, since: since, removedOnly: removedOnly) {
      records.append($0)
    }
    return records
  }

  /// The visit with row id `id`, or `nil`.
  public func record(id: Int64) throws -> VisitRecord? {
    try connection.queryFirst(
      "SELECT \(Self.recordColumns) FROM visit WHERE id = ?", [.integer(id)], Self.record)
  }

  /// What ``delete(placeID:removedOnly:arrivingBefore:)`` deleted.
  public struct Deletion: Sendable, Hashable {
    /// Visits deleted.
    public var visits: Int
    /// Events deleted.
    public var events: Int
    /// Open visits that matched but were kept.
    public var openVisitsKept: Int
  }

  /// Deletes recorded history: closed visits and their arrival and departure events.
  ///
  /// Open visits (and the arrival events that opened them) are kept: a recorder may still be
  /// counting fixes for them and will close them. The visit count of a place in the store goes
  /// down by its visits deleted, and its visited flag is cleared when none is left.
  ///
  /// - Parameters:
  ///   - placeID: only the history of this place id (the place in the store and removed places
  ///     that had the id); `nil` for every place.
  ///   - removedOnly: only the history of removed places.
  ///   - before: only visits arriving before this time, and the events of those arrivals (an
  ///     arrival at, or a departure from a visit arriving, before it); `nil` for any time.
  /// - Returns: how many visits and events were deleted.
  @discardableResult
  public func delete(
    placeID: String? = nil, removedOnly: Bool = false, arrivingBefore before: Date? = nil
  ) throws -> Deletion {
    let values: [SQLValue] = [
      .text(placeID), .integer(removedOnly ? 1 : 0), StoreTime.value(before),
    ]
    let selected = """
      (?1 IS NULL OR place_id = ?1) AND (?2 = 0 OR place_removed IS NOT NULL)
        AND (?3 IS NULL OR arrival < ?3)
      """
    let openKept =
      try connection.queryFirst(
        "SELECT count(*) FROM visit WHERE \(selected) AND departure IS NULL", values
      ) { $0.int(0) } ?? 0
    try connection.execute(
      """
      UPDATE place SET visit_count = max(0, visit_count - gone.n),
        visited = CASE WHEN visit_count - gone.n <= 0 THEN 0 ELSE visited END
      FROM (
        SELECT place_id, count(*) AS n FROM visit
        WHERE \(selected) AND departure IS NOT NULL AND place_removed IS NULL
        GROUP BY place_id
      ) AS gone
      WHERE place.id = gone.place_id
      """, values)
    let visits = try connection.execute(
      "DELETE FROM visit WHERE \(selected) AND departure IS NOT NULL", values)
    let events = try connection.execute(
      """
      DELETE FROM event
      WHERE (?1 IS NULL OR place_id = ?1) AND (?2 = 0 OR place_removed IS NOT NULL)
        AND (?3 IS NULL OR coalesce(arrival, time) < ?3)
        AND NOT EXISTS (
          SELECT 1 FROM visit v
          WHERE v.device = event.device AND v.place_id = event.place_id
            AND v.place_removed IS event.place_removed
            AND v.departure IS NULL AND v.arrival = coalesce(event.arrival, event.time))
      """, values)
    return Deletion(visits: visits, events: events, openVisitsKept: openKept)
  }

  /// The number of visits; closed ones only when `closedOnly`.
  public func count(closedOnly: Bool = false) throws -> Int {
    let sql =
      closedOnly
      ? "SELECT count(*) FROM visit WHERE departure IS NOT NULL" : "SELECT count(*) FROM visit"
    return try connection.queryFirst(sql) { $0.int(0) } ?? 0
  }

  private static let recordColumns = """
    id, place_id, arrival, departure, fix_count, best_accuracy, source, name, latitude, \
    longitude, category, subtitle, address, town, url, image, detail, place_removed, device
    """

  private static func record(_ row: Row) -> VisitRecord {
    let visit = Visit(
      placeID: row.text(1), arrivalDate: StoreTime.date(row.int64(2)),
      departureDate: row.optionalInt64(3).map(StoreTime.date), fixCount: row.int(4),
      bestAccuracyMeters: row.optionalDouble(5), source: row.optionalText(6))
    let place = PlaceSnapshot(
      name: row.text(7), coordinate: Coordinate(latitude: row.double(8), longitude: row.double(9)),
      category: row.optionalText(10), subtitle: row.optionalText(11),
      address: row.optionalText(12), town: row.optionalText(13), url: row.optionalText(14),
      image: row.optionalText(15), detail: row.optionalText(16))
    return VisitRecord(
      id: row.int64(0), visit: visit, place: place,
      placeRemoved: row.optionalInt64(17).map(StoreTime.date), device: row.text(18))
  }

  static func entry(_ row: Row) -> Entry {
    Entry(
      id: row.int64(0), arrival: StoreTime.date(row.int64(1)),
      departure: row.optionalInt64(2).map(StoreTime.date), fixCount: row.int(3),
      bestAccuracyMeters: row.optionalDouble(4), lastFixMilliseconds: row.optionalInt64(5))
  }
}
