import WaymarkCore

/// The points of Google's location history exports, one JSON element at a time (the elements
/// ``JSONElementStream`` hands over).
///
/// - `Records.json` (Takeout): `locations[]`, each with `latitudeE7`, `longitudeE7`,
///   `accuracy` (metres), `altitude`, `velocity` (m/s), `heading` and `timestamp` (ISO 8601)
///   or, in older exports, `timestampMs` (milliseconds, as a string).
/// - Semantic Location History (Takeout, one file a month): `timelineObjects[]`, each an
///   `activitySegment` (its `simplifiedRawPath.points` with `latE7`/`lngE7`/`timestamp`, its
///   `startLocation`/`endLocation` at `duration.startTimestamp`/`endTimestamp`, and, with no
///   raw path, its `waypointPath.waypoints` spread evenly over the duration) or a `placeVisit`
///   (`location.latitudeE7`/`longitudeE7` held over `duration`: see ``visitPoints``).
/// - `Timeline.json` (exported on the phone): `semanticSegments[]` with `timelinePath[]`
///   (`point` as `"48.1°, 11.5°"`, `time`), `visit.topCandidate.placeLocation.latLng` over
///   `startTime`/`endTime`, `activity.start`/`end.latLng`; and `rawSignals[]` with
///   `position.LatLng`, `accuracyMeters`, `altitudeMeters`, `speedMetersPerSecond` and
///   `timestamp`. The iPhone's export, an array of segments with `"geo:lat,lng"` strings and
///   `durationMinutesOffsetFromStartTime`, is read the same way.
///
/// Semantic visits and paths carry no accuracy: their points have none, and the stay detector
/// learns the noise from their spread.
enum TakeoutRecord {
  /// Seconds between the points a visit is held by.
  static let visitStepSeconds: Int64 = 60
  /// The most points one visit becomes (a longer visit has them further apart).
  static let maximumVisitPoints: Int64 = 1440
  /// The longest visit believed (31 days): a longer one is a bad record, not a month of points.
  static let maximumVisitMilliseconds: Int64 = 31 * 86_400_000

  /// Adds the points of `element` to `batch`.
  static func add(_ element: JSONElementStream.Element, to batch: ImportBatch) {
    let value: JSONValue
    switch element.value {
    case .success(let parsed): value = parsed
    case .failure(let error):
      return batch.bad(line: element.line, element.path, "not JSON (\(error.reason))")
    }
    guard case .object = value else {
      return batch.bad(line: element.line, element.path, "not an object")
    }
    let context = Context(batch: batch, line: element.line, path: element.path)
    switch element.key {
    case "locations": location(value, context)
    case "timelineObjects": timelineObject(value, context)
    case "rawSignals": rawSignal(value, context)
    case "semanticSegments", nil: segment(value, context)
    default: batch.skippedCount += 1
    }
  }

  /// Where an element is, for the points it adds and the reports.
  struct Context {
    var batch: ImportBatch
    var line: Int
    var path: String

    func add(
      _ milliseconds: Int64?, _ coordinate: (Double, Double)?, accuracy: Double? = nil,
      altitude: Double? = nil, speed: Double? = nil, course: Double? = nil, at suffix: String = ""
    ) {
      batch.add(
        milliseconds: milliseconds, latitude: coordinate?.0, longitude: coordinate?.1,
        altitude: altitude, accuracy: accuracy, speed: speed, course: course, line: line,
        location: path + suffix)
    }
  }

  private static func location(_ value: JSONValue, _ context: Context) {
    let time = value["timestamp"]?.importMilliseconds ?? value["timestampMs"]?.importMilliseconds
    context.add(
      time, e7(value, "latitudeE7", "longitudeE7"), accuracy: value["accuracy"]?.importNumber,
      altitude: value["altitude"]?.importNumber, speed: value["velocity"]?.importNumber,
      course: value["heading"]?.importNumber)
  }

  private static func timelineObject(_ value: JSONValue, _ context: Context) {
    if let visit = value["placeVisit"] {
      let (start, end) = span(visit["duration"])
      let place =
        e7(visit["location"], "latitudeE7", "longitudeE7")
        ?? e7(visit, "centerLatE7", "centerLngE7")
      visitPoints(from: start, to: end, at: place, context, at: ".placeVisit")
    } else if let segment = value["activitySegment"] {
      let (start, end) = span(segment["duration"])
      var path: [(Int64?, (Double, Double)?, Double?)] = []
      for point in segment[path: "simplifiedRawPath", "points"]?.importElements ?? [] {
        let time =
          point["timestamp"]?.importMilliseconds ?? point["timestampMs"]?.importMilliseconds
        path.append((time, e7(point, "latE7", "lngE7"), point["accuracyMeters"]?.importNumber))
      }
      if path.isEmpty {
        let waypoints = segment[path: "waypointPath", "waypoints"]?.importElements ?? []
        for (index, point) in waypoints.enumerated() {
          path.append(
            (
              spread(index + 1, of: waypoints.count + 1, start, end), e7(point, "latE7", "lngE7"),
              nil
            ))
        }
      }
      context.add(
        start, e7(segment["startLocation"], "latitudeE7", "longitudeE7"),
        at: ".activitySegment.startLocation")
      for (index, point) in path.enumerated() {
        context.add(point.0, point.1, accuracy: point.2, at: ".activitySegment.path[\(index)]")
      }
      context.add(
        end, e7(segment["endLocation"], "latitudeE7", "longitudeE7"),
        at: ".activitySegment.endLocation")
    } else {
      context.batch.skippedCount += 1
    }
  }

