import FoundationEssentials
import WaymarkCore

/// Places in the store: insert, update, look up, list, remove.
///
/// A repository works on a ``Connection`` inside ``Database/write(durability:_:)`` or ``Database/read(_:)``,
/// so that several repositories can share one transaction:
/// ```swift
/// try database.write { try PlaceRepository($0).upsert(places) }
/// ```
public struct PlaceRepository {
  /// The connection of the enclosing transaction.
  public let connection: Connection

  /// Wraps the connection of a transaction.
  public init(_ connection: Connection) {
    self.connection = connection
  }

  static let columns = """
    id, name, latitude, longitude, radius, category, subtitle, address, town, url, image, detail, \
    created, visited, visit_count, exit_radius, maximum_accuracy, confirmations, dwell_seconds, \
    place_group, overlap
    """
  private static let insertSQL =
    "INSERT INTO place (\(columns)) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, "
    + "?, ?)"
  private static let upsertSQL =
    insertSQL + """

      ON CONFLICT (id) DO UPDATE SET name = excluded.name, latitude = excluded.latitude,
        longitude = excluded.longitude, radius = excluded.radius, category = excluded.category,
        subtitle = excluded.subtitle, address = excluded.address, town = excluded.town,
        url = excluded.url, image = excluded.image, detail = excluded.detail,
        created = coalesce(place.created, excluded.created), exit_radius = excluded.exit_radius,
        maximum_accuracy = excluded.maximum_accuracy, confirmations = excluded.confirmations,
        dwell_seconds = excluded.dwell_seconds, place_group = excluded.place_group,
        overlap = excluded.overlap
      """
  private static let selectByIDSQL = "SELECT \(columns) FROM place WHERE id = ?"
  private static let selectAllSQL = "SELECT \(columns) FROM place ORDER BY id"
  private static let selectBandSQL =
    "SELECT \(columns) FROM place WHERE latitude BETWEEN ? AND ? ORDER BY id"

  /// Inserts a new place.
  ///
  /// - Throws: ``StoreError`` (a constraint violation when the id exists).
  public func insert(_ place: Place) throws {
    try connection.execute(Self.insertSQL, Self.values(place))
  }

  /// Inserts places, or updates the descriptive fields and detection overrides of those whose id
  /// exists. The visit history of an existing place (`created`, visited flag, visit count) is kept.
  ///
  /// - Returns: how many places were new.
  public func upsert(_ places: some Sequence<Place>) throws -> Int {
    let before = try count()
    for place in places {
      try connection.execute(Self.upsertSQL, Self.values(place))
    }
    return try count() - before
  }

  /// The place with `id`, or `nil`.
  public func place(id: String) throws -> Place? {
    try connection.queryFirst(Self.selectByIDSQL, [.text(id)]) {
      Self.place($0)
    }
  }

  /// Whether a place with `id` exists.
  public func contains(id: String) throws -> Bool {
    try connection.queryFirst("SELECT 1 FROM place WHERE id = ?", [.text(id)]) { _ in true }
      ?? false
  }

  /// Calls `body` for every place, ordered by id, without loading them all at once.
  public func enumerate(_ body: (Place) throws -> Void) throws {
    try connection.query(Self.selectAllSQL) {
      try body(Self.place($0))
    }
  }

  /// Every place, ordered by id.
  public func all() throws -> [Place] {
    var places: [Place] = []
    try enumerate { places.append($0) }
    return places
  }

  /// The number of places.
  public func count() throws -> Int {
    try connection.queryFirst("SELECT count(*) FROM place") { $0.int(0) } ?? 0
  }

  /// What removing a place kept.
  public struct Removal: Sendable, Hashable {
    /// The place's visits, kept and marked as of a removed place.
    public var visits: Int
    /// The place's events, kept and marked likewise.
    public var events: Int
    /// Whether a visit was still open; it is closed at the last fix counted inside (else at its
    /// arrival), as the recorder closes a visit whose departure it never saw.
    public var closedOpenVisit: Bool
  }

