import FoundationEssentials
import Glibc
import WaymarkCore

/// Projects coordinates onto the pixels of a map: a local equirectangular projection about the
/// map's centre, with the same scale east-west and north-south at the centre's latitude, so a
/// circle of a place's radius is drawn to scale and a distance measured on the map is the
/// distance on the ground (within 1 % for the few kilometres of a drive).
///
/// North is up. Longitudes are taken relative to the centre's, across the antimeridian too.
struct MapProjection: Sendable, Equatable {
  /// The coordinate at the centre of the map.
  let center: Coordinate
  /// Ground metres per pixel, at the centre's latitude.
  let metersPerPixel: Double
  /// Map width, pixels.
  let width: Int
  /// Map height, pixels.
  let height: Int

  /// Fits the box of `coordinates` into `width` pixels, with `margin` pixels on every side; the
  /// height follows from the box's shape, between `minimumHeight` and `maximumHeight` pixels.
  ///
  /// - Parameters:
  ///   - coordinates: what must be on the map, read once; at least one.
  ///   - padMeters: ground metres to keep around each coordinate (a place's radius).
  ///   - minimumExtentMeters: the smallest ground width or height shown, so a track that stood
  ///     still is not magnified to the millimetre.
  init?(
    fitting coordinates: some Sequence<(coordinate: Coordinate, padMeters: Double)>, width: Int,
    minimumHeight: Int, maximumHeight: Int, margin: Int, minimumExtentMeters: Double = 200
  ) {
    var iterator = coordinates.makeIterator()
    guard let first = iterator.next() else { return nil }
    // The box, in metres from the first coordinate (which fixes the reference longitude).
    let reference = Self(center: first.coordinate, metersPerPixel: 1, width: 0, height: 0)
    var minX = Double.infinity
    var maxX = -Double.infinity
    var minY = Double.infinity
    var maxY = -Double.infinity
    for (coordinate, pad) in coordinates {
      let (x, y) = reference.meters(coordinate)
      minX = min(minX, x - pad)
      maxX = max(maxX, x + pad)
      minY = min(minY, y - pad)
      maxY = max(maxY, y + pad)
    }
    let extentX = max(maxX - minX, minimumExtentMeters)
    let extentY = max(maxY - minY, minimumExtentMeters)
    let inner = Double(width - 2 * margin)
    let innerHeight = (inner * extentY / extentX).rounded()
    let height = min(max(Int(innerHeight) + 2 * margin, minimumHeight), maximumHeight)
    let scale = max(extentX / inner, extentY / Double(height - 2 * margin))
    let centerLatitude = first.coordinate.latitude + (minY + maxY) / 2 / Coordinate.metersPerDegree
    let centerLongitude =
      first.coordinate.longitude + (minX + maxX) / 2
      / (Coordinate.metersPerDegree * cos(centerLatitude * .pi / 180))
    self.init(
      center: Coordinate(latitude: centerLatitude, longitude: Self.wrapped(centerLongitude)),
      metersPerPixel: scale, width: width, height: height)
  }

  init(center: Coordinate, metersPerPixel: Double, width: Int, height: Int) {
    self.center = center
    self.metersPerPixel = metersPerPixel
    self.width = width
    self.height = height
  }

  /// East and north metres of `coordinate` from the centre.
  func meters(_ coordinate: Coordinate) -> (x: Double, y: Double) {
    let longitude = Self.wrapped(coordinate.longitude - center.longitude)
    return (
      longitude * Coordinate.metersPerDegree * cos(center.latitude * .pi / 180),
      (coordinate.latitude - center.latitude) * Coordinate.metersPerDegree
    )
  }

  /// The pixel of `coordinate`: x to the right, y down, (0, 0) the top-left corner.
  func point(_ coordinate: Coordinate) -> (x: Double, y: Double) {
    let (x, y) = meters(coordinate)
    return (Double(width) / 2 + x / metersPerPixel, Double(height) / 2 - y / metersPerPixel)
  }

  /// `meters` ground metres, in pixels.
  func pixels(_ meters: Double) -> Double { meters / metersPerPixel }

  /// `degrees` in -180..<180.
  private static func wrapped(_ degrees: Double) -> Double {
    var value = degrees.truncatingRemainder(dividingBy: 360)
    if value >= 180 { value -= 360 }
    if value < -180 { value += 360 }
    return value
  }
}
