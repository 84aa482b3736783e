import WaymarkCore

/// A populated place of GeoNames' table of towns and cities (at least 15,000 people, or the
/// seat of a state or province), as ``Gazetteer`` returns it.
public struct Town: Sendable, Hashable {
  /// The town's name as GeoNames spells it in its own alphabet, such as `Zürich` or `Kraków`.
  public var name: String
  /// The town's centre, degrees (GeoNames gives five decimals: about a metre).
  public var coordinate: Coordinate
  /// The country's ISO 3166-1 alpha-2 code, such as `CH`.
  public var countryCode: String
  /// The country's English name, such as `Switzerland`.
  public var country: String
  /// The state's two-letter code for a town in the United States (`CA`); `nil` elsewhere.
  public var region: String?
  /// The population GeoNames records.
  public var population: Int
  /// The town's IANA time zone, such as `Europe/Zurich`.
  public var timeZoneIdentifier: String

  /// Creates a town from its parts.
  public init(
    name: String, coordinate: Coordinate, countryCode: String, country: String,
    region: String?, population: Int, timeZoneIdentifier: String
  ) {
    self.name = name
    self.coordinate = coordinate
    self.countryCode = countryCode
    self.country = country
    self.region = region
    self.population = population
    self.timeZoneIdentifier = timeZoneIdentifier
  }
}
