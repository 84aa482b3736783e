import Foundation
import Testing
import WaymarkTesting

/// Where `waymark map` draws the demo's places, checked against geometry worked out here by
/// hand from `Demo/places.geojson` (haversine distances and initial bearings on a sphere of
/// 6,371 km, nothing of Waymark's): the numbers come from the places file, not from the
/// renderer, so a wrong projection, scale or orientation fails.
@Suite struct MapGeometryTests {
  /// A place of the demo's places file.
  struct Place {
    var latitude: Double
    var longitude: Double
    var radiusMeters: Double
  }

  /// A place circle of the SVG: centre and radius, pixels.
  struct Circle {
    var x: Double
    var y: Double
    var r: Double
  }

  static func demoPlaces() throws -> [String: Place] {
    let url = Products.packageRoot.appendingPathComponent("Demo/places.geojson")
    let json = try JSONSerialization.jsonObject(with: Data(contentsOf: url)) as? [String: Any]
    var places: [String: Place] = [:]
    for case let feature as [String: Any] in json?["features"] as? [Any] ?? [] {
      guard let id = feature["id"] as? String,
        let point = (feature["geometry"] as? [String: Any])?["coordinates"] as? [Double],
        let radius = (feature["properties"] as? [String: Any])?["radius"] as? Double
      else { continue }
      places[id] = Place(latitude: point[1], longitude: point[0], radiusMeters: radius)
    }
    return places
  }

  /// The `<circle class="place">` elements of `svg`, by place id.
  static func circles(_ svg: String) throws -> [String: Circle] {
    let pattern = try NSRegularExpression(
      pattern:
        #"<circle class="place" data-place="([^"]+)"[^>]* cx="([-0-9.]+)" cy="([-0-9.]+)" r="([0-9.]+)""#
    )
    var circles: [String: Circle] = [:]
    let range = NSRange(svg.startIndex..., in: svg)
    for match in pattern.matches(in: svg, range: range) {
      func group(_ index: Int) -> String { String(svg[Range(match.range(at: index), in: svg)!]) }
      circles[group(1)] = Circle(
        x: Double(group(2))!, y: Double(group(3))!, r: Double(group(4))!)
    }
    return circles
  }

  static let earthRadius = 6_371_000.0

  static func radians(_ degrees: Double) -> Double { degrees * .pi / 180 }

  /// Great-circle distance, metres (haversine).
  static func distance(_ a: Place, _ b: Place) -> Double {
    let dLat = radians(b.latitude - a.latitude)
    let dLon = radians(b.longitude - a.longitude)
    let h =
      sin(dLat / 2) * sin(dLat / 2)
      + cos(radians(a.latitude)) * cos(radians(b.latitude)) * sin(dLon / 2) * sin(dLon / 2)
    return 2 * earthRadius * asin(h.squareRoot())
  }

  /// Initial bearing from `a` to `b`, degrees clockwise from north.
  static func bearing(_ a: Place, _ b: Place) -> Double {
    let dLon = radians(b.longitude - a.longitude)
    let y = sin(dLon) * cos(radians(b.latitude))
    let x =
      cos(radians(a.latitude)) * sin(radians(b.latitude))
      - sin(radians(a.latitude)) * cos(radians(b.latitude)) * cos(dLon)
    return atan2(y, x) * 180 / .pi
  }

  /// The difference of two bearings, degrees, in 0...180.
  static func angle(_ a: Double, _ b: Double) -> Double {
    let d = abs(a - b).truncatingRemainder(dividingBy: 360)
    return d > 180 ? 360 - d : d
  }

  @Test("the places stand where the ground puts them: distances, bearings, radii, scale bar")
  func placesAreWhereTheGroundPutsThem() throws {
    let demo = try DemoStore()
    let run = try demo.map([])
    #expect(run.status == 0, "\(run.stderr)")
    let svg = run.output
    let places = try Self.demoPlaces()
    let circles = try Self.circles(svg)
    #expect(Set(circles.keys) == Set(places.keys), "\(circles.keys.sorted())")

    // The scale, from the largest circle: its radius in metres over its radius in pixels.
    let (scaleID, scaleCircle) = try #require(circles.max { $0.value.r < $1.value.r })
    let metersPerPixel = try #require(places[scaleID]).radiusMeters / scaleCircle.r

    // Every circle is its place's radius at that scale, to the SVG's rounding: a tenth of a
    // pixel (half of it on this circle, at most half on the scale's; measured: 0.05 px).
    for (id, circle) in circles {
      let place = try #require(places[id])
      let expected = place.radiusMeters / metersPerPixel
      #expect(abs(circle.r - expected) <= 0.1, "\(id): r \(circle.r) px, not \(expected) px")
    }

    // Every pair: the distance on the map is the great-circle distance (within 0.04 %;
    // measured: 0.018 %, mostly the office circle's 68.1 px rounded to a tenth), and north is
    // up, east is right (the direction on the map is the initial bearing within 0.02°;
    // measured: 0.0094°).
    var worstDistance = 0.0
    var worstBearing = 0.0
    let ids = places.keys.sorted()
    for (index, a) in ids.enumerated() {
      for b in ids[(index + 1)...] {
        let (p, q) = (try #require(circles[a]), try #require(circles[b]))
        let (from, to) = (try #require(places[a]), try #require(places[b]))
        let ground = Self.distance(from, to)
        let onMap = hypot(q.x - p.x, q.y - p.y) * metersPerPixel
        let direction = atan2(q.x - p.x, p.y - q.y) * 180 / .pi
        worstDistance = max(worstDistance, abs(onMap - ground) / ground)
        worstBearing = max(worstBearing, Self.angle(direction, Self.bearing(from, to)))
      }
    }
    #expect(worstDistance <= 4e-4, "worst distance error \(worstDistance * 100) %")
    #expect(worstBearing <= 0.02, "worst bearing error \(worstBearing)°")

    // The scale bar: the longest 1, 2 or 5 × 10ⁿ m at most a quarter of the map wide (240
    // pixels), drawn that long at the circles' scale (within 0.06 %; measured: 170.2 px are
    // 199.94 m, 0.03 %).
    let bar = try #require(
      svg.range(
        of:
          #"<g class="scale-bar" data-meters="([0-9.]+)"><path d="M[0-9.]+ [0-9.]+v8h([0-9.]+)v-8""#,
        options: .regularExpression))
    let numbers = svg[bar].split(whereSeparator: { !"0123456789.".contains($0) })
      .compactMap { Double($0) }
    let (meters, pixels) = (numbers[0], numbers[numbers.count - 2])
    let longest = 240 * metersPerPixel
    let roundLengths = (-1...6).flatMap { power in
      [1.0, 2, 5].map { $0 * pow(10, Double(power)) }
    }
    #expect(meters == roundLengths.filter { $0 <= longest }.max(), "\(meters) m, \(longest) m fit")
    #expect(abs(pixels * metersPerPixel - meters) <= 6e-4 * meters, "\(pixels) px")
  }
}
