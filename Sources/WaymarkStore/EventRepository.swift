import FoundationEssentials
import WaymarkCore

/// Place events in the store, each a device's (``StoreDevice``), unique on (device, class, time,
/// place): recording one twice is a no-op. The listing is every device's.
///
/// Events outlive their place: removing a place marks its events
/// (``StoredEvent/placeRemoved``), and uniqueness holds among the events of places in the store,
/// so a place added again with a removed one's id records its own events.
public struct EventRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection
  /// The device whose events this repository records.
  public let device: String

  /// Wraps the connection of a transaction, for the events of `device` (default
  /// ``StoreDevice/local``).
  public init(_ connection: Connection, device: String = StoreDevice.local) {
    self.connection = connection
    self.device = device
  }

  /// Records an event of the device unless the same (class, time, place) is already stored
  /// for it.
  ///
  /// - Returns: whether it was new.
  /// - Throws: ``StoreError``: kind ``StoreError/Kind/notFound`` when the place is not in the
  ///   store; a constraint violation when the reason is not valid JSON.
  @discardableResult
  public func record(_ event: StoredEvent) throws -> Bool {
    let changed = try connection.execute(
      """
      INSERT INTO event (class, time, place_id, latitude, longitude, arrival, reason, device)
      SELECT ?1, ?2, id, ?4, ?5, ?6, ?7, ?8 FROM place WHERE id = ?3
      ON CONFLICT (device, class, time, place_id) WHERE place_removed IS NULL DO NOTHING
      """,
      [
        .text(event.className), StoreTime.value(event.time), .text(event.placeID),
        .real(event.coordinate?.latitude), .real(event.coordinate?.longitude),
        StoreTime.value(event.arrival), .text(event.reasonJSON), .text(device),
      ])
    if changed == 0, try !PlaceRepository(connection).contains(id: event.placeID) {
      throw StoreError(
        .notFound, message: "no place with id '\(event.placeID)' in the store",
        path: connection.path)
    }
    return changed > 0
  }

  /// Calls `body` for each event in time order, optionally of one place id (including removed
  /// places that had it) and from `since` on.
  public func enumerate(
    placeID: String? = nil, since: Date? = nil, _ body: (StoredEvent) throws -> Void
  ) throws {
    try connection.query(
      """
      SELECT class, time, place_id, latitude, longitude, arrival, reason, place_removed
      FROM event
      WHERE (?1 IS NULL OR place_id = ?1) AND (?2 IS NULL OR time >= ?2)
      ORDER BY time, device, id
      """, [.text(placeID), StoreTime.value(since)]
    ) { row in
      var coordinate: Coordinate?
      if let latitude = row.optionalDouble(3), let longitude = row.optionalDouble(4) {
        coordinate = Coordinate(latitude: latitude, longitude: longitude)
      }
      try body(
        StoredEvent(
          className: row.text(0), time: StoreTime.date(row.int64(1)), placeID: row.text(2),
          coordinate: coordinate, arrival: row.optionalInt64(5).map(StoreTime.date),
          reasonJSON: row.text(6), placeRemoved: row.optionalInt64(7).map(StoreTime.date)))
    }
  }

  /// Every event (see ``enumerate(placeID:since:_:)``).
  public func all(placeID: String? = nil, since: Date? = nil) throws -> [StoredEvent] {
    var events: [StoredEvent] = []
    try enumerate(placeID: placeID, since: since) { events.append($0) }
    return events
  }

  /// The number of events.
  public func count() throws -> Int {
    try connection.queryFirst("SELECT count(*) FROM event") { $0.int(0) } ?? 0
  }
}
