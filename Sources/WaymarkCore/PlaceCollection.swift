import FoundationEssentials

/// Places read from, or written as, a GeoJSON `FeatureCollection` of `Point` features.
///
/// Each feature is one place:
/// ```json
/// {"type": "Feature", "id": "blue-bottle",
///  "geometry": {"type": "Point", "coordinates": [13.4050, 52.5200]},
///  "properties": {"name": "Blue Bottle", "radius": 60, "category": "cafe"}}
/// ```
/// - `coordinates` are `[longitude, latitude]` in degrees (a third value, altitude, is ignored).
/// - The id is the feature's `id` (string or integer) or else `properties.id`; ids are unique.
/// - `properties.name` is required (at most 200 bytes, no control character, as the id);
///   `properties.radius` is metres (default 100, above 0 and at most 100,000).
/// - Optional strings: `category`, `subtitle`, `address`, `town`, `url`, `image`, `detail`;
///   optional `created` (ISO 8601 UTC).
/// - Optional detection overrides: `exitRadius` (metres, larger than `radius`),
///   `maximumAccuracy` (metres), `confirmations` (fixes, at least 1), `dwell` (seconds).
/// - Optional `group` (a non-empty string) and `overlap` (`"all"`, the default, or
///   `"nearest"`, which needs a `group`): how places of one group share a fix inside several
///   of them. Every place of a group has the same `overlap`.
/// - Other properties are ignored.
///
/// Decoding checks the whole file before returning anything: the first error names the feature
/// index (0-based) and the reason.
public enum PlaceCollection {
  /// Decodes every place in a GeoJSON document.
  ///
  /// - Parameter data: the UTF-8 GeoJSON text.
  /// - Returns: the places, in file order.
  /// - Throws: ``PlaceFileError`` naming the feature index and the reason.
  public static func decode(_ data: Data) throws(PlaceFileError) -> [Place] {
    var reader = JSONReader(Array(data))
    var places: [Place] = []
    var seen = Set<String>()
    var groupModes: [String: PlaceOverlap] = [:]
    var type: JSONValue?
    var sawFeatures = false
    func syntax(_ error: JSONReader.SyntaxError, feature: Int? = nil) -> PlaceFileError {
      PlaceFileError(
        featureIndex: feature, reason: "not valid JSON at byte \(error.offset): \(error.reason)")
    }
    do {
      reader.skipWhitespace()
      guard reader.consume(UInt8(ascii: "{")) else {
        _ = try reader.value()
        throw PlaceFileError(featureIndex: nil, reason: "not a GeoJSON FeatureCollection")
      }
      if !reader.consume(UInt8(ascii: "}")) {
        repeat {
          reader.skipWhitespace()
          let key = try reader.string()
          try reader.expect(UInt8(ascii: ":"))
          guard key == "features", reader.consume(UInt8(ascii: "[")) else {
            let value = try reader.value()
            if key == "type" { type = value }
            if key == "features" { sawFeatures = false }
            continue
          }
          sawFeatures = true
          if reader.consume(UInt8(ascii: "]")) { continue }
          repeat {
            let index = places.count
            let value: JSONValue
            do {
              value = try reader.value()
            } catch {
              throw syntax(error, feature: index)
            }
            do throws(Reason) {
              let place = try decodeFeature(value)
              guard seen.insert(place.id).inserted else {
                throw Reason("duplicate id '\(place.id)'")
              }
              if let group = place.detection.group {
                let mode = place.detection.overlap ?? .all
                if let earlier = groupModes[group], earlier != mode {
                  throw Reason(
                    "properties.overlap '\(mode.rawValue)' differs from '\(earlier.rawValue)' "
                      + "of an earlier place of group '\(group)'")
                }
                groupModes[group] = mode
              }
              places.append(place)
            } catch {
              throw PlaceFileError(featureIndex: index, reason: error.text)
            }
          } while reader.consume(UInt8(ascii: ","))
          try reader.expect(UInt8(ascii: "]"))
        } while reader.consume(UInt8(ascii: ","))
        try reader.expect(UInt8(ascii: "}"))
      }
      reader.skipWhitespace()
      guard reader.isAtEnd else { throw reader.error("text after the document") }
    } catch let error as PlaceFileError {
      throw error
    } catch let error as JSONReader.SyntaxError {
      throw syntax(error)
    } catch {
      throw PlaceFileError(featureIndex: nil, reason: "\(error)")
    }
    guard case .string("FeatureCollection") = type else {
      throw PlaceFileError(featureIndex: nil, reason: "not a GeoJSON FeatureCollection")
    }
    guard sawFeatures else {
      throw PlaceFileError(featureIndex: nil, reason: "'features' is not an array")
    }
    return places
  }

