import FoundationEssentials
import Glibc
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
    var box = Box()
    try TrackRepository(connection).enumerate(since: since, until: until) { point in
      box.add(point.coordinate, padMeters: 0)
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
          placeRemoved: record.placeRemoved != nil, town: record.place.town))
    }
    let places = try PlaceRepository(connection).all()
    let visited = Set(stays.filter { !$0.placeRemoved }.map(\.placeID))
    for place in places where visited.contains(place.id) {
      box.add(place.coordinate, padMeters: place.radiusMeters)
    }
    for stay in stays { box.add(stay.coordinate, padMeters: 0) }
    for place in places {
      let reaches =
        visited.contains(place.id) || box.reaches(place.coordinate, padMeters: place.radiusMeters)
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

  /// A visit's place, arrival and removal, as one dictionary key.
  private static func key(_ placeID: String, _ time: Date, _ removed: Date?) -> String {
    let removal = removed.map(Timestamp.milliseconds) ?? -1
    return "\(placeID)\u{0}\(Timestamp.milliseconds(time))\u{0}\(removal)"
  }

  /// A latitude and longitude box, grown by metres around each coordinate added.
  struct Box {
    var south = Double.infinity
    var west = Double.infinity
    var north = -Double.infinity
    var east = -Double.infinity

    /// Grows the box to hold the circle of `padMeters` around `coordinate`.
    mutating func add(_ coordinate: Coordinate, padMeters: Double) {
      let (latitudePad, longitudePad) = Self.pads(coordinate, padMeters)
      south = min(south, coordinate.latitude - latitudePad)
      north = max(north, coordinate.latitude + latitudePad)
      west = min(west, coordinate.longitude - longitudePad)
      east = max(east, coordinate.longitude + longitudePad)
    }

    /// Whether the circle of `padMeters` around `coordinate` reaches into the box (never, for
    /// an empty box).
    func reaches(_ coordinate: Coordinate, padMeters: Double) -> Bool {
      let (latitudePad, longitudePad) = Self.pads(coordinate, padMeters)
      return coordinate.latitude + latitudePad >= south
        && coordinate.latitude - latitudePad <= north
        && coordinate.longitude + longitudePad >= west
        && coordinate.longitude - longitudePad <= east
    }

    /// `meters` in degrees of latitude and of longitude at `coordinate`.
    private static func pads(_ coordinate: Coordinate, _ meters: Double) -> (Double, Double) {
      let latitude = meters / Coordinate.metersPerDegree
      return (latitude, latitude / max(cos(coordinate.latitude * .pi / 180), 1e-6))
    }
  }
}
