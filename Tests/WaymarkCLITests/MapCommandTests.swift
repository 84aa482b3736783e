import Foundation
import Testing
import WaymarkStore
import WaymarkTesting

/// `waymark map` through the built binary: what it draws from the demo drive's store, the
/// format rules, byte-identical output, and its errors and exit codes.
@Suite struct MapCommandTests {
  static func count(_ needle: String, in text: String) -> Int {
    text.components(separatedBy: needle).count - 1
  }

  @Test("the demo drive: five place circles, four visits and a pass-through, labelled")
  func demoMap() throws {
    let demo = try DemoStore()
    let run = try demo.map(["--output", demo.file("map.svg").path])
    #expect(run.status == 0)
    #expect(run.output.isEmpty)
    #expect(
      run.stderr.hasPrefix(
        "map: \(demo.file("map.svg").path) (svg, 960x960 px, 444 track point(s), 5 visit(s), "
          + "5 place(s))"),
      "\(run.stderr)")
    let svg = try String(contentsOf: demo.file("map.svg"), encoding: .utf8)
    #expect(svg.hasPrefix(#"<?xml version="1.0" encoding="UTF-8"?>"# + "\n<svg "))
    #expect(Self.count(#"<circle class="place""#, in: svg) == 5)
    #expect(Self.count(#"<path class="track""#, in: svg) == 2)  // two segments
    #expect(Self.count(#"<g class="visit""#, in: svg) == 4)
    #expect(Self.count(#"<g class="pass-through""#, in: svg) == 1)
    for label in [
      "Home · 5m 7s", "Boulangerie du Marché · 4m 6s", "Office · 43m 18s",
      "Café des Quais · 17m 13s", "Fontaine de la Croix-Rousse · pass-through 2s",
    ] {
      #expect(svg.contains(">\(label)</text>"), "\(label)")
    }
    #expect(svg.contains(#"<g class="scale-bar" data-meters="200.0">"#))
    #expect(svg.contains(#"<g class="north-arrow">"#))
    #expect(!svg.contains("href") && !svg.contains("url("))  // nothing fetched
    #expect(svg.contains("2026-11-29T07:50:00Z to 2026-11-29T09:02:03Z, 444 track point(s)"))
  }

  @Test("places near the drive are drawn, far ones not; a removed place's visit keeps its dot")
  func whichPlaces() throws {
    let demo = try DemoStore()
    for (name, lat, lon) in [
      ("Near <&> Park", "45.7650", "4.8340"), ("Paris", "48.8566", "2.3522"),
    ] {
      let add = try CommandRun.waymark([
        "places", "add", "--store", demo.store, "--name", name, "--lat", lat, "--lon", lon,
      ])
      #expect(add.status == 0, "\(add.stderr)")
    }
    #expect(
      try CommandRun.waymark(["places", "remove", "bakery", "--store", demo.store]).status == 0)
    let svg = try demo.map([]).output
    #expect(Self.count(#"<circle class="place""#, in: svg) == 5)  // 4 of the demo + the park
    #expect(svg.contains("Near &lt;&amp;&gt; Park"))
    #expect(!svg.contains("Paris"))
    #expect(!svg.contains(#"<circle class="place" data-place="bakery""#))
    #expect(svg.contains(">Boulangerie du Marché (removed) · 4m 6s</text>"))
  }

  @Test("the same store gives the same bytes; --since and --until select")
  func deterministicAndRanged() throws {
    let demo = try DemoStore()
    let first = try demo.map([])
    let second = try demo.map(["--output", "-", "--format", "svg"])
    #expect(first.status == 0 && second.status == 0)
    #expect(!first.stdout.isEmpty)
    #expect(first.stdout == second.stdout)
    // The interactive page too (Leaflet read from the same installed files).
    let pages = try (0..<2).map { _ in try demo.map(["--format", "html"]).stdout }
    #expect(pages[0] == pages[1] && !pages[0].isEmpty)
    let morning = try demo.map(["--until", "2026-11-29T08:00:00Z"])
    #expect(morning.status == 0)
    #expect(morning.stdout != first.stdout)
    #expect(Self.count(#"<g class="visit""#, in: morning.output) == 2)  // home, bakery
    #expect(morning.output.contains("Home · 5m 7s"))
    #expect(!morning.output.contains("Office · "))
  }

  @Test("the format follows --format, else the file name")
  func formats() throws {
    let demo = try DemoStore()
    #expect(try demo.map(["--output", demo.file("a.html").path]).status == 0)
    #expect(try demo.map(["--output", demo.file("b.HTM").path]).status == 0)
    #expect(try demo.map(["--output", demo.file("c.txt").path, "--format", "html"]).status == 0)
    let leaflet = FileManager.default.fileExists(
      atPath: "/usr/share/javascript/leaflet/leaflet.css")
    for name in ["a.html", "b.HTM", "c.txt"] {
      let text = try String(contentsOf: demo.file(name), encoding: .utf8)
      #expect(text.hasPrefix("<!DOCTYPE html>\n"), "\(name)")
      // The interactive page when Debian's libjs-leaflet is installed, else the static one.
      if leaflet {
        #expect(text.contains(#"<script type="application/json" id="waymark-data">"#))
      } else {
        #expect(text.contains("<svg xmlns=\"http://www.w3.org/2000/svg\""))
      }
      #expect(!text.contains("<?xml"))
      #expect(!text.contains("<script src") && !text.contains("<link"))  // self-contained
    }
    let png = try demo.map(["--output", demo.file("map.png").path])
    #expect(png.status == 64)
    #expect(png.stderr.contains("Cannot tell the format from"), "\(png.stderr)")
    let pdf = try demo.map(["--format", "pdf"])
    #expect(pdf.status == 64)
    #expect(pdf.stderr.contains("'--format' must be one of svg, html, got 'pdf'."))
  }

  @Test("errors: no store 66, nothing to draw 66, bad time 64, unwritable output 74")
  func errors() throws {
    let demo = try DemoStore()
    let missing = try CommandRun.waymark(["map", "--store", demo.file("none.db").path])
    #expect(missing.status == 66)
    #expect(missing.stderr.contains("no store at"), "\(missing.stderr)")
    let emptyPath = demo.file("empty.db").path
    _ = try Database(path: emptyPath, createIfMissing: true)
    let empty = try CommandRun.waymark(["map", "--store", emptyPath])
    #expect(empty.status == 66)
    #expect(
      empty.stderr == "Error: nothing to draw: no track point and no visit in \(emptyPath)\n")
    let later = try demo.map(["--since", "2026-11-30"])
    #expect(later.status == 66)
    #expect(later.stderr.contains("since 2026-11-30T00:00:00.000Z"), "\(later.stderr)")
    let badTime = try demo.map(["--since", "yesterday"])
    #expect(badTime.status == 64)
    #expect(badTime.stderr.contains("'--since' expects an ISO 8601 UTC time or date"))
    let backwards = try demo.map(["--since", "2026-11-29T09:00:00Z", "--until", "2026-11-29"])
    #expect(backwards.status == 64)
    let unwritable = try demo.map(["--output", "/nonexistent/dir/map.svg"])
    #expect(unwritable.status == 74)
    #expect(
      unwritable.stderr
        == "Error: cannot write '/nonexistent/dir/map.svg': No such file or directory\n")
    let notAStore = demo.file("text.db")
    try Data("not a database, just text that is long enough\n".utf8).write(to: notAStore)
    #expect(try CommandRun.waymark(["map", "--store", notAStore.path]).status == 65)
  }

  @Test("xmllint reads the SVG and the HTML page", .enabled(if: installed(xmllint), "no xmllint"))
  func wellFormed() throws {
    let demo = try DemoStore()
    #expect(try demo.map(["--output", demo.file("map.svg").path]).status == 0)
    #expect(try demo.map(["--output", demo.file("map.html").path]).status == 0)
    let svg = try CommandRun.run(xmllint, ["--noout", demo.file("map.svg").path])
    #expect(svg.status == 0, "\(svg.stderr)")
    let html = try CommandRun.run(xmllint, ["--html", "--noout", demo.file("map.html").path])
    #expect(html.status == 0, "\(html.stderr)")
  }
}
