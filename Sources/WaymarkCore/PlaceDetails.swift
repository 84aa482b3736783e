/// What describes a place beyond its name and circle, the fields of a visit-stamping record:
/// kept by ``Place`` and by ``PlaceSnapshot`` (which reach them as their own properties, as in
/// `place.town`). Unknown fields are `nil`.
public struct PlaceDetails: Sendable, Hashable {
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

  /// Creates details from their fields.
  public init(
    category: String? = nil, subtitle: String? = nil, address: String? = nil, town: String? = nil,
    url: String? = nil, image: String? = nil, detail: String? = nil
  ) {
    self.category = category
    self.subtitle = subtitle
    self.address = address
    self.town = town
    self.url = url
    self.image = image
    self.detail = detail
  }

  /// The fields that are known, in the order of the places file, as (key, value) pairs:
  /// `category`, `subtitle`, `address`, `town`, `url`, `image`, `detail`.
  public var descriptiveFields: [(key: String, value: String)] {
    let fields: [(String, String?)] = [
      ("category", category), ("subtitle", subtitle), ("address", address), ("town", town),
      ("url", url), ("image", image), ("detail", detail),
    ]
    return fields.compactMap { key, value in value.map { (key, $0) } }
  }
}
