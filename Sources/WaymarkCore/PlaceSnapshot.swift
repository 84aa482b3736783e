/// A place as it was at one moment: what a visit keeps of its place, so that the visit still
/// says where it was after the place is renamed, moved or removed.
///
/// The fields are those of the stamping record: the name, the centre and the ``details``
/// (category, subtitle, address, town, url, image, detail), read as the snapshot's own
/// properties (`snapshot.town`). Unknown fields are `nil`.
@dynamicMemberLookup
public struct PlaceSnapshot: Sendable, Hashable {
  /// The place's name.
  public var name: String
  /// The place's centre.
  public var coordinate: Coordinate
  /// The place's descriptive fields.
  public var details: PlaceDetails

  /// Creates a snapshot from its fields.
  public init(
    name: String, coordinate: Coordinate, category: String? = nil, subtitle: String? = nil,
    address: String? = nil, town: String? = nil, url: String? = nil, image: String? = nil,
    detail: String? = nil
  ) {
    self.name = name
    self.coordinate = coordinate
    self.details = PlaceDetails(
      category: category, subtitle: subtitle, address: address, town: town, url: url,
      image: image, detail: detail)
  }

  /// The snapshot of `place` now.
  public init(_ place: Place) {
    self.name = place.name
    self.coordinate = place.coordinate
    self.details = place.details
  }

  /// A descriptive field, such as `snapshot.town`, read and written in ``details``.
  public subscript<Value>(dynamicMember field: WritableKeyPath<PlaceDetails, Value>) -> Value {
    get { details[keyPath: field] }
    set { details[keyPath: field] = newValue }
  }
}
