import FoundationEssentials

/// A place to monitor: a circle around a coordinate, with descriptive fields.
///
/// Places come from GeoJSON (`Point` features) or from the store. The descriptive fields follow
/// the visit-stamping pattern (a place annotation, an arrival sheet, a saved visit record).
@dynamicMemberLookup
public struct Place: Sendable, Hashable, Identifiable {
  /// Stable identifier (the GeoJSON feature `id` or `properties.id`).
  public var id: String
  /// Name shown to people. Required.
  public var name: String
  /// Centre of the place.
  public var coordinate: Coordinate
  /// Radius in metres within which the device counts as arrived (default 100).
  public var radiusMeters: Double
  /// The descriptive fields (category, subtitle, address, town, url, image, detail), read and
  /// written as the place's own properties: `place.town`.
  public var details: PlaceDetails
  /// When the place was created.
  public var created: Date?
  /// Whether the place has been visited (or stamped) at least once.
  public var visited: Bool
  /// How many visits have been recorded.
  public var visitCount: Int
  /// Per-place overrides of the detection defaults; `nil` fields use the monitor's defaults.
  public var detection: PlaceDetectionOverrides

  /// The default radius, metres.
  public static let defaultRadiusMeters = 100.0

  /// Creates a place.
  public init(
    id: String,
    name: String,
    coordinate: Coordinate,
    radiusMeters: Double = Place.defaultRadiusMeters,
    category: String? = nil,
    subtitle: String? = nil,
    address: String? = nil,
    town: String? = nil,
    url: String? = nil,
    image: String? = nil,
    detail: String? = nil,
    created: Date? = nil,
    visited: Bool = false,
    visitCount: Int = 0,
    detection: PlaceDetectionOverrides = PlaceDetectionOverrides()
  ) {
    self.id = id
    self.name = name
    self.coordinate = coordinate
    self.radiusMeters = radiusMeters
    self.details = PlaceDetails(
      category: category, subtitle: subtitle, address: address, town: town, url: url,
      image: image, detail: detail)
    self.created = created
    self.visited = visited
    self.visitCount = visitCount
    self.detection = detection
  }

  /// A descriptive field, such as `place.town`, read and written in ``details``.
  public subscript<Value>(dynamicMember field: WritableKeyPath<PlaceDetails, Value>) -> Value {
    get { details[keyPath: field] }
    set { details[keyPath: field] = newValue }
  }
}

/// Per-place detection settings that override the monitor's defaults. `nil` means "default".
public struct PlaceDetectionOverrides: Sendable, Hashable {
  /// Exit radius in metres (must exceed the place radius).
  public var exitRadiusMeters: Double?
  /// Worst horizontal accuracy, metres, of a fix that may change this place's state.
  public var maximumAccuracyMeters: Double?
  /// Consecutive fixes needed to confirm an arrival or a departure.
  public var confirmations: Int?
  /// Seconds of fix time a state must hold to be confirmed.
  public var dwellSeconds: Double?
  /// The group of places this one belongs to (GeoJSON `properties.group`).
  public var group: String?
  /// How a fix inside several places of `group` is shared (GeoJSON `properties.overlap`);
  /// `nil` means `.all`.
  public var overlap: PlaceOverlap?

  /// Creates overrides; all default to `nil`.
  public init(
    exitRadiusMeters: Double? = nil,
    maximumAccuracyMeters: Double? = nil,
    confirmations: Int? = nil,
    dwellSeconds: Double? = nil,
    group: String? = nil,
    overlap: PlaceOverlap? = nil
  ) {
    self.exitRadiusMeters = exitRadiusMeters
    self.maximumAccuracyMeters = maximumAccuracyMeters
    self.confirmations = confirmations
    self.dwellSeconds = dwellSeconds
    self.group = group
    self.overlap = overlap
  }
}

/// How the places of one group share a fix that lies inside several of them.
public enum PlaceOverlap: String, Sendable, Hashable, CaseIterable {
  /// Every place containing the fix counts it (the default): overlapping places are visited
  /// together.
  case all
  /// Only the nearest place containing the fix counts it (the stamping flow: the
  /// arrival is at the nearest place); a place with an open visit keeps fixes that are not
  /// clearly nearer another, and hands over to one that is.
  case nearest
}
