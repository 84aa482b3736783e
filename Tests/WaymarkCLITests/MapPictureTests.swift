import Foundation
import Testing
import WaymarkTesting

@testable import WaymarkCLI

/// The demo drive's map as a person sees it: headless Chromium (Debian's `chromium`) renders
/// the file `waymark map` wrote to a PNG, and the pixels where the renderer's projection puts a
/// place circle, the track and empty paper must have those colours. The same picture without
/// the circles and the track must not (so the checks can fail).
@Suite(.serialized) struct MapPictureTests {
  static let canRender =
    HeadlessChromium.isInstalled && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")

  typealias Colour = (red: UInt8, green: UInt8, blue: UInt8)

  static func near(_ pixel: Colour?, _ hex: String, tolerance: Int = 24) -> Bool {
    guard let pixel else { return false }
    let want = MapStyle.rgb(hex)
    return abs(Int(pixel.red) - Int(want.red)) <= tolerance
      && abs(Int(pixel.green) - Int(want.green)) <= tolerance
      && abs(Int(pixel.blue) - Int(want.blue)) <= tolerance
  }

  static func pixel(_ image: PNGImage, _ point: MapProbes.Point) -> Colour? {
    image.pixel(x: Int(point.x.rounded(.down)), y: Int(point.y.rounded(.down)))
  }

  /// Renders `file` at the map's size and decodes the PNG.
  static func picture(_ file: URL, _ renderer: SVGMapRenderer, in demo: DemoStore) throws
    -> PNGImage
  {
    let png = demo.file(file.lastPathComponent + ".png")
    try HeadlessChromium.screenshot(
      file, width: renderer.projection.width, height: renderer.projection.height, to: png)
    return try PNGImage(contentsOf: png)
  }

  /// Checks the probes on `image`: each place probe, track probe and background probe.
  static func expectMap(_ image: PNGImage, _ probes: MapProbes, _ what: String) {
    for (id, point) in probes.places {
      let seen = pixel(image, point)
      #expect(
        near(seen, MapStyle.placeFill),
        "\(what): place \(id) at \(point): \(String(describing: seen))")
    }
    for point in probes.track {
      let seen = pixel(image, point)
      #expect(near(seen, MapStyle.track), "\(what): track at \(point): \(String(describing: seen))")
    }
    for point in probes.background {
      let seen = pixel(image, point)
      #expect(near(seen, MapStyle.background, tolerance: 2), "\(what): paper at \(point)")
    }
  }

  @Test(
    "the SVG shows the place circles, the track and bare paper where the projection says",
    .enabled(if: canRender, "needs Debian's chromium and python3 (Scripts/install-deps.sh)"))
  func svgPicture() throws {
    let demo = try DemoStore()
    let svg = demo.file("map.svg")
    let run = try demo.map(["--output", svg.path])
    #expect(run.status == 0, "\(run.stderr)")
    let renderer = try demo.renderer()
    // The file is what this renderer draws, so its projection locates the pixels.
    let text = try String(contentsOf: svg, encoding: .utf8)
    #expect(text == renderer.render(standalone: true))
    let probes = MapProbes(renderer)
    #expect(Set(probes.places.map(\.id)) == ["bakery", "cafe", "home", "office"])
    #expect(probes.track.count >= 15)
    #expect(probes.background.count >= 50)
    let image = try Self.picture(svg, renderer, in: demo)
    #expect(image.width == renderer.projection.width && image.height == renderer.projection.height)
    Self.expectMap(image, probes, "svg")

    // Without the circles and the track, the same pixels are paper: the checks above can fail.
    let bare = demo.file("bare.svg")
    let kept = text.split(separator: "\n", omittingEmptySubsequences: false).filter {
      !$0.contains(#"class="place""#) && !$0.contains(#"class="track""#)
    }
    try kept.joined(separator: "\n").write(to: bare, atomically: true, encoding: .utf8)
    let empty = try Self.picture(bare, renderer, in: demo)
    for (id, point) in probes.places {
      #expect(!Self.near(Self.pixel(empty, point), MapStyle.placeFill), "bare: place \(id)")
      #expect(Self.near(Self.pixel(empty, point), MapStyle.background, tolerance: 2))
    }
    for point in probes.track {
      #expect(!Self.near(Self.pixel(empty, point), MapStyle.track), "bare: track at \(point)")
    }
  }

  @Test(
    "the static HTML page shows the same map, and its script shows a place's details",
    .enabled(if: canRender, "needs Debian's chromium and python3 (Scripts/install-deps.sh)"))
  func htmlPicture() throws {
    let demo = try DemoStore()
    let html = demo.file("map.html")
    let run = try demo.map(["--output", html.path, "--leaflet", "none"])
    #expect(run.status == 0, "\(run.stderr)")
    let renderer = try demo.renderer()
    let image = try Self.picture(html, renderer, in: demo)
    Self.expectMap(image, MapProbes(renderer), "html")
    // map.html#office: the script found the office's visit and filled the details box.
    var components = URLComponents(url: html, resolvingAgainstBaseURL: false)!
    components.fragment = "office"
    let dom = try HeadlessChromium.dumpDOM(components.url!, profile: demo.directory)
    let box = try #require(dom.range(of: #"<div id="details""#))
    let tail = dom[box.lowerBound...].prefix(600)
    #expect(tail.contains("display: block"), "\(tail)")
    #expect(tail.contains("Office (office)"), "\(tail)")
    #expect(tail.contains("visit 2026-11-29T08:00:39.000Z to 2026-11-29T08:43:57.000Z (43m 18s)"))
  }
}
