import Foundation
import Testing
import WaymarkCore

@Suite("GeoJSON places")
struct PlaceCollectionTests {
  static let full = """
    {"type": "FeatureCollection", "features": [
      {"type": "Feature", "id": "blue-bottle",
       "geometry": {"type": "Point", "coordinates": [13.4050, 52.5200, 34.0]},
       "properties": {"name": "Blue Bottle", "radius": 60, "category": "cafe",
         "subtitle": "Coffee", "address": "Main St 1", "town": "Berlin",
         "url": "https://example.org", "image": "cafe.jpg", "detail": "Good beans",
         "created": "2026-11-01T08:00:00Z", "exitRadius": 90, "maximumAccuracy": 40,
         "confirmations": 2, "dwell": 30, "visited": true, "extra": [1, 2]}},
      {"type": "Feature", "id": 42,
       "geometry": {"type": "Point", "coordinates": [-0.1276, 51.5072]},
       "properties": {"name": "Number id"}},
      {"type": "Feature",
       "geometry": {"type": "Point", "coordinates": [2.35, 48.85]},
       "properties": {"id": "from-properties", "name": "Paris", "category": null}}
    ]}
    """

  @Test("every field, ids from feature or properties, defaults")
  func decodesFields() throws {
    let places = try PlaceCollection.decode(Data(Self.full.utf8))
    #expect(places.map(\.id) == ["blue-bottle", "42", "from-properties"])
    let cafe = places[0]
    #expect(cafe.name == "Blue Bottle")
    #expect(cafe.coordinate == Coordinate(latitude: 52.52, longitude: 13.405))
    #expect(cafe.radiusMeters == 60)
    #expect(cafe.category == "cafe")
    #expect(cafe.subtitle == "Coffee")
    #expect(cafe.address == "Main St 1")
    #expect(cafe.town == "Berlin")
    #expect(cafe.url == "https://example.org")
    #expect(cafe.image == "cafe.jpg")
    #expect(cafe.detail == "Good beans")
    #expect(cafe.created == Timestamp.parse("2026-11-01T08:00:00Z"))
    #expect(
      cafe.detection
        == PlaceDetectionOverrides(
          exitRadiusMeters: 90, maximumAccuracyMeters: 40, confirmations: 2, dwellSeconds: 30))
    #expect(cafe.visited == false)  // store state is not read from files
    #expect(places[1].radiusMeters == Place.defaultRadiusMeters)
    #expect(places[1].detection == PlaceDetectionOverrides())
    #expect(places[2].category == nil)
  }

  @Test("export and import give the same places")
  func roundTrip() throws {
    let places = try PlaceCollection.decode(Data(Self.full.utf8))
    let again = try PlaceCollection.decode(Data(PlaceCollection.encode(places)))
    #expect(again == places)
  }

  @Test("lengths that 1 decimal would change are exported exactly, so the export imports again")
  func smallAndCloseLengthsRoundTrip() throws {
    let places = [
      Place(
        id: "tiny", name: "Tiny", coordinate: Coordinate(latitude: 45.7, longitude: 4.8),
        radiusMeters: 0.04, detection: PlaceDetectionOverrides(maximumAccuracyMeters: 0.01)),
      Place(
        id: "close", name: "Close", coordinate: Coordinate(latitude: 45.7, longitude: 4.8),
        radiusMeters: 100, detection: PlaceDetectionOverrides(exitRadiusMeters: 100.04)),
    ]
    let exported = PlaceCollection.encode(places)
    let text = String(decoding: exported, as: UTF8.self)
    #expect(text.contains(#""radius":0.04,"#) && text.contains(#""exitRadius":100.04,"#))
    #expect(text.contains(#""radius":100.0,"#), "a length of 1 decimal is written as before")
    let again = try PlaceCollection.decode(Data(exported))
    #expect(again.map(\.radiusMeters) == [0.04, 100])
    #expect(again.map(\.detection.exitRadiusMeters) == [nil, 100.04])
    #expect(again.first?.detection.maximumAccuracyMeters == 0.01)
    #expect(PlaceCollection.encode(again) == exported)
  }

  static let badFeatures: [(String, String)] = [
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{}}"#,
      "missing properties.name"
    ),
    (
      #"{"type":"Feature","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n"}}"#,
      "missing id (feature 'id' or 'properties.id')"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"LineString","coordinates":[[1,2],[3,4]]},"properties":{"name":"n"}}"#,
      "geometry is not a Point"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1]},"properties":{"name":"n"}}"#,
      "coordinates are not [longitude, latitude]"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[10,95]},"properties":{"name":"n"}}"#,
      "latitude 95.0 is outside -90...90"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[200,5]},"properties":{"name":"n"}}"#,
      "longitude 200.0 is outside -180...180"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n","radius":-5}}"#,
      "properties.radius is not a number of metres above 0 and at most 100000"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n","radius":1e19}}"#,
      "properties.radius is not a number of metres above 0 and at most 100000"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n","radius":true}}"#,
      "properties.radius is not a number of metres"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"a\nb"}}"#,
      "properties.name contains a control character"
    ),
    (
      #"{"type":"Feature","id":"x\u202e","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n"}}"#,
      "the id contains a control character"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n","radius":50,"exitRadius":40}}"#,
      "properties.exitRadius 40.0 is not larger than the radius 50.0"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n","confirmations":1.5}}"#,
      "properties.confirmations is not a whole number >= 1"
    ),
    (
      #"{"type":"Feature","id":"x","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n","town":7}}"#,
      "properties.town is not a string"
    ),
    (
      #"{"type":"Feature","id":1.5,"geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"n"}}"#,
      "id is a number that is not an integer"
    ),
    (
      #"{"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"dup"}}"#,
      "duplicate id 'ok'"
    ),
    (#"[1]"#, "not an object"),
  ]

  @Test("a bad feature is named by its index and reason", arguments: badFeatures)
  func rejectsBadFeature(feature: String, reason: String) {
    let good =
      #"{"type":"Feature","id":"ok","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"fine"}}"#
    let text =
      #"{"type":"FeatureCollection","features":[\#(good),\#(good.replacingOccurrences(of: "\"ok\"", with: "\"ok2\"")),\#(feature)]}"#
    #expect(throws: PlaceFileError(featureIndex: 2, reason: reason)) {
      try PlaceCollection.decode(Data(text.utf8))
    }
  }

  @Test(
    "a document that is not a FeatureCollection is rejected as a whole",
    arguments: [
      ("{", "not valid JSON at byte 1: expected a string"),
      ("", "not valid JSON at byte 0: unexpected end of input"),
      ("[1]", "not a GeoJSON FeatureCollection"),
      (#"{"type":"Feature"}"#, "not a GeoJSON FeatureCollection"),
      (#"{"type":"FeatureCollection","features":{}}"#, "'features' is not an array"),
      (#"{"type":"FeatureCollection"}"#, "'features' is not an array"),
      (#"{"type":"FeatureCollection","features":[]} x"#, "not valid JSON at byte 43: text after"),
      (#"{"features":[],"type":"FeatureCollection",}"#, "not valid JSON at byte 42: expected a"),
    ])
  func rejectsDocument(text: String, reason: String) {
    do {
      _ = try PlaceCollection.decode(Data(text.utf8))
      Issue.record("accepted \(text)")
    } catch {
      #expect(error.featureIndex == nil)
      #expect(error.reason.hasPrefix(reason), "\(error.reason)")
    }
  }

  @Test("a JSON syntax error inside a feature names that feature")
  func syntaxErrorInFeature() {
    let text = #"""
      {"type":"FeatureCollection","features":[
        {"type":"Feature","id":"a","geometry":{"type":"Point","coordinates":[1,2]},"properties":{"name":"A"}},
        {"type":"Feature","id":"b","geometry":{"type":"Point","coordinates":[1,02]},"properties":{}}]}
      """#
    do {
      _ = try PlaceCollection.decode(Data(text.utf8))
      Issue.record("accepted a leading zero")
    } catch {
      #expect(error.featureIndex == 1)
      #expect(error.reason.hasSuffix("leading zero in number"))
    }
  }

  @Test("strings: escapes, surrogate pairs and UTF-8 are decoded; bad ones are rejected")
  func strings() throws {
    func detail(_ json: String) throws(PlaceFileError) -> String {
      let text =
        #"{"type":"FeatureCollection","features":[{"type":"Feature","id":"a","#
        + #""geometry":{"type":"Point","coordinates":[1e0,-2.5E+1]},"properties":{"name":"n","#
        + #""detail":"# + json + "}}]}"
      // The detail: free text (a name refuses control characters, which this test decodes).
      return try PlaceCollection.decode(Data(text.utf8))[0].detail ?? ""
    }
    #expect(try detail(#""Caf\u00e9 \"B\" \\ \/ \n\t""#) == "Caf\u{E9} \"B\" \\ / \n\t")
    #expect(try detail(#""\ud83d\ude00 Köln""#) == "\u{1F600} Köln")
    #expect(throws: PlaceFileError.self) { try detail(#""\ud83d x""#) }
    #expect(throws: PlaceFileError.self) { try detail("\"tab\there\"") }
    #expect(throws: PlaceFileError.self) { try detail(#""\x""#) }
    #expect(throws: PlaceFileError.self) { try detail(#""open"#) }
    #expect(throws: PlaceFileError.self) { try detail("tru") }
  }

  @Test("the error reads 'feature N: reason'")
  func errorText() {
    #expect("\(PlaceFileError(featureIndex: 3, reason: "missing id"))" == "feature 3: missing id")
  }
}
