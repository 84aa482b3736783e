import FoundationEssentials
import Glibc

/// A point on the WGS 84 ellipsoid, in degrees.
///
/// Latitude is positive north, longitude positive east.
public struct Coordinate: Sendable, Hashable, Codable {
  /// Latitude in degrees, -90...90, positive north.
  public var latitude: Double
  /// Longitude in degrees, -180...180, positive east.
  public var longitude: Double

  /// Creates a coordinate from latitude and longitude in degrees.
  public init(latitude: Double, longitude: Double) {
    self.latitude = latitude
    self.longitude = longitude
  }

  /// Whether both values are finite and within their ranges.
  public var isValid: Bool {
    latitude.isFinite && longitude.isFinite && abs(latitude) <= 90 && abs(longitude) <= 180
  }
}

extension Coordinate {
  /// Mean Earth radius in metres (IUGG), used by the spherical formulas below.
  public static let earthRadiusMeters = 6_371_008.8

  /// Metres per degree of latitude (and of longitude at the equator) on that sphere.
  public static let metersPerDegree = earthRadiusMeters * .pi / 180

  /// Great-circle distance to `other` in metres (haversine on the mean sphere).
  ///
  /// The error against the ellipsoid is below 0.5 %, far under GNSS noise at place scales.
  public func distance(to other: Coordinate) -> Double {
    let phi1 = latitude * .pi / 180
    let phi2 = other.latitude * .pi / 180
    let dPhi = phi2 - phi1
    let dLambda = (other.longitude - longitude) * .pi / 180
    let sinHalfPhi = sin(dPhi / 2)
    let sinHalfLambda = sin(dLambda / 2)
    let a = sinHalfPhi * sinHalfPhi + cos(phi1) * cos(phi2) * sinHalfLambda * sinHalfLambda
    return 2 * Coordinate.earthRadiusMeters * asin(min(1, a.squareRoot()))
  }

  /// Initial bearing towards `other`, in degrees clockwise from true north, 0..<360.
  public func bearing(to other: Coordinate) -> Double {
    let phi1 = latitude * .pi / 180
    let phi2 = other.latitude * .pi / 180
    let dLambda = (other.longitude - longitude) * .pi / 180
    let y = sin(dLambda) * cos(phi2)
    let x = cos(phi1) * sin(phi2) - sin(phi1) * cos(phi2) * cos(dLambda)
    let degrees = atan2(y, x) * 180 / .pi
    return degrees < 0 ? degrees + 360 : degrees
  }

  /// The point reached by travelling `distanceMeters` along the great circle that starts
  /// with `bearingDegrees` (clockwise from true north).
  public func offset(by distanceMeters: Double, bearingDegrees: Double) -> Coordinate {
    let delta = distanceMeters / Coordinate.earthRadiusMeters
    let theta = bearingDegrees * .pi / 180
    let phi1 = latitude * .pi / 180
    let lambda1 = longitude * .pi / 180
    let phi2 = asin(sin(phi1) * cos(delta) + cos(phi1) * sin(delta) * cos(theta))
    let lambda2 =
      lambda1 + atan2(sin(theta) * sin(delta) * cos(phi1), cos(delta) - sin(phi1) * sin(phi2))
    var longitude = lambda2 * 180 / .pi
    longitude = (longitude + 540).truncatingRemainder(dividingBy: 360) - 180
    return Coordinate(latitude: phi2 * 180 / .pi, longitude: longitude)
  }
}

extension Coordinate: JSONCoded {
  /// `{"latitude":…,"longitude":…}`, degrees.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("latitude", exactly: latitude)
    line.add("longitude", exactly: longitude)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    self.init(latitude: try object.double("latitude"), longitude: try object.double("longitude"))
  }
}
