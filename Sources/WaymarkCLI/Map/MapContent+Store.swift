import Foundation
import WaymarkCore
import WaymarkStore

extension MapContent {
  /// Reads the track points, visits and pass-throughs from `since` (inclusive) to `until`
  /// (exclusive; a visit counts by its arrival) and the places on the map.
  ///
  /// A visit is a pass-through when its arrival event's reason has the rule `pass-through`;
  /// the entry and exit are that arrival's and its departure's positions. The map shows the
  /// track, the visited places and every place of the store whose circle reaches into the box
  /// of those two.
  init(connection: Connection, since: Date?, until: Date?) throws {
    var segment: Int?
    try TrackRepository(connection).enumerate(since: since, until: until) { point in
      if point.segment != segment { segments.append([]) }
      segments[segments.count - 1].append(point.coordinate)
      segment = point.segment
      trackTimes = (trackTimes?.first ?? point.timestamp, point.timestamp)
    }
    var arrivals: [String: Coordinate] = [:]
    var departures: [String: Coordinate] = [:]
    try EventRepository(connection).enumerate(since: since) { event in
      guard let coordinate = event.coordinate, Self.isPassThrough(event.reasonJSON) else {
        return
      }
      if event.className == "ARRIVAL" {
        arrivals[Self.key(event.placeID, event.time, event.placeRemoved)] = coordinate
      } else if let arrival = event.arrival {
        departures[Self.key(event.placeID, arrival, event.placeRemoved)] = coordinate
      }
    }
    try VisitRepository(connection).enumerate(since: since) { record in
      let visit = record.visit
      if let until, visit.arrivalDate >= until { return }
      let key = Self.key(visit.placeID, visit.arrivalDate, record.placeRemoved)
      var passThrough: (Coordinate, Coordinate)?
      if let entry = arrivals[key], let exit = departures[key] { passThrough = (entry, exit) }
      stays.append(
        Stay(
          placeID: visit.placeID, name: record.place.name, coordinate: record.place.coordinate,
          arrival: visit.arrivalDate, departure: visit.departureDate, passThrough: passThrough,
          placeRemoved: record.placeRemoved != nil))
    }
    let places = try PlaceRepository(connection).all()
    let visited = Set(stays.filter { !$0.placeRemoved }.map(\.placeID))
    let box = Self.box(
      segments.joined().map { ($0, 0) }
        + places.filter { visited.contains($0.id) }.map { ($0.coordinate, $0.radiusMeters) }
        + stays.map { ($0.coordinate, 0) })
    for place in places {
      let reaches =
        visited.contains(place.id) || box.map { Self.reaches(place, into: $0) } ?? false
      guard reaches else { continue }
      circles.append(
        Circle(
          id: place.id, name: place.name, coordinate: place.coordinate,
          radiusMeters: place.radiusMeters, category: place.category))
    }
  }

  /// Whether a stored reason (JSON) has the rule `pass-through`.
  static func isPassThrough(_ reasonJSON: String) -> Bool {
    var reader = JSONReader(Array(reasonJSON.utf8))
    guard case .string("pass-through") = (try? reader.value())?["rule"] else { return false }
    return true
  }

  private static func key(_ placeID: String, _ time: Date, _ removed: Date?) -> String {
    "\(placeID)\u{0}\(Timestamp.milliseconds(time))\u{0}\(removed.map(Timestamp.milliseconds) ?? -1)"
  }

  /// The latitude and longitude box of `items` grown by each one's metres, or `nil` for none.
  private static func box(_ items: [(Coordinate, Double)])
    -> (south: Double, west: Double, north: Double, east: Double)?
  {
    guard !items.isEmpty else { return nil }
    var box = (south: 90.0, west: 180.0, north: -90.0, east: -180.0)
    for (coordinate, pad) in items {
      let latitudePad = pad / Coordinate.metersPerDegree
      let longitudePad = latitudePad / max(cos(coordinate.latitude * .pi / 180), 1e-6)
      box.south = min(box.south, coordinate.latitude - latitudePad)
      box.north = max(box.north, coordinate.latitude + latitudePad)
      box.west = min(box.west, coordinate.longitude - longitudePad)
      box.east = max(box.east, coordinate.longitude + longitudePad)
    }
    return box
  }

  private static func reaches(
    _ place: Place, into box: (south: Double, west: Double, north: Double, east: Double)
  ) -> Bool {
    let latitudePad = place.radiusMeters / Coordinate.metersPerDegree
    let longitudePad = latitudePad / max(cos(place.coordinate.latitude * .pi / 180), 1e-6)
    return place.coordinate.latitude + latitudePad >= box.south
      && place.coordinate.latitude - latitudePad <= box.north
      && place.coordinate.longitude + longitudePad >= box.west
      && place.coordinate.longitude - longitudePad <= box.east
  }
}
