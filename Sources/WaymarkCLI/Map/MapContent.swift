import FoundationEssentials
import Glibc
import WaymarkCore

/// What `waymark map` draws: the track's segments, the places, and the visits and
/// pass-throughs, read from the store for one time range.
struct MapContent: Sendable {
  /// A place circle.
  struct Circle: Sendable, Equatable {
    /// The place id.
    var id: String
    /// The place's name.
    var name: String
    /// The centre.
    var coordinate: Coordinate
    /// The arrival radius, metres.
    var radiusMeters: Double
    /// The category, when known.
    var category: String?
  }

  /// A visit or a pass-through.
  struct Stay: Sendable {
    /// The place id.
    var placeID: String
    /// The place's name when the visit was recorded.
    var name: String
    /// The place's centre when the visit was recorded.
    var coordinate: Coordinate
    /// Arrival time (for a pass-through: the interpolated entry into the circle).
    var arrival: Date
    /// Departure time; `nil` while the visit is open.
    var departure: Date?
    /// Where a pass-through entered and left the circle (the arrival's and departure's
    /// positions); `nil` for a visit.
    var passThrough: (entry: Coordinate, exit: Coordinate)?
    /// Whether the place has been removed from the store since.
    var placeRemoved: Bool
    /// The place's town when the visit was recorded, if it had one.
    var town: String? = nil
  }

  /// The track's segments, each its points in time order.
  var segments: [[Coordinate]] = []
  /// The time of the first and the last track point, when there is a track.
  var trackTimes: (first: Date, last: Date)?
  /// The places whose circle is on the map, ordered by id.
  var circles: [Circle] = []
  /// The visits and pass-throughs, oldest arrival first.
  var stays: [Stay] = []

  /// The number of track points.
  var pointCount: Int { segments.reduce(0) { $0 + $1.count } }
}
