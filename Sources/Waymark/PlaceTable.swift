import FoundationEssentials
import WaymarkCore

/// The places a ``PlaceMonitor`` watches, packed as the monitor keeps them: ids and names as
/// UTF-8 in one buffer, centres and radii in flat arrays, detection overrides only for the
/// places that have some. A store loader appends its rows straight from its query, with no
/// `Place` value and no `String` per place, so a million places load in a fraction of a second.
///
/// A place with an invalid centre, or with an id appended before, is skipped (the first place
/// with an id wins), as ``PlaceMonitor/init(places:configuration:poster:)`` does. Ids are
/// compared by their UTF-8 bytes; places appended in ascending id order (as the store lists
/// them) need no lookup table and no duplicate check beyond comparing with the previous id.
public struct PlaceTable: Sendable {
  var names = PlaceMonitorNames()
  var latitudes: [Double] = []
  var longitudes: [Double] = []
  var radii: [Double] = []
  /// The numbers of the places with overrides, ascending, and their overrides.
  var overriddenPlaces: [Int32] = []
  var overrides: [PlaceDetectionOverrides] = []
  /// The spatial index of the table's circles, once built (``buildIndex()``) or read from a
  /// snapshot; a monitor made from the table uses it instead of building its own. Appending a
  /// place drops it.
  var index: SpatialIndex?
  /// Every id so far, kept only once the ids stop coming in ascending order.
  private var seen: Set<String>?

  /// An empty table.
  public init() {}

  /// The table of `places`, in their order.
  public init(_ places: some Sequence<Place>) {
    reserveCapacity(places.underestimatedCount)
    for place in places { append(place) }
  }

  /// Number of places kept.
  public var count: Int { latitudes.count }

  /// Makes room for `count` places in all, with about `bytesPerPlace` bytes of id and name
  /// each (UTF-8).
  public mutating func reserveCapacity(_ count: Int, bytesPerPlace: Int = 24) {
    names.reserve(count, bytesPerPlace: bytesPerPlace)
    latitudes.reserveCapacity(count)
    longitudes.reserveCapacity(count)
    radii.reserveCapacity(count)
  }

  /// Appends a place given by its fields.
  ///
  /// - Parameters:
  ///   - id: the place's id, UTF-8.
  ///   - name: its name, UTF-8.
  ///   - coordinate: the centre of its circle.
  ///   - radiusMeters: the radius of its circle, metres (a negative one counts as 0).
  ///   - detection: its detection overrides.
  /// - Returns: whether it was kept (`false`: an invalid centre, or an id already there).
  @discardableResult
  public mutating func append(
    id: UnsafeBufferPointer<UInt8>, name: UnsafeBufferPointer<UInt8>, coordinate: Coordinate,
    radiusMeters: Double, detection: PlaceDetectionOverrides = PlaceDetectionOverrides()
  ) -> Bool {
    guard coordinate.isValid else { return false }
    if seen == nil && !names.follows(id) {
      // The first id out of order: from now on, every id is checked against a set.
      seen = Set((0..<names.count).map { names.id($0) })
    }
    if seen != nil, seen?.insert(String(decoding: id, as: UTF8.self)).inserted == false {
      return false
    }
    index = nil
    if detection != PlaceDetectionOverrides() {
      overriddenPlaces.append(Int32(count))
      overrides.append(detection)
    }
    names.append(id: id, name: name)
    latitudes.append(coordinate.latitude)
    longitudes.append(coordinate.longitude)
    radii.append(max(0, radiusMeters))
    return true
  }

  /// Builds the spatial index of the table's circles now, as a monitor made from the table
  /// would, so that ``snapshot()`` can keep it; a monitor made from the table then uses it.
  public mutating func buildIndex() {
    guard index == nil else { return }
    index = SpatialIndex(latitudes: latitudes, longitudes: longitudes, radiiMeters: radii)
  }

  /// Appends `place`.
  ///
  /// - Returns: whether it was kept (`false`: an invalid centre, or an id already there).
  @discardableResult
  public mutating func append(_ place: Place) -> Bool {
    var id = place.id
    var name = place.name
    return id.withUTF8 { id in
      name.withUTF8 { name in
        append(
          id: id, name: name, coordinate: place.coordinate, radiusMeters: place.radiusMeters,
          detection: place.detection)
      }
    }
  }
}
