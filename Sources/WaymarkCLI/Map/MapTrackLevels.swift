import FoundationEssentials
import Glibc
import WaymarkCore

/// The track thinned once for each band of zoom levels of the interactive map, so that a year
/// of history draws at any zoom with about the points that show there.
///
/// Each level is the track thinned by ``MapTrackThinner`` in the pixels of the web map (Web
/// Mercator, 256-pixel tiles) at the level's zoom; the page draws, at zoom `z`, the first level
/// whose zoom is at least `z` (the last level beyond), so no step drawn is shorter than a pixel
/// and a road driven again adds nothing up to the last level but one. The last level, at
/// ``finestZoom``, keeps every point a pixel from the last one kept there (about 0.6 m at the
/// equator, less further north): the detail of the recording.
struct MapTrackLevels {
  /// One thinned version of the track.
  struct Level {
    /// The largest zoom it is drawn at (and the one it was thinned at).
    var zoom: Int
    /// Its lines, each its points in time order (a line of one point is a dot).
    var lines: [[Coordinate]]
    /// The number of points of all its lines.
    var pointCount: Int { lines.reduce(0) { $0 + $1.count } }
  }

  /// The zoom levels thinned at: up to 16 the covered pixels are left out too; the finest only
  /// drops points less than a pixel apart (walking every pixel of a year at zoom 18 costs many
  /// times the rest, for little: 3 m of noise is 7 pixels there, so a road driven again is
  /// rarely covered).
  static let zooms = [4, 6, 8, 10, 12, 14, 16, finestZoom]
  /// The zoom of the finest level.
  static let finestZoom = 18

  /// The levels, coarsest first.
  let levels: [Level]

  /// Thins `segments` (each a segment's points in time order) at each of ``zooms``.
  init(_ segments: [[Coordinate]]) {
    levels = Self.zooms.map { zoom in
      var thinner = MapTrackThinner(unboundedHidingCovered: zoom < Self.finestZoom)
      var lines: [[Coordinate]] = []
      for segment in segments {
        let points = segment.map { Self.pixel($0, zoom: zoom) }
        for line in thinner.add(points) {
          lines.append(line.map { Self.coordinate($0, zoom: zoom) })
        }
      }
      return Level(zoom: zoom, lines: lines)
    }
  }

  /// The Web Mercator world size at `zoom`, pixels.
  static func worldSize(zoom: Int) -> Double { 256 * Double(1 << zoom) }

  /// Where `coordinate` is in the web map's world at `zoom`, pixels from its north-west corner.
  static func pixel(_ coordinate: Coordinate, zoom: Int) -> MapTrackThinner.Point {
    let size = worldSize(zoom: zoom)
    let latitude = min(max(coordinate.latitude, -85.0511), 85.0511) * .pi / 180
    let x = (coordinate.longitude + 180) / 360 * size
    let y = (1 - log(tan(.pi / 4 + latitude / 2)) / .pi) / 2 * size
    return (x, y)
  }

  /// The coordinate at pixel `point` of the world at `zoom` (``pixel(_:zoom:)`` undone).
  static func coordinate(_ point: MapTrackThinner.Point, zoom: Int) -> Coordinate {
    let size = worldSize(zoom: zoom)
    let longitude = point.x / size * 360 - 180
    let latitude = atan(sinh(.pi * (1 - 2 * point.y / size))) * 180 / .pi
    return Coordinate(latitude: latitude, longitude: longitude)
  }

  /// `lines` for the page: per line, integer millionths of a degree, the first point's latitude
  /// and longitude and then each point's difference from the previous one
  /// (`[[lat, lon, dlat, dlon, …], …]`), about a third of the size of plain coordinates.
  static func encoded(_ lines: [[Coordinate]]) -> String {
    var bytes: [UInt8] = [UInt8(ascii: "[")]
    for (index, line) in lines.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      bytes.append(UInt8(ascii: "["))
      var last = (latitude: 0, longitude: 0)
      for (position, point) in line.enumerated() {
        let latitude = Int(saturating: (point.latitude * 1e6).rounded())
        let longitude = Int(saturating: (point.longitude * 1e6).rounded())
        if position > 0 { bytes.append(UInt8(ascii: ",")) }
        JSONLine.appendInteger(latitude - last.latitude, to: &bytes)
        bytes.append(UInt8(ascii: ","))
        JSONLine.appendInteger(longitude - last.longitude, to: &bytes)
        last = (latitude, longitude)
      }
      bytes.append(UInt8(ascii: "]"))
    }
    bytes.append(UInt8(ascii: "]"))
    return String(decoding: bytes, as: UTF8.self)
  }
}
