import FoundationEssentials
import WaymarkCore

/// Stays in the store (found from the fixes by the stay detector): record, continue, close,
/// list, re-label.
///
/// A stay belongs to a device (``StoreDevice``) and is unique on its arrival time among the
/// device's, so recording the same stay again (a log replayed twice) finds its row instead of
/// adding one. At most one stay of a device is open. Recording and ``open()`` concern the
/// repository's device; the listings and ``label(placeID:centre:radiusMeters:)`` every device's.
public struct StayRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection
  /// The device whose stays this repository records.
  public let device: String

  /// Wraps the connection of a transaction, for the stays of `device` (default
  /// ``StoreDevice/local``).
  public init(_ connection: Connection, device: String = StoreDevice.local) {
    self.connection = connection
    self.device = device
  }

  /// Records `stay` (open or closed) with the newest fix counted, `lastFix`: inserts it, or
  /// updates the row with the same arrival (its centre, accuracy, count and departure; an
  /// open row closes, a closed one stays closed). An open stay with another arrival is closed
  /// at its last fix first: there is one open stay of the device at most.
  ///
  /// - Returns: whether a row was inserted.
  @discardableResult
  public func record(_ stay: Stay, lastFix: Date) throws -> Bool {
    let arrival = StoreTime.value(stay.arrivalDate)
    let existed =
      try connection.queryFirst(
        "SELECT 1 FROM stay WHERE device = ? AND arrival = ?", [.text(device), arrival]
      ) { _ in true } ?? false
    if stay.isOpen {
      try connection.execute(
        """
        UPDATE stay SET departure = max(arrival, last_fix)
        WHERE device = ? AND departure IS NULL AND arrival <> ?
        """, [.text(device), arrival])
    }
    try connection.execute(
      """
      INSERT INTO stay (arrival, departure, latitude, longitude, accuracy, fix_count, last_fix,
        place_id, source, observed_departure, device)
      VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)
      ON CONFLICT (device, arrival) DO UPDATE SET
        departure = coalesce(stay.departure, excluded.departure),
        observed_departure =
          CASE WHEN stay.departure IS NULL THEN excluded.observed_departure
          ELSE stay.observed_departure END,
        latitude = CASE WHEN stay.departure IS NULL THEN excluded.latitude ELSE stay.latitude END,
        longitude =
          CASE WHEN stay.departure IS NULL THEN excluded.longitude ELSE stay.longitude END,
        accuracy = CASE WHEN stay.departure IS NULL THEN excluded.accuracy ELSE stay.accuracy END,
        fix_count =
          CASE WHEN stay.departure IS NULL THEN excluded.fix_count ELSE stay.fix_count END,
        last_fix = max(stay.last_fix, excluded.last_fix),
        place_id = coalesce(stay.place_id, excluded.place_id)
      """,
      [
        arrival, StoreTime.value(stay.departureDate), .real(stay.coordinate.latitude),
        .real(stay.coordinate.longitude), .real(stay.horizontalAccuracy),
        .integer(Int64(stay.fixCount)), StoreTime.value(lastFix), .text(stay.placeID),
        .text(stay.source), StoreTime.value(stay.observedDepartureDate), .text(device),
      ])
    return !existed
  }

  /// The device's open stay and the time of its newest fix counted, or `nil`.
  public func open() throws -> (stay: Stay, lastFix: Date)? {
    try connection.queryFirst(
      "SELECT \(Self.columns), last_fix FROM stay WHERE device = ? AND departure IS NULL",
      [.text(device)]
    ) { row in (Self.stay(row), StoreTime.date(row.int64(9))) }
  }

  /// Every stay, every device's, oldest arrival first.
  ///
  /// - Parameters:
  ///   - since: only stays arriving at or after this time.
  ///   - unnamedOnly: only the stays at no declared place.
  public func all(since: Date? = nil, unnamedOnly: Bool = false) throws -> [Stay] {
    var stays: [Stay] = []
    try connection.query(
      """
      SELECT \(Self.columns) FROM stay
      WHERE (?1 IS NULL OR arrival >= ?1) AND (?2 = 0 OR place_id IS NULL)
      ORDER BY arrival, device
      """, [StoreTime.value(since), .integer(unnamedOnly ? 1 : 0)]
    ) { stays.append(Self.stay($0)) }
    return stays
  }

  /// Names `placeID` on the stays at no declared place whose centre lies within
  /// `radiusMeters` of `centre` (a place accepted from them).
  ///
  /// - Returns: the stays re-labelled.
  @discardableResult
  public func label(placeID: String, centre: Coordinate, radiusMeters: Double) throws -> Int {
    var ids: [Int64] = []
    try connection.query(
      "SELECT id, latitude, longitude FROM stay WHERE place_id IS NULL"
    ) { row in
      let coordinate = Coordinate(latitude: row.double(1), longitude: row.double(2))
      if coordinate.distance(to: centre) <= radiusMeters { ids.append(row.int64(0)) }
    }
    for id in ids {
      try connection.execute(
        "UPDATE stay SET place_id = ? WHERE id = ?", [.text(placeID), .integer(id)])
    }
    return ids.count
  }

  /// The number of stays.
  public func count() throws -> Int {
    try connection.queryFirst("SELECT count(*) FROM stay") { $0.int(0) } ?? 0
  }

  private static let columns =
    "arrival, departure, latitude, longitude, accuracy, fix_count, place_id, source, "
    + "observed_departure"

  private static func stay(_ row: Row) -> Stay {
    Stay(
      arrivalDate: StoreTime.date(row.int64(0)),
      departureDate: row.optionalInt64(1).map(StoreTime.date),
      observedDepartureDate: row.optionalInt64(8).map(StoreTime.date),
      coordinate: Coordinate(latitude: row.double(2), longitude: row.double(3)),
      horizontalAccuracy: row.double(4), fixCount: row.int(5), placeID: row.optionalText(6),
      source: row.optionalText(7))
  }
}
