import WaymarkCore

/// The points of a GeoJSON track, one feature at a time (the `features[]` elements
/// ``JSONElementStream`` hands over).
///
/// - A `Point` feature is a point: `coordinates` `[lon, lat]` or `[lon, lat, ele]`, its time
///   in the property `time` (or `timestamp`, `datetime`, `date`; ISO 8601 or a number of
///   seconds or milliseconds), and optionally `accuracy`, `speed`, `course`.
/// - A `LineString` (or `MultiLineString`) is a track with a time per coordinate in the
///   property `coordTimes` (as togeojson writes them from GPX) or `times` — an array per line
///   of a `MultiLineString`.
enum GeoJSONTrack {
  /// Adds the points of `element` (a feature) to `batch`.
  static func add(_ element: JSONElementStream.Element, to batch: ImportBatch) {
    guard element.key == "features" || element.key == nil else {
      batch.skippedCount += 1
      return
    }
    let feature: JSONValue
    switch element.value {
    case .success(let parsed): feature = parsed
    case .failure(let error):
      return batch.bad(line: element.line, element.path, "not JSON (\(error.reason))")
    }
    let context = TakeoutRecord.Context(batch: batch, line: element.line, path: element.path)
    let properties = feature["properties"]
    let geometry = feature["geometry"]
    switch geometry?["type"]?.importText {
    case "Point":
      let time = ["time", "timestamp", "datetime", "date"].lazy
        .compactMap { properties?[$0] }.first?.importMilliseconds
      let position = coordinate(geometry?["coordinates"])
      context.add(
        time, position.map { ($0.0, $0.1) }, accuracy: properties?["accuracy"]?.importNumber,
        altitude: position?.2, speed: properties?["speed"]?.importNumber,
        course: properties?["course"]?.importNumber, at: ".geometry")
    case "LineString":
      let times = (properties?["coordTimes"] ?? properties?["times"])?.importElements ?? []
      line(geometry?["coordinates"]?.importElements ?? [], times: times, context, at: "")
    case "MultiLineString":
      let times = (properties?["coordTimes"] ?? properties?["times"])?.importElements ?? []
      for (index, coordinates) in (geometry?["coordinates"]?.importElements ?? []).enumerated() {
        line(
          coordinates.importElements ?? [],
          times: index < times.count ? times[index].importElements ?? [] : [], context,
          at: "[\(index)]")
      }
    default:
      batch.bad(line: element.line, element.path, "not a Point or LineString feature")
    }
  }

  private static func line(
    _ coordinates: [JSONValue], times: [JSONValue], _ context: TakeoutRecord.Context,
    at suffix: String
  ) {
    for (index, value) in coordinates.enumerated() {
      let position = coordinate(value)
      context.add(
        index < times.count ? times[index].importMilliseconds : nil,
        position.map { ($0.0, $0.1) }, altitude: position?.2,
        at: ".geometry.coordinates\(suffix)[\(index)]")
    }
  }

  /// Latitude, longitude and altitude from a GeoJSON position `[lon, lat, ele?]`.
  private static func coordinate(_ value: JSONValue?) -> (Double, Double, Double?)? {
    guard let numbers = value?.importElements, numbers.count >= 2,
      let longitude = numbers[0].importNumber, let latitude = numbers[1].importNumber
    else { return nil }
    return (latitude, longitude, numbers.count > 2 ? numbers[2].importNumber : nil)
  }
}
