import Foundation
import Testing
import WaymarkCore
import WaymarkStore
import WaymarkTesting

@testable import WaymarkCLI

/// The interactive map (`waymark map --format html` with Leaflet) in a real headless Chromium:
/// offline (no host resolves, every connection goes to a dead proxy) it loads, draws the
/// store's track, places and visits, and a click on a visit shows its times; online, its
/// tiles come from the `--tiles` server (a local one here).
@Suite(.serialized) struct MapLeafletTests {
  static let canRun =
    HeadlessChromium.isInstalled && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    && LeafletAssets(directory: LeafletAssets.debianDirectory) != nil
  static let needs: Comment =
    "needs Debian's chromium, libjs-leaflet and python3 (Scripts/install-deps.sh)"

  /// What the page holds after its scripts ran: the DOM, the browser's log, and the probe's
  /// findings (`window.L`, the page's uncaught errors, the track level drawn).
  struct Loaded {
    var dom: String
    var log: String
    var probe: [String: Any]

    /// Whether the probe ran and recorded no uncaught error.
    var hasNoErrors: Bool { (probe["errors"] as? [Any])?.isEmpty == true }

    /// The `class` attributes of the SVG paths Leaflet drew.
    var pathClasses: [String] {
      dom.matches(of: /<path class="([^"]*)"/).map { String($0.output.1) }
    }

    /// How many paths have `name` among their classes.
    func paths(_ name: String) -> Int {
      pathClasses.filter { $0.split(separator: " ").contains(Substring(name)) }.count
    }

