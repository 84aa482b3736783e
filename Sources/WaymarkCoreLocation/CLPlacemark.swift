import Foundation
import WaymarkGazetteer

/// CoreLocation's `CLPlacemark`: what ``CLGeocoder`` knows of a place.
///
/// On Linux the answers come from the gazetteer built into Waymark (GeoNames' towns of at
/// least 15,000 people, offline), so a placemark names a town and its country, never a
/// street: ``thoroughfare``, ``subThoroughfare``, ``subAdministrativeArea``,
/// ``postalCode``, ``inlandWater``, ``ocean`` and ``areasOfInterest`` are `nil`, and
/// ``administrativeArea`` is a US state's code in the United States and `nil` elsewhere.
/// `postalAddress` (a Contacts type) does not exist here.
open class CLPlacemark: NSObject, NSCopying, @unchecked Sendable {
  // @unchecked: every stored property is a `let` of a Sendable type.

  /// The town's centre (not the location that was geocoded); the country's nearest town's
  /// when the placemark names no town.
  public let location: CLLocation?
  /// A circle around the town: its centre, and the distance within which a location is given
  /// the town as its ``locality`` (``CLGeocoder/localityRadius``).
  public let region: CLRegion?
  /// The town's time zone.
  public let timeZone: TimeZone?
  /// The place's name: the town's, else the country's.
  public let name: String?
  /// Always `nil`: the gazetteer knows no streets.
  public let thoroughfare: String?
  /// Always `nil`: the gazetteer knows no house numbers.
  public let subThoroughfare: String?
  /// The town, as GeoNames spells it (`Zürich`, `Kraków`).
  public let locality: String?
  /// The district of a large city the location is in, when GeoNames lists it as a town of its
  /// own (Berlin's `Mitte`); else `nil`.
  public let subLocality: String?
  /// A US state's two-letter code (`CA`) in the United States; `nil` elsewhere.
  public let administrativeArea: String?
  /// Always `nil`.
  public let subAdministrativeArea: String?
  /// Always `nil`.
  public let postalCode: String?
  /// The country's ISO 3166-1 alpha-2 code (`CH`).
  public let isoCountryCode: String?
  /// The country's English name (`Switzerland`).
  public let country: String?
  /// Always `nil`.
  public let inlandWater: String?
  /// Always `nil`.
  public let ocean: String?
  /// Always `nil`.
  public let areasOfInterest: [String]?

  /// A copy of `placemark`, as CoreLocation's `init(placemark:)`.
  public convenience init(placemark: CLPlacemark) {
    self.init(
      location: placemark.location, region: placemark.region, timeZone: placemark.timeZone,
      locality: placemark.locality, subLocality: placemark.subLocality,
      administrativeArea: placemark.administrativeArea,
      isoCountryCode: placemark.isoCountryCode, country: placemark.country)
  }

  /// A placemark naming `town`, with `district` (another town of the table, within it) as its
  /// ``subLocality``.
  convenience init(town: Town, district: Town?) {
    self.init(town: town, locality: town.name, subLocality: district?.name)
  }

  /// A placemark with `town`'s country alone (the location is far from the town).
  convenience init(countryOf town: Town) {
    self.init(town: town, locality: nil, subLocality: nil)
  }

  private convenience init(town: Town, locality: String?, subLocality: String?) {
    let centre = town.coordinate
    self.init(
      location: CLLocation(latitude: centre.latitude, longitude: centre.longitude),
      region: CLCircularRegion(
        center: centre, radius: CLGeocoder.localityRadius, identifier: town.name),
      timeZone: TimeZone(identifier: town.timeZoneIdentifier), locality: locality,
      subLocality: subLocality, administrativeArea: town.region,
      isoCountryCode: town.countryCode, country: town.country)
  }

  private init(
    location: CLLocation?, region: CLRegion?, timeZone: TimeZone?, locality: String?,
    subLocality: String?, administrativeArea: String?, isoCountryCode: String?, country: String?
  ) {
    self.location = location
    self.region = region
    self.timeZone = timeZone
    self.locality = locality
    name = locality ?? country
    thoroughfare = nil
    subThoroughfare = nil
    self.subLocality = subLocality
    self.administrativeArea = administrativeArea
    subAdministrativeArea = nil
    postalCode = nil
    self.isoCountryCode = isoCountryCode
    self.country = country
    inlandWater = nil
    ocean = nil
    areasOfInterest = nil
    super.init()
  }

  /// The placemark itself (it never changes).
  open func copy(with zone: NSZone? = nil) -> Any { self }

  /// The town and country, as iOS prints a placemark's description.
  open override var description: String {
    [name, administrativeArea, country].compactMap { $0 }.joined(separator: ", ")
  }
}
