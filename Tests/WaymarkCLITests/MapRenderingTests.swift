import Foundation
import Testing
import WaymarkCore

@testable import WaymarkCLI

/// The pure parts of `waymark map`: projection, scale bar, escaping, thinning, determinism.
@Suite struct MapRenderingTests {
  /// A few kilometres around `center`, in a fixed pseudo-random order.
  static func scatter(around center: Coordinate, count: Int, seed: UInt64) -> [Coordinate] {
    var generator = SeededGenerator(seed: seed)
    return (0..<count).map { _ in
      center.offset(
        by: Double.random(in: 0...4000, using: &generator),
        bearingDegrees: Double.random(in: 0..<360, using: &generator))
    }
  }

  @Test(
    "a distance on the map is the ground distance within 1 %",
    arguments: [(45.764, 4.8357), (-33.87, 151.21), (64.15, -21.94), (0.0, 179.99)])
  func projectionKeepsDistances(latitude: Double, longitude: Double) throws {
    let points = Self.scatter(
      around: Coordinate(latitude: latitude, longitude: longitude), count: 40, seed: 7)
    let projection = try #require(
      MapProjection(
        fitting: points.map { ($0, 0) }, width: 960, minimumHeight: 480, maximumHeight: 960,
        margin: 56))
    for (a, b) in zip(points, points.dropFirst()) {
      let p = projection.point(a)
      let q = projection.point(b)
      let onMap = hypot(p.x - q.x, p.y - q.y) * projection.metersPerPixel
      let ground = a.distance(to: b)
      #expect(abs(onMap - ground) <= 0.01 * ground, "\(a) → \(b): \(onMap) m vs \(ground) m")
    }
    // Everything fits inside the margins, and north is up.
    for point in points.map(projection.point) {
      #expect(point.x >= 55.9 && point.x <= 960 - 55.9)
      #expect(point.y >= 55.9 && point.y <= Double(projection.height) - 55.9)
    }
    let north = projection.point(Coordinate(latitude: latitude + 0.01, longitude: longitude))
    let south = projection.point(Coordinate(latitude: latitude - 0.01, longitude: longitude))
    #expect(north.y < south.y)
  }

  @Test("a circle's radius in pixels is its radius in metres at the map's scale")
  func circlesToScale() throws {
    let center = Coordinate(latitude: 45.7681, longitude: 4.8359)
    let edge = center.offset(by: 80, bearingDegrees: 90)
    let projection = try #require(
      MapProjection(
        fitting: [(center, 80), (center.offset(by: 1500, bearingDegrees: 30), 0)], width: 960,
        minimumHeight: 480, maximumHeight: 960, margin: 56))
    let c = projection.point(center)
    let e = projection.point(edge)
    #expect(abs(hypot(e.x - c.x, e.y - c.y) - projection.pixels(80)) < 0.01 * projection.pixels(80))
  }

  @Test(
    "the scale bar is the longest 1, 2 or 5 × 10ⁿ m that fits",
    arguments: [
      (1.0, 100.0, 100.0, "100 m"), (1.0, 99.0, 50.0, "50 m"), (1.8, 240.0, 200.0, "200 m"),
      (3.0, 240.0, 500.0, "500 m"), (10.0, 240.0, 2000.0, "2 km"), (0.01, 240.0, 2.0, "2 m"),
      (40.0, 240.0, 5000.0, "5 km"), (0.001, 240.0, 1.0, "1 m"),
    ])
  func scaleBar(metersPerPixel: Double, maximum: Double, meters: Double, label: String) {
    let bar = MapScaleBar(metersPerPixel: metersPerPixel, maximumPixels: maximum)
    #expect(bar.meters == meters)
    #expect(bar.label == label)
    #expect(abs(bar.pixels - meters / metersPerPixel) < 1e-9)
  }

  static func content(name: String = "Office", points: Int = 50) -> MapContent {
    let center = Coordinate(latitude: 45.7681, longitude: 4.8359)
    var content = MapContent()
    content.segments = [
      (0..<points).map {
        center.offset(by: 20 + Double($0 % 1000), bearingDegrees: Double($0 / 1000 % 360))
      }
    ]
    let start = Timestamp.parse("2026-11-29T08:00:00.000Z")!
    content.trackTimes = (start, start.addingTimeInterval(Double(points)))
    content.circles = [
      .init(id: "office", name: name, coordinate: center, radiusMeters: 80, category: "work")
    ]
    content.stays = [
      .init(
        placeID: "office", name: name, coordinate: center, arrival: start,
        departure: start.addingTimeInterval(2598), passThrough: nil, placeRemoved: false)
    ]
    return content
  }

  @Test("names are escaped in text and attributes")
  func escaping() throws {
    let renderer = try #require(SVGMapRenderer(Self.content(name: #"<Tom & "Jerry's">"#)))
    let svg = renderer.render(standalone: true)
    #expect(!svg.contains("<Tom"))
    #expect(!svg.contains(#""Jerry"#))
    #expect(svg.contains("&lt;Tom &amp; &quot;Jerry&apos;s&quot;&gt; · 43m 18s</text>"))
    #expect(XMLText.escaped("a\nb") == "a&#10;b")
  }

  @Test("an open visit says so; more than three visits give their count and total")
  func visitLabels() throws {
    var content = Self.content()
    let start = content.stays[0].arrival
    content.stays[0].departure = nil
    #expect(
      try #require(SVGMapRenderer(content)).render(standalone: true).contains(
        ">Office · open</text>"))
    content.stays = (0..<4).map { index in
      let arrival = start.addingTimeInterval(Double(index) * 7200)
      return .init(
        placeID: "office", name: "Office", coordinate: content.circles[0].coordinate,
        arrival: arrival, departure: arrival.addingTimeInterval(1800), passThrough: nil,
        placeRemoved: false)
    }
    let svg = try #require(SVGMapRenderer(content)).render(standalone: true)
    #expect(svg.contains(">Office · 4 visits, 2h 0m</text>"))
    #expect(svg.contains("visit 2026-11-29T14:00:00.000Z to 2026-11-29T14:30:00.000Z (30m 0s)"))
  }

  @Test("the same content gives the same bytes; a different one does not")
  func deterministic() throws {
    let first = try #require(SVGMapRenderer(Self.content())).render(standalone: true)
    let second = try #require(SVGMapRenderer(Self.content())).render(standalone: true)
    #expect(first == second)
    let other = try #require(SVGMapRenderer(Self.content(points: 51))).render(standalone: true)
    #expect(other != first)
  }

  /// The vertices drawn for the track in `svg`: two numbers each in the paths' `d`.
  static func trackVertices(_ svg: String) -> Int {
    svg.split(separator: "\n").filter { $0.hasPrefix("<path class=\"track\"") }.reduce(0) {
      line, element in
      let d = element.split(separator: "\"")[3]
      return line + d.replacing("h0", with: "").split { " ML".contains($0) }.count / 2
    }
  }

  @Test("a track of 200,000 points is thinned to the pixel")
  func bigTrackIsThinned() throws {
    let renderer = try #require(SVGMapRenderer(Self.content(points: 200_000)))
    let svg = renderer.render(standalone: true)
    let drawn = Self.trackVertices(svg)
    // 200 rays of 1,000 m, 1° apart, at about 1.3 m a pixel: at most some 750 pixels each.
    #expect(drawn < 200 * 760, "\(drawn) points drawn")
    #expect(drawn > 200 * 100, "\(drawn) points drawn")
    #expect(svg.utf8.count < 2_500_000, "\(svg.utf8.count) bytes")
  }

  @Test("a loop driven a hundred times is drawn about once; a step under a pixel is left out")
  func repeatedTrackIsDrawnOnce() {
    var thinner = MapTrackThinner(width: 400, height: 400)
    func lap(_ offset: Double) -> [MapTrackThinner.Point] {
      (0..<360).map { degree in
        let angle = Double(degree) * .pi / 180
        return (200 + 150 * cos(angle) + offset, 200 + 150 * sin(angle))
      }
    }
    let first = thinner.add(lap(0)).reduce(0) { $0 + $1.count }
    #expect(first == 360)  // 2.6 pixels apart: every point
    var again = 0
    for index in 1...100 {
      again += thinner.add(lap(Double(index % 3) * 0.2)).reduce(0) { $0 + $1.count }
    }
    #expect(again < 2 * first, "\(again) points drawn again")  // 100 laps, about one more
    // A new line is drawn; its points 0.1 pixel apart are thinned to one a pixel.
    let fine = (0...1000).map { (x: 20 + Double($0) * 0.1, y: 20.0) }
    let drawn = thinner.add(fine)
    #expect(drawn.count == 1)
    #expect(drawn[0].count == 101)
    #expect(drawn[0].first! == (20, 20) && drawn[0].last! == (120, 20))
    // The same line again is hidden.
    #expect(thinner.add(fine).isEmpty)
  }

  @Test("labels do not overlap and stay on the map")
  func labelLayout() {
    var layout = MapLabelLayout(width: 960, height: 480, top: 36)
    let first = layout.place(characters: 20, x: 300, y: 200)
    #expect(first == .init(x: 310, y: 192, anchor: "start"))
    // A marker to the right on the same row with a long label: it would run off the map to
    // the right, so it is centred above the marker (where it misses the first).
    let second = layout.place(characters: 40, x: 700, y: 200)
    #expect(second == .init(x: 700, y: 188, anchor: "middle"))
    // Right below the first: the first's box is taken, below is free.
    let below = layout.place(characters: 10, x: 300, y: 200)
    #expect(below == .init(x: 310, y: 220, anchor: "start"))
    // Near the right edge: to the left of the marker.
    let third = layout.place(characters: 10, x: 940, y: 400)
    #expect(third == .init(x: 930, y: 392, anchor: "end"))
    #expect(layout.taken.count == 4)
  }

  @Test("in a crowded map every label's box is clear of the others, on the map, by its marker")
  func crowdedLabelsDoNotOverlap() {
    // The box a 13-pixel label covers, from SVG's rules alone: `text-anchor` puts x at the
    // start, middle or end of the text; the glyphs rise at most 13 pixels above the baseline
    // and fall 4 below it; a character is at most 7.5 pixels wide at that size.
    func box(_ p: MapLabelLayout.Placement, characters: Int) -> (
      left: Double, top: Double, right: Double, bottom: Double
    ) {
      let length = 7.5 * Double(characters)
      let left = p.anchor == "start" ? p.x : p.anchor == "middle" ? p.x - length / 2 : p.x - length
      return (left, p.y - 13, left + length, p.y + 4)
    }
    var layout = MapLabelLayout(width: 960, height: 480, top: 36)
    // Six markers 50 pixels apart with 90-pixel labels, two at the right edge, one under the
    // title band, one in the bottom-left corner.
    var markers: [(x: Double, y: Double)] = []
    for index in 0..<6 {
      markers.append((x: 300 + 50 * Double(index), y: index % 3 == 2 ? 230 : 200))
    }
    markers += [(x: 940, y: 400), (x: 945, y: 440), (x: 480, y: 45), (x: 15, y: 460)]
    var boxes: [(left: Double, top: Double, right: Double, bottom: Double)] = []
    for marker in markers {
      let b = box(layout.place(characters: 12, x: marker.x, y: marker.y), characters: 12)
      #expect(b.left >= 8 && b.right <= 952 && b.top >= 36 && b.bottom <= 472, "\(b) off the map")
      let dx = max(b.left - marker.x, 0, marker.x - b.right)
      let dy = max(b.top - marker.y, 0, marker.y - b.bottom)
      #expect(hypot(dx, dy) <= 13, "\(b) is not beside its marker \(marker)")
      for other in boxes {
        let apart =
          b.right <= other.left || b.left >= other.right || b.bottom <= other.top
          || b.top >= other.bottom
        #expect(apart, "\(b) overlaps \(other)")
      }
      boxes.append(b)
    }
  }

  @Test("an empty content has no map")
  func emptyContent() {
    #expect(SVGMapRenderer(MapContent()) == nil)
  }

  @Test("a pass-through is recognised by its stored reason")
  func passThroughReason() {
    #expect(MapContent.isPassThrough(#"{"rule":"pass-through","distance":3.1}"#))
    #expect(MapContent.isPassThrough(#"{"distance":3.1, "rule" : "pass-through"}"#))
    #expect(!MapContent.isPassThrough(#"{"rule":"dwell","distance":3.1}"#))
    #expect(!MapContent.isPassThrough("not json"))
  }
}
