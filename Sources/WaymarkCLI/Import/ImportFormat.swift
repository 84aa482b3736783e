/// The formats `waymark import` reads, chosen by `--format`, else by the file's name and its
/// first bytes.
enum ImportFormat: String, CaseIterable {
  /// GPX 1.0/1.1 tracks.
  case gpx
  /// Google Takeout's `Records.json`.
  case records
  /// Google Takeout's Semantic Location History (`YYYY_MONTH.json`).
  case semantic
  /// The phone's Timeline export (`Timeline.json`).
  case timeline
  /// A GeoJSON FeatureCollection of Points with times, or LineStrings with `coordTimes`.
  case geojson
  /// A CSV track with a header row.
  case csv

  /// Whether the file is JSON, read by ``JSONElementStream``.
  var isJSON: Bool { self != .gpx && self != .csv }

  /// The format of a file named `path` that starts with `head`, or `nil` when neither tells.
  static func detect(path: String, head: [UInt8]) -> ImportFormat? {
    let name = path.split(separator: "/").last.map { $0.lowercased() } ?? ""
    if name.hasSuffix(".gpx") { return .gpx }
    if name.hasSuffix(".csv") || name.hasSuffix(".tsv") { return .csv }
    if name.hasSuffix(".geojson") { return .geojson }
    guard let first = head.first(where: { $0 > 0x20 }) else {
      return name.hasSuffix(".json") ? nil : .csv
    }
    switch first {
    case UInt8(ascii: "<"):
      return head.firstRange(of: Array("<gpx".utf8)) != nil ? .gpx : nil
    case UInt8(ascii: "{"), UInt8(ascii: "["):
      let text = String(decoding: head, as: UTF8.self)
      if text.contains("\"locations\"") { return .records }
      if text.contains("\"timelineObjects\"") { return .semantic }
      if text.contains("\"semanticSegments\"") || text.contains("\"rawSignals\"")
        || (first == UInt8(ascii: "[") && text.contains("\"startTime\""))
      {
        return .timeline
      }
      if text.contains("\"FeatureCollection\"") || text.contains("\"features\"") {
        return .geojson
      }
      return nil
    default:
      return name.hasSuffix(".json") ? nil : .csv
    }
  }
}