  private static func rawSignal(_ value: JSONValue, _ context: Context) {
    guard let position = value["position"] else {
      context.batch.skippedCount += 1
      return
    }
    context.add(
      position["timestamp"]?.importMilliseconds,
      latLng(position["LatLng"] ?? position["latLng"]),
      accuracy: position["accuracyMeters"]?.importNumber,
      altitude: position["altitudeMeters"]?.importNumber,
      speed: position["speedMetersPerSecond"]?.importNumber, at: ".position")
  }

  private static func segment(_ value: JSONValue, _ context: Context) {
    let start = value["startTime"]?.importMilliseconds
    let end = value["endTime"]?.importMilliseconds
    var found = false
    if let visit = value["visit"] {
      found = true
      let location = visit[path: "topCandidate", "placeLocation"]
      visitPoints(
        from: start, to: end, at: latLng(location?["latLng"] ?? location), context, at: ".visit")
    }
    if let activity = value["activity"] {
      found = true
      context.add(
        start, latLng(activity[path: "start", "latLng"] ?? activity["start"]), at: ".activity.start"
      )
      context.add(
        end, latLng(activity[path: "end", "latLng"] ?? activity["end"]), at: ".activity.end")
    }
    for (index, point) in (value["timelinePath"]?.importElements ?? []).enumerated() {
      found = true
      var time = point["time"]?.importMilliseconds
      if time == nil, let start,
        let minutes = point["durationMinutesOffsetFromStartTime"]?.importNumber,
        minutes.isFinite, abs(minutes) < 1e9
      {
        time = ImportTime.plausible(Double(start) + minutes * 60_000)
      }
      context.add(time, latLng(point["point"]), at: ".timelinePath[\(index)]")
    }
    if !found { context.batch.skippedCount += 1 }
  }

  /// A visit held at `place` from `start` to `end`: a point every ``visitStepSeconds`` (at
  /// most ``maximumVisitPoints``), the last at `end`, so the stay detector sees the device
  /// stand there for the visit's duration. A visit longer than ``maximumVisitMilliseconds``
  /// is bad.
  static func visitPoints(
    from start: Int64?, to end: Int64?, at place: (Double, Double)?, _ context: Context,
    at suffix: String
  ) {
    guard let start, let end, end >= start else {
      return context.add(nil, place, at: suffix + ".duration")
    }
    guard end - start <= maximumVisitMilliseconds else {
      return context.batch.bad(
        line: context.line, context.path + suffix, "a visit longer than 31 days")
    }
    let step = max(visitStepSeconds * 1000, (end - start) / maximumVisitPoints)
    var time = start
    while time < end {
      context.add(time, place, at: suffix)
      time += step
    }
    context.add(end, place, at: suffix)
  }

  /// The start and end of a Takeout `duration` object.
  private static func span(_ duration: JSONValue?) -> (Int64?, Int64?) {
    func time(_ name: String) -> Int64? {
      duration?[name]?.importMilliseconds ?? duration?[name + "Ms"]?.importMilliseconds
    }
    return (time("startTimestamp"), time("endTimestamp"))
  }

  /// The `index`-th of `count` instants evenly between `start` and `end`.
  private static func spread(_ index: Int, of count: Int, _ start: Int64?, _ end: Int64?) -> Int64?
  {
    guard let start, let end, end >= start, count > 0 else { return nil }
    return start + (end - start) / Int64(count) * Int64(index)
  }

  /// Latitude and longitude from E7 members of `value`.
  private static func e7(_ value: JSONValue?, _ latitude: String, _ longitude: String) -> (
    Double, Double
  )? {
    guard let value, let lat = value.importE7(latitude, limit: 90),
      let lon = value.importE7(longitude, limit: 180)
    else { return nil }
    return (lat, lon)
  }

  /// Latitude and longitude from `"48.1°, 11.5°"` or `"geo:48.1,11.5"`.
  static func latLng(_ value: JSONValue?) -> (Double, Double)? {
    guard var text = value?.importText else { return nil }
    if text.hasPrefix("geo:") { text.removeFirst(4) }
    let parts = text.split(separator: ",", omittingEmptySubsequences: false)
    guard parts.count == 2 else { return nil }
    func degrees(_ part: Substring) -> Double? {
      var trimmed = part.trimmedWhitespace
      if trimmed.hasSuffix("°") { trimmed = trimmed.dropLast() }
      return Double(trimmed)
    }
    guard let latitude = degrees(parts[0]), let longitude = degrees(parts[1]) else { return nil }
    return (latitude, longitude)
  }
}