  /// Removes the place with `id` and its monitor state, keeping its history.
  ///
  /// The place's visits and events stay in the store with `place_removed` set to `time`; each
  /// visit already holds the snapshot of its place (``VisitRecord/place``). An open visit is
  /// closed. Deleting history is a separate step:
  /// ``VisitRepository/delete(placeID:removedOnly:arrivingBefore:)``. A place added later with
  /// the same id starts with no visits.
  ///
  /// - Parameters:
  ///   - id: the place.
  ///   - time: the removal time stored with the history (default now).
  /// - Returns: what was kept, or `nil` when there is no place with `id`.
  @discardableResult
  public func remove(id: String, at time: Date = Date()) throws -> Removal? {
    guard try contains(id: id) else { return nil }
    let closed = try connection.execute(
      """
      UPDATE visit SET departure = max(arrival, coalesce(last_fix, arrival))
      WHERE place_id = ? AND place_removed IS NULL AND departure IS NULL
      """, [.text(id)])
    let visits = try connection.execute(
      "UPDATE visit SET place_removed = ? WHERE place_id = ? AND place_removed IS NULL",
      [StoreTime.value(time), .text(id)])
    let events = try connection.execute(
      "UPDATE event SET place_removed = ? WHERE place_id = ? AND place_removed IS NULL",
      [StoreTime.value(time), .text(id)])
    // The monitor state goes with the place (ON DELETE CASCADE).
    try connection.execute("DELETE FROM place WHERE id = ?", [.text(id)])
    return Removal(visits: visits, events: events, closedOpenVisit: closed > 0)
  }

  /// Sets the visited flag and adds `count` to the visit count.
  ///
  /// - Throws: ``StoreError`` of kind ``StoreError/Kind/notFound`` for an unknown id.
  public func markVisited(id: String, adding count: Int = 1) throws {
    let changed = try connection.execute(
      "UPDATE place SET visited = 1, visit_count = visit_count + ? WHERE id = ?",
      [.integer(Int64(count)), .text(id)])
    guard changed > 0 else {
      throw StoreError(.notFound, message: "no place with id '\(id)'", path: connection.path)
    }
  }

  /// The place whose circle contains `coordinate` and whose centre is nearest, or `nil`.
  ///
  /// A latitude band prefilter in SQL keeps the scan cheap; distances are haversine.
  public func nearestContaining(_ coordinate: Coordinate) throws -> Place? {
    // No place radius in practice exceeds 50 km; the band is 0.5 degree of latitude (~55 km).
    var best: (place: Place, distance: Double)?
    try connection.query(
      Self.selectBandSQL,
      [.real(coordinate.latitude - 0.5), .real(coordinate.latitude + 0.5)]
    ) { row in
      let place = Self.place(row)
      let distance = place.coordinate.distance(to: coordinate)
      if distance <= place.radiusMeters, distance < (best?.distance ?? .infinity) {
        best = (place, distance)
      }
    }
    return best?.place
  }

  static func values(_ place: Place) -> [SQLValue] {
    [
      .text(place.id), .text(place.name), .real(place.coordinate.latitude),
      .real(place.coordinate.longitude), .real(place.radiusMeters), .text(place.category),
      .text(place.subtitle), .text(place.address), .text(place.town), .text(place.url),
      .text(place.image), .text(place.detail), StoreTime.value(place.created),
      .integer(place.visited ? 1 : 0), .integer(Int64(place.visitCount)),
      .real(place.detection.exitRadiusMeters), .real(place.detection.maximumAccuracyMeters),
      .integer(place.detection.confirmations), .real(place.detection.dwellSeconds),
      .text(place.detection.group), .text(place.detection.overlap?.rawValue),
    ]
  }

  static func place(_ row: Row) -> Place {
    Place(
      id: row.text(0), name: row.text(1),
      coordinate: Coordinate(latitude: row.double(2), longitude: row.double(3)),
      radiusMeters: row.double(4), category: row.optionalText(5), subtitle: row.optionalText(6),
      address: row.optionalText(7), town: row.optionalText(8), url: row.optionalText(9),
      image: row.optionalText(10), detail: row.optionalText(11),
      created: row.optionalInt64(12).map(StoreTime.date), visited: row.int(13) != 0,
      visitCount: row.int(14),
      detection: PlaceDetectionOverrides(
        exitRadiusMeters: row.optionalDouble(15), maximumAccuracyMeters: row.optionalDouble(16),
        confirmations: row.optionalInt64(17).map { Int($0) }, dwellSeconds: row.optionalDouble(18),
        group: row.optionalText(19), overlap: row.optionalText(20).flatMap(PlaceOverlap.init))
    )
  }
}
