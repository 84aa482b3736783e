import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkGazetteer

/// What the interactive map's script draws, as one JSON object in the page: the tile layer,
/// the box to fit, the track at each zoom level (``MapTrackLevels``), the places and the visits
/// and pass-throughs, each with the lines of its popup.
///
/// Visits are numbered from 1 in arrival order (the order of ``MapContent/stays``): the page
/// opens `map.html#visit=3` with the third one's popup shown.
struct MapLeafletData {
  /// OpenStreetMap's tile server, the default of `--tiles`.
  static let openStreetMapTiles = "https://tile.openstreetmap.org/{z}/{x}/{y}.png"
  /// The attribution OpenStreetMap's tiles require, as HTML.
  static let openStreetMapAttribution =
    "&copy; <a href=\"https://www.openstreetmap.org/copyright\">OpenStreetMap</a> contributors"

  /// The content drawn.
  let content: MapContent
  /// The tile URL template (`{z}`, `{x}`, `{y}`), or `nil` for no tiles.
  let tiles: String?
  /// The track at each zoom level.
  let levels: MapTrackLevels

  /// The data of `content` over the tiles of `tiles` (`nil`: none).
  init(_ content: MapContent, tiles: String?) {
    self.content = content
    self.tiles = tiles
    levels = MapTrackLevels(content.segments)
  }

  /// The JSON object, with every `</` written `<\/` so it can sit in a `<script>` element.
  var json: String {
    var object = JSONLine()
    object.add("tiles", tiles)
    object.add("attribution", tiles == nil ? nil : Self.openStreetMapAttribution)
    object.add("bounds", rawJSON: bounds)
    object.add(
      "levels",
      objects: levels.levels.map { level in
        var item = JSONLine()
        item.add("zoom", level.zoom)
        item.add("points", level.pointCount)
        item.add("lines", rawJSON: MapTrackLevels.encoded(level.lines))
        return item
      })
    object.add("places", objects: content.circles.map(place))
    object.add("stays", objects: content.stays.enumerated().map { stay($1, number: $0 + 1) })
    object.add("labels", objects: labels)
    return object.string.replacing("</", with: "<\\/")
  }

  /// `[[south, west], [north, east]]`: the track, the visited places' circles and the visits.
  private var bounds: String {
    var box = MapContent.Box()
    for point in content.segments.joined() { box.add(point, padMeters: 0) }
    let visited = Set(content.stays.map(\.placeID))
    for circle in content.circles where visited.contains(circle.id) {
      box.add(circle.coordinate, padMeters: circle.radiusMeters)
    }
    for stay in content.stays { box.add(stay.coordinate, padMeters: 0) }
    return "[[\(box.south.fixed(7)),\(box.west.fixed(7))],[\(box.north.fixed(7)),"
      + "\(box.east.fixed(7))]]"
  }

  /// The SVG's labels (a place's name and its visits' durations, ``SVGMapRenderer/label(_:)``),
  /// each on its group's last visit (by number), which is drawn on top of the others.
  private var labels: [JSONLine] {
    guard let renderer = SVGMapRenderer(content) else { return [] }
    return renderer.groups.compactMap { group in
      guard let last = group.stays.last,
        let index = content.stays.lastIndex(where: {
          $0.placeID == last.placeID && $0.arrival == last.arrival
            && $0.placeRemoved == last.placeRemoved
        })
      else { return nil }
      var item = JSONLine()
      item.add("number", index + 1)
      item.add("text", renderer.label(group))
      item.add("side", group.first.passThrough == nil ? "top" : "right")
      return item
    }
  }

  private func place(_ circle: MapContent.Circle) -> JSONLine {
    var item = JSONLine()
    item.add("id", circle.id)
    item.add("lat", circle.coordinate.latitude, decimals: 7)
    item.add("lon", circle.coordinate.longitude, decimals: 7)
    item.add("radius", circle.radiusMeters, decimals: 1)
    var lines = ["\(circle.name) (\(circle.id))"]
    if let category = circle.category { lines.append(category) }
    lines.append("radius \(circle.radiusMeters.fixed(1)) m")
    let stays = content.stays.filter { $0.placeID == circle.id && !$0.placeRemoved }
    if !stays.isEmpty { lines.append("\(stays.count) visit(s):") }
    for stay in stays {
      let span =
        stay.departure.map { " to \(Timestamp.format($0)) (\(duration(stay, $0)))" } ?? ", open"
      lines.append("\(stay.passThrough == nil ? "" : "pass-through ")\(time(stay.arrival))\(span)")
    }
    item.add("lines", rawJSON: Self.strings(lines))
    return item
  }

  private func stay(_ stay: MapContent.Stay, number: Int) -> JSONLine {
    var item = JSONLine()
    item.add("number", number)
    item.add("place", stay.placeID)
    item.add("lat", stay.coordinate.latitude, decimals: 7)
    item.add("lon", stay.coordinate.longitude, decimals: 7)
    if let (entry, exit) = stay.passThrough {
      item.add(
        "chord",
        rawJSON: "[[\(entry.latitude.fixed(7)),\(entry.longitude.fixed(7))],"
          + "[\(exit.latitude.fixed(7)),\(exit.longitude.fixed(7))]]")
    }
    var lines = [
      "\(stay.name) (\(stay.placeID))\(stay.placeRemoved ? ", removed" : "")",
      stay.passThrough == nil ? "visit \(number)" : "pass-through \(number)",
      "arrival \(time(stay.arrival))",
    ]
    // The town: the place's own, else the one the gazetteer built in finds there.
    if let town = stay.town
      ?? Gazetteer.bundled.locality(of: stay.coordinate).map({
        "\($0.town.name), \($0.town.country)"
      })
    {
      lines.insert("in \(town)", at: 1)
    }
    if let departure = stay.departure {
      lines.append("departure \(time(departure))")
      lines.append("duration \(duration(stay, departure))")
    } else {
      lines.append("departure: none yet (open)")
    }
    item.add("lines", rawJSON: Self.strings(lines))
    return item
  }

  private func time(_ date: Date) -> String { Timestamp.format(date) }

  private func duration(_ stay: MapContent.Stay, _ departure: Date) -> String {
    VisitsCommand.duration(departure.timeIntervalSince(stay.arrival))
  }

  /// A JSON array of strings.
  private static func strings(_ values: [String]) -> String {
    var bytes: [UInt8] = [UInt8(ascii: "[")]
    for (index, value) in values.enumerated() {
      if index > 0 { bytes.append(UInt8(ascii: ",")) }
      JSONLine.appendString(value, to: &bytes)
    }
    bytes.append(UInt8(ascii: "]"))
    return String(decoding: bytes, as: UTF8.self)
  }
}