    /// The `class` attributes of the tile images.
    var tiles: [String] {
      dom.matches(of: /<img[^>]* class="(leaflet-tile[^"]*)"/).map { String($0.output.1) }
    }

    /// Whether the attribution control shows OpenStreetMap's attribution.
    var showsAttribution: Bool {
      dom.contains(
        /<div class="leaflet-control-attribution leaflet-control">.{0,300}OpenStreetMap<\/a> contributors/
      )
    }

    /// Whether the body has the class `offline` (the page's note that no tile came).
    var saysOffline: Bool { dom.contains(/<body[^>]* class="offline"/) }

    /// The vertices of the track's paths (`M`/`L` commands), as layer pixels.
    var trackVertices: [(x: Double, y: Double)] {
      let tracks = dom.matches(of: /<path class="waymark-track"[^>]* d="([^"]*)"/)
      var vertices: [(x: Double, y: Double)] = []
      for track in tracks {
        for command in track.output.1.split(whereSeparator: { $0 == "M" || $0 == "L" }) {
          let numbers = command.split(separator: " ").compactMap { Double($0) }
          if numbers.count == 2 { vertices.append((numbers[0], numbers[1])) }
        }
      }
      return vertices
    }

    /// The text of the open popup, its lines joined by `|`; `nil` when none is open.
    var popup: String? {
      guard let start = dom.range(of: #"<div class="leaflet-popup-content""#) else { return nil }
      let tag = dom[start.upperBound...].firstIndex(of: ">") ?? start.upperBound
      let html = dom[tag...].dropFirst().prefix(3000)
      let end = html.range(of: "</div></div>")?.upperBound ?? html.endIndex
      return html[..<end].replacing(/<[^>]*>/, with: "|").split(separator: "|")
        .filter { !$0.trimmingCharacters(in: .whitespaces).isEmpty }.joined(separator: "|")
    }
  }

  /// `page` with a probe: an error recorder first in `<head>`, and at the end of `<body>`
  /// `script` (run at once) and, after 1.5 s, a `<pre id="probe">` with what it found.
  static func probed(_ page: String, script: String = "", findings: String = "") -> String {
    let head = """
      <head>
      <script>window.probeErrors = []; window.addEventListener("error", function (e) {
      window.probeErrors.push(String(e.message)); });</script>
      """
    let tail = """
      <script>
      \(script)
      setTimeout(function () {
        var probe = { L: typeof window.L, errors: window.probeErrors,
          level: window.waymark && window.waymark.level && window.waymark.level.zoom };
        \(findings)
        var out = document.createElement("pre");
        out.id = "probe";
        out.textContent = JSON.stringify(probe);
        document.body.appendChild(out);
      }, 1500);
      </script>
      </body>
      """
    return page.replacing("<head>", with: head).replacing("</body>", with: tail)
  }

  /// Writes `page` (probed) next to the store and loads it, offline unless `online`.
  static func load(
    _ page: String, in directory: URL, name: String, fragment: String? = nil,
    online: Bool = false
  ) throws -> Loaded {
    let file = directory.appendingPathComponent(name)
    try page.write(to: file, atomically: true, encoding: .utf8)
    var components = URLComponents(url: file, resolvingAgainstBaseURL: false)!
    components.fragment = fragment
    let run = try HeadlessChromium.dumpDOM(
      components.url!, profile: directory, extra: online ? [] : HeadlessChromium.offline)
    var probe: [String: Any] = [:]
    if let start = run.output.range(of: #"<pre id="probe">"#),
      let end = run.output[start.upperBound...].range(of: "</pre>")
    {
      let json = String(run.output[start.upperBound..<end.lowerBound])
        .replacing("&quot;", with: "\"").replacing("&lt;", with: "<").replacing("&gt;", with: ">")
        .replacing("&amp;", with: "&")
      probe = (try? JSONSerialization.jsonObject(with: Data(json.utf8))) as? [String: Any] ?? [:]
    }
    return Loaded(dom: run.output, log: run.stderr, probe: probe)
  }

  /// The page `waymark map` writes for the demo store with `arguments`.
  static func page(_ demo: DemoStore, _ arguments: [String] = []) throws -> String {
    let file = demo.file("map-\(UUID().uuidString).html")
    let run = try demo.map(["--output", file.path] + arguments)
    #expect(run.status == 0, "\(run.stderr)")
    return try String(contentsOf: file, encoding: .utf8)
  }

  /// The console lines of the browser's log that report an error.
  static func consoleErrors(_ log: String) -> [Substring] {
    log.split(separator: "\n").filter {
      $0.contains("CONSOLE") && ($0.contains("Error") || $0.contains("Uncaught"))
    }
  }

  @Test(
    "offline, the page loads Leaflet and draws the store's track, places and visits, no error",
    .enabled(if: canRun, needs))
  func offline() throws {
    let demo = try DemoStore()
    let (visits, places) = try Database(path: demo.store, createIfMissing: false).read {
      (try VisitRepository($0).all().count, try PlaceRepository($0).all().count)
    }
    let page = try Self.page(demo)
    #expect(page.contains("License: BSD-2-clause") && page.contains("Vladimir Agafonkin"))
    let loaded = try Self.load(Self.probed(page), in: demo.directory, name: "offline.html")
    #expect(loaded.probe["L"] as? String == "object", "\(loaded.probe)")
    #expect(loaded.hasNoErrors, "\(loaded.probe)")
    #expect(Self.consoleErrors(loaded.log).isEmpty, "\(Self.consoleErrors(loaded.log))")
    #expect(loaded.dom.contains(/<div id="map" class="leaflet-container/))
    #expect(loaded.paths("waymark-place") == places)
    #expect(loaded.paths("waymark-visit") + loaded.paths("waymark-pass") == visits)
    #expect(loaded.paths("waymark-pass") == 1)
    #expect(loaded.paths("waymark-track") == 1)
    #expect(loaded.trackVertices.count >= 50, "\(loaded.trackVertices.count)")
    // The SVG's labels, one a place (and kind), as tooltips that stay open.
    let labels = loaded.dom.matches(of: /<div class="leaflet-tooltip waymark-label[^>]*>([^<]*)</)
      .map { String($0.output.1) }
    #expect(labels.count == (try demo.renderer().groups.count), "\(labels)")
    #expect(labels.contains("Office · 43m 18s"), "\(labels)")
    // The tiles were asked for and none came: the page says it draws without them.
    #expect(loaded.tiles.count >= 1)
    #expect(!loaded.tiles.contains { $0.contains("leaflet-tile-loaded") }, "\(loaded.tiles)")
    #expect(loaded.saysOffline)
    #expect(loaded.showsAttribution)
  }

  @Test(
    "a click on a visit's marker opens its popup with its arrival, departure and duration",
    .enabled(if: canRun, needs))
  func clickVisit() throws {
    let demo = try DemoStore()
    let content = try demo.renderer().content
    let number = try #require(content.stays.firstIndex { $0.placeID == "office" }) + 1
    let office = content.stays[number - 1]
    let departure = try #require(office.departure)
    let page = try Self.page(demo)
    // A click where the marker is drawn, on whatever element is on top there.
    let click = """
      (function () {
        var box = window.waymark.visits[\(number)].getElement().getBoundingClientRect();
        var x = box.left + box.width / 2, y = box.top + box.height / 2;
        document.elementFromPoint(x, y).dispatchEvent(new MouseEvent("click",
          { bubbles: true, cancelable: true, view: window, clientX: x, clientY: y }));
      })();
      """
    let clicked = try Self.load(
      Self.probed(page, script: click), in: demo.directory, name: "click.html")
    let popup = try #require(clicked.popup, "no popup after the click")
    #expect(popup.contains("Office (office)"), "\(popup)")
    // The office's place names no town: the one the built-in gazetteer finds there.
    #expect(popup.contains("in Lyon, France"), "\(popup)")
    #expect(popup.contains("arrival \(Timestamp.format(office.arrival))"), "\(popup)")
    #expect(popup.contains("departure \(Timestamp.format(departure))"), "\(popup)")
    let duration = VisitsCommand.duration(departure.timeIntervalSince(office.arrival))
    #expect(popup.contains("duration \(duration)"), "\(popup)")
    // The same page without the click shows no popup.
    #expect(clicked.hasNoErrors, "\(clicked.probe)")
    let still = try Self.load(Self.probed(page), in: demo.directory, name: "still.html")
    #expect(still.popup == nil)
  }

  @Test(
    "map.html#visit=<n> opens the n-th visit's popup, #<place id> the place's",
    .enabled(if: canRun, needs))
  func hash() throws {
    let demo = try DemoStore()
    let content = try demo.renderer().content
    let page = try Self.page(demo)
    let passThrough = try #require(content.stays.firstIndex { $0.passThrough != nil }) + 1
    let opened = try Self.load(
      page, in: demo.directory, name: "hash.html", fragment: "visit=\(passThrough)")
    let popup = try #require(opened.popup)
    #expect(popup.contains("pass-through \(passThrough)"), "\(popup)")
    let stay = content.stays[passThrough - 1]
    #expect(popup.contains("arrival \(Timestamp.format(stay.arrival))"), "\(popup)")
    let place = try Self.load(page, in: demo.directory, name: "place.html", fragment: "office")
    #expect(place.popup?.contains("radius") == true, "\(place.popup ?? "none")")
    #expect(place.popup?.contains("1 visit(s)") == true, "\(place.popup ?? "none")")
    // A hash that names no place (here an inherited property of every object) opens nothing.
    let other = try Self.load(
      Self.probed(page), in: demo.directory, name: "other.html", fragment: "constructor")
    #expect(other.hasNoErrors && other.popup == nil, "\(other.probe)")
  }

  @Test(
    "online, the tiles come from the --tiles server and the attribution is shown",
    .enabled(if: canRun, needs))
  func tiles() throws {
    let demo = try DemoStore()
    let server = try LocalTileServer(directory: demo.directory)
    let page: String
    do {
      page = try Self.page(demo, ["--tiles", server.template])
    } catch {
      _ = server.stop()
      throw error
    }
    let loaded = try? Self.load(page, in: demo.directory, name: "online.html", online: true)
    let requests = server.stop()
    #expect(requests.count >= 1)
    #expect(requests.allSatisfy { $0.wholeMatch(of: /\/[0-9]+\/[0-9]+\/[0-9]+\.png/) != nil })
    let online = try #require(loaded)
    #expect(online.tiles.contains { $0.contains("leaflet-tile-loaded") }, "\(online.tiles)")
    #expect(!online.saysOffline)
    #expect(online.showsAttribution)
    // --tiles none: no tile layer, no request, no attribution.
    let bare = try Self.load(
      Self.page(demo, ["--tiles", "none"]), in: demo.directory, name: "bare.html")
    #expect(bare.tiles.isEmpty)
    #expect(!bare.showsAttribution && !bare.dom.contains("OpenStreetMap"))
    #expect(bare.paths("waymark-track") == 1)
  }

  @Test("without Leaflet the page is the static one, and standard error says why")
  func withoutLeaflet() throws {
    let demo = try DemoStore()
    let empty = demo.file("no-leaflet")
    try FileManager.default.createDirectory(at: empty, withIntermediateDirectories: true)
    let file = demo.file("static.html")
    let run = try demo.map(["--output", file.path, "--leaflet", empty.path])
    #expect(run.status == 0)
    #expect(run.stderr.contains("map: no Leaflet in \(empty.path) (install libjs-leaflet"))
    let renderer = try demo.renderer()
    let staticPage = MapHTMLPage.page(
      svg: renderer.render(standalone: false), title: renderer.title)
    #expect(try String(contentsOf: file, encoding: .utf8) == staticPage)
    let none = try demo.map(["--format", "html", "--leaflet", "none"])
    #expect(none.status == 0 && none.stderr.isEmpty)
    #expect(none.output == staticPage)
    let svg = try demo.map(["--format", "svg", "--tiles", "none"])
    #expect(svg.status == 64)
    let tiles = try demo.map(["--format", "html", "--tiles", "https://example.org/tile.png"])
    #expect(tiles.status == 64 && tiles.stderr.contains("{z}, {x} and {y}"))
  }

  @Test(
    "--leaflet <dir> embeds that directory's Leaflet, read when the map is made, and its LICENSE")
  func otherLeaflet() throws {
    let demo = try DemoStore()
    let copy = demo.file("leaflet-copy")
    try FileManager.default.createDirectory(at: copy, withIntermediateDirectories: true)
    let installed = URL(fileURLWithPath: LeafletAssets.debianDirectory)
    let script =
      (try? String(contentsOf: installed.appendingPathComponent("leaflet.min.js"), encoding: .utf8))
      ?? "window.L = {};"
    try (script + "\n/* the copy in leaflet-copy */\n").write(
      to: copy.appendingPathComponent("leaflet.js"), atomically: true, encoding: .utf8)
    try "#map { }\n".write(
      to: copy.appendingPathComponent("leaflet.css"), atomically: true, encoding: .utf8)
    try "A licence -- of the copy\n".write(
      to: copy.appendingPathComponent("LICENSE"), atomically: true, encoding: .utf8)
    let page = try Self.page(demo, ["--leaflet", copy.path])
    #expect(page.contains("/* the copy in leaflet-copy */"))
    #expect(page.contains("A licence - - of the copy"))  // a comment cannot hold "--"
    #expect(!page.contains("License: BSD-2-clause"))
    #expect(page.contains("<style>\n#map { }\n"))
  }
}