  /// Encodes places as a GeoJSON `FeatureCollection`, one feature per line.
  ///
  /// Coordinates are written with 7 decimals (about 1 cm), lengths (metres) with 1 decimal, or
  /// exactly when 1 decimal would change them (``addLength(_:_:to:)``), and dwell with 3
  /// (seconds). The store's `visited` and `visitCount` are written as properties too;
  /// ``decode(_:)`` ignores them.
  public static func encode(_ places: some Sequence<Place>) -> [UInt8] {
    var bytes = FeatureCollectionFrame.opening
    var frame = FeatureCollectionFrame()
    for place in places {
      frame.appendSeparator(to: &bytes)
      append(place, to: &bytes)
    }
    bytes.append(contentsOf: FeatureCollectionFrame.closing)
    return bytes
  }

  /// Adds a place's optional descriptive fields, detection overrides and visit state, in the
  /// order every Waymark output uses: `category`, `subtitle`, `address`, `town`, `url`, `image`,
  /// `detail`, `created`, `exitRadius`, `maximumAccuracy`, `confirmations`, `dwell`, `group`,
  /// `overlap`, `visited`, `visitCount` (absent values are left out).
  public static func addDescriptiveFields(of place: Place, to line: inout JSONLine) {
    line.add("category", place.category)
    line.add("subtitle", place.subtitle)
    line.add("address", place.address)
    line.add("town", place.town)
    line.add("url", place.url)
    line.add("image", place.image)
    line.add("detail", place.detail)
    line.add("created", place.created)
    addLength("exitRadius", place.detection.exitRadiusMeters, to: &line)
    addLength("maximumAccuracy", place.detection.maximumAccuracyMeters, to: &line)
    line.add("confirmations", place.detection.confirmations)
    line.add("dwell", place.detection.dwellSeconds, decimals: 3)
    line.add("group", place.detection.group)
    line.add("overlap", place.detection.overlap?.rawValue)
    line.add("visited", place.visited)
    line.add("visitCount", place.visitCount)
  }

  /// Adds a length in metres: with 1 decimal when that is the value (`60.0`, `12.5`), else in
  /// the shortest form that reads back as the same number, so that what is written always reads
  /// back valid: a radius of 0.04 m was exported as `0.0`, which an import refuses, and an exit
  /// radius of 100.04 m beside a radius of 100 m as equal to it (found by the round-trip check
  /// of Fuzz/PlacesFuzz.swift, tried by hand on such values).
  public static func addLength(_ name: String, _ meters: Double?, to line: inout JSONLine) {
    guard let meters, meters.isFinite else { return }
    if (meters * 10).rounded() / 10 == meters {
      line.add(name, meters, decimals: 1)
    } else {
      line.add(name, rawJSON: "\(meters)")
    }
  }

  /// A GeoJSON `Point` geometry, `[longitude, latitude]` with 7 decimals (about 1 cm).
  public static func pointGeometry(_ coordinate: Coordinate) -> JSONLine {
    var coordinates: [UInt8] = [UInt8(ascii: "[")]
    JSONLine.appendFixed(coordinate.longitude, decimals: 7, to: &coordinates)
    coordinates.append(UInt8(ascii: ","))
    JSONLine.appendFixed(coordinate.latitude, decimals: 7, to: &coordinates)
    coordinates.append(UInt8(ascii: "]"))
    var geometry = JSONLine()
    geometry.add("type", "Point")
    geometry.add("coordinates", rawJSON: String(decoding: coordinates, as: UTF8.self))
    return geometry
  }

  /// Appends one place as a GeoJSON `Feature` object (no newline).
  public static func append(_ place: Place, to bytes: inout [UInt8]) {
    var properties = JSONLine()
    properties.add("name", place.name)
    addLength("radius", place.radiusMeters, to: &properties)
    addDescriptiveFields(of: place, to: &properties)
    let geometry = pointGeometry(place.coordinate)
    var feature = JSONLine()
    feature.add("type", "Feature")
    feature.add("id", place.id)
    feature.add("geometry", object: geometry)
    feature.add("properties", object: properties)
    bytes.append(contentsOf: feature.closed)
  }

  private struct Reason: Error {
    var text: String
    init(_ text: String) { self.text = text }

    /// A member that is not what a place needs, as the file's errors say it:
    /// `properties.town is not a string`, `id is a number that is not an integer`.
    init(_ mismatch: JSONObjectReader.Mismatch) {
      text =
        mismatch.expected == "an integer"
        ? "\(mismatch.path) is a number that is not an integer"
        : "\(mismatch.path) is not \(mismatch.expected)"
    }
  }

  /// The place `value` describes, or the first reason it is not one.
  private static func decodeFeature(_ value: JSONValue) throws(Reason) -> Place {
    do {
      return try readFeature(value)
    } catch let reason as Reason {
      throw reason
    } catch let mismatch as JSONObjectReader.Mismatch {
      throw Reason(mismatch)
    } catch {
      throw Reason("\(error)")
    }
  }

