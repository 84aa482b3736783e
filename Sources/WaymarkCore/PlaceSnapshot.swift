/// A place as it was at one moment: what a visit keeps of its place, so that the visit still
/// says where it was after the place is renamed, moved or removed.
///
/// The fields are those of the stamping record (name, category, subtitle, address,
/// town, url, image, detail) and the place's centre. Unknown fields are `nil`.
public struct PlaceSnapshot: Sendable, Hashable {
  /// The place's name.
  public var name: String
  /// The place's centre.
  public var coordinate: Coordinate
  /// Free-form category, such as `cafe`.
  public var category: String?
  /// A second line of description.
  public var subtitle: String?
  /// Street address.
  public var address: String?
  /// Town or city.
  public var town: String?
  /// A web page about the place.
  public var url: String?
  /// An image reference (path or URL).
  public var image: String?
  /// Longer free text.
  public var detail: String?

  /// Creates a snapshot from its fields.
  public init(
    name: String, coordinate: Coordinate, category: String? = nil, subtitle: String? = nil,
    address: String? = nil, town: String? = nil, url: String? = nil, image: String? = nil,
    detail: String? = nil
  ) {
    self.name = name
    self.coordinate = coordinate
    self.category = category
    self.subtitle = subtitle
    self.address = address
    self.town = town
    self.url = url
    self.image = image
    self.detail = detail
  }

  /// The snapshot of `place` now.
  public init(_ place: Place) {
    self.init(
      name: place.name, coordinate: place.coordinate, category: place.category,
      subtitle: place.subtitle, address: place.address, town: place.town, url: place.url,
      image: place.image, detail: place.detail)
  }

  /// The descriptive fields that are known, in the order of the places file, as
  /// (key, value) pairs: `category`, `subtitle`, `address`, `town`, `url`, `image`, `detail`.
  public var descriptiveFields: [(key: String, value: String)] {
    let fields: [(String, String?)] = [
      ("category", category), ("subtitle", subtitle), ("address", address), ("town", town),
      ("url", url), ("image", image), ("detail", detail),
    ]
    return fields.compactMap { key, value in value.map { (key, $0) } }
  }
}