  /// Reads one feature through `JSONObjectReader`; throws a `Reason`, or the reader's `Mismatch`
  /// for a member of the wrong type.
  private static func readFeature(_ value: JSONValue) throws -> Place {
    guard let feature = try? JSONObjectReader(value) else { throw Reason("not an object") }
    guard feature.lenientString("type") == "Feature" else {
      throw Reason("type is not 'Feature'")
    }
    guard let geometry = feature.lenientObject("geometry") else {
      throw Reason("missing geometry")
    }
    guard geometry.lenientString("type") == "Point" else {
      throw Reason("geometry is not a Point")
    }
    guard let (longitude, latitude) = geometry.lenientPosition("coordinates") else {
      throw Reason("coordinates are not [longitude, latitude]")
    }
    guard (-90.0...90.0).contains(latitude) else {
      throw Reason("latitude \(latitude) is outside -90...90")
    }
    guard (-180.0...180.0).contains(longitude) else {
      throw Reason("longitude \(longitude) is outside -180...180")
    }
    let properties = try feature.optionalObject("properties") ?? .empty(at: "properties")
    let featureID = try feature.optionalIdentifier("id")
    if featureID?.isEmpty == true { throw Reason("id is empty") }
    let propertyID = try properties.optionalIdentifier("id")
    if propertyID?.isEmpty == true { throw Reason("properties.id is empty") }
    guard let id = featureID ?? propertyID else {
      throw Reason("missing id (feature 'id' or 'properties.id')")
    }
    guard let name = try properties.optionalString("name"), !name.isEmpty else {
      throw Reason("missing properties.name")
    }
    if let problem = Place.textProblem(name) { throw Reason("properties.name \(problem)") }
    if let problem = Place.textProblem(id) { throw Reason("the id \(problem)") }
    let radius =
      try properties.optionalDouble("radius", expected: "a number of metres")
      ?? Place.defaultRadiusMeters
    if let problem = Place.radiusProblem(radius) { throw Reason("properties.radius \(problem)") }
    var created: Date?
    if let text = try properties.optionalString("created") {
      guard let date = Timestamp.parse(text) else {
        throw Reason("properties.created is not an ISO 8601 UTC time")
      }
      created = date
    }
    let exitRadius = try properties.optionalDouble("exitRadius", expected: "a number of metres")
    if let exitRadius {
      if let problem = Place.radiusProblem(exitRadius) {
        throw Reason("properties.exitRadius \(problem)")
      }
      guard exitRadius > radius else {
        throw Reason(
          "properties.exitRadius \(exitRadius) is not larger than the radius \(radius)")
      }
    }
    let confirmations = try properties.optionalDouble(
      "confirmations", expected: "a whole number >= 1",
      where: { $0 >= 1 && $0 <= 10_000 && $0 == $0.rounded() })
    let dwell = try properties.optionalDouble(
      "dwell", expected: "a number of seconds >= 0", where: { $0 >= 0 })
    let group = try properties.optionalString("group")
    if group?.isEmpty == true { throw Reason("properties.group is empty") }
    var overlap: PlaceOverlap?
    if let text = try properties.optionalString("overlap") {
      guard let mode = PlaceOverlap(rawValue: text) else {
        throw Reason("properties.overlap is not \"all\" or \"nearest\"")
      }
      guard mode == .all || group != nil else {
        throw Reason("properties.overlap \"nearest\" needs a properties.group")
      }
      overlap = mode
    }
    return Place(
      id: id, name: name, coordinate: Coordinate(latitude: latitude, longitude: longitude),
      radiusMeters: radius, category: try properties.optionalString("category"),
      subtitle: try properties.optionalString("subtitle"),
      address: try properties.optionalString("address"),
      town: try properties.optionalString("town"), url: try properties.optionalString("url"),
      image: try properties.optionalString("image"),
      detail: try properties.optionalString("detail"), created: created,
      detection: PlaceDetectionOverrides(
        exitRadiusMeters: exitRadius,
        maximumAccuracyMeters: try properties.optionalDouble(
          "maximumAccuracy", expected: "a positive number of metres", where: { $0 > 0 }),
        confirmations: confirmations.flatMap { Int(exactly: $0) }, dwellSeconds: dwell,
        group: group, overlap: overlap))
  }
}

/// Why a place file was rejected: the feature index (0-based) and the reason.
public struct PlaceFileError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The index of the offending feature in `features`, or `nil` for the document as a whole.
  public var featureIndex: Int?
  /// What is wrong.
  public var reason: String

  /// Creates an error.
  public init(featureIndex: Int?, reason: String) {
    self.featureIndex = featureIndex
    self.reason = reason
  }

  /// `feature 3: missing properties.name`, or the reason alone.
  public var description: String {
    featureIndex.map { "feature \($0): \(reason)" } ?? reason
  }
}
