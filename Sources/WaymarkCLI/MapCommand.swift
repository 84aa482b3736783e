import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// `waymark map`: draws the recorded track, the places, the visits and the pass-throughs as
/// one self-contained SVG or HTML file (the interactive Leaflet page, ``MapLeafletPage``, or
/// without Leaflet the static one, ``MapHTMLPage``).
enum MapCommand: Command {
  static let name = "map"
  static let summary = "Draw the track, places and visits as one SVG or HTML file."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .store,
      .time(
        "--since",
        """
        Only points and visits (by arrival) at or after this time (ISO 8601
        UTC, such as 2026-11-29T12:00:00Z, or a date, 2026-11-29).
        """),
      .time(
        "--until", "Only points and visits before this time (ISO 8601 UTC or a date)."),
      .value(
        "--output", "<file>", default: "-",
        "Write the map there (default: standard output, also for '-')."),
      .format(
        """
        svg or html (default: from the --output name, .svg or .html/.htm;
        svg on standard output).
        """),
      .value(
        "--tiles", "<url>|none", default: MapLeafletData.openStreetMapTiles,
        """
        html: the tile URL template ({z}, {x}, {y}) drawn under the map when
        the browser is online, or none (default: OpenStreetMap's,
        https://tile.openstreetmap.org/{z}/{x}/{y}.png).
        """),
      .value(
        "--leaflet", "<dir>|none", default: LeafletAssets.debianDirectory,
        """
        html: the Leaflet to embed (leaflet.js or leaflet.min.js, and
        leaflet.css; default: Debian's libjs-leaflet,
        /usr/share/javascript/leaflet), or none for the static page.
        """),
    ])

  static let help = """
    USAGE: waymark map [--store <db>] [--since <time>] [--until <time>] [--output <file>]
                       [--format svg|html] [--tiles <url>|none] [--leaflet <dir>|none]

    Draws what the store holds for the time range as one self-contained file: the track (a
    line per segment), the places as circles to scale (their arrival radius), each visit as a
    dot at its place, each pass-through as the chord through the circle.
    The svg format (no network, no tiles) labels each visit with the name and the duration and
    adds a scale bar, a north arrow and a legend; north is up, the map is 960 pixels wide and
    fitted to the track and the visited places.
    The html format is an interactive map: Leaflet (read from --leaflet, Debian's
    libjs-leaflet, and embedded in the page) pans and zooms over the tiles of --tiles when the
    browser is online, and shows the same drawing without them when it is not; a click on a
    visit, a pass-through or a place shows its times. 'map.html#visit=<n>' opens with the n-th
    visit's popup, '#place=<id>' with a place's, '#view=<lat>,<lon>,<zoom>' there. The track
    is thinned for each zoom level. Without Leaflet (none, or not installed: said on standard
    error) the page is the svg drawing with a little script that shows details under the
    pointer.
    The same store and options always give the same bytes.

    OPTIONS:
    \(options.listing)
    EXIT CODES: 0 ok, 64 usage, 65 unreadable store, 66 no store or nothing to draw (no track
    point and no visit in the range), 74 I/O error (such as an output that cannot be written).

    """

  /// The output formats.
  enum Format: String, CaseIterable {
    case svg, html
  }

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    _ = try parsed.requirePositionals([])
    let since = try VisitsCommand.time(parsed, "--since")
    let until = try VisitsCommand.time(parsed, "--until")
    if let since, let until, until <= since {
      throw CommandError.usage("'--until' must be later than '--since'.")
    }
    let output = parsed.value(orDefault: "--output")
    let format = try format(parsed.value("--format"), output: output)
    let tiles = parsed.value(orDefault: "--tiles")
    let leafletDirectory = parsed.value(orDefault: "--leaflet")
    if format == .svg, parsed.value("--tiles") != nil || parsed.value("--leaflet") != nil {
      throw CommandError.usage("'--tiles' and '--leaflet' apply to '--format html'.")
    }
    if tiles != "none", !["{z}", "{x}", "{y}"].allSatisfy(tiles.contains) {
      throw CommandError.usage("'--tiles' must be a URL with {z}, {x} and {y}, or none.")
    }
    let path = StorePath.resolve(option: parsed.value("--store"))
    let content: MapContent
    do {
      let database = try StorePath.open(path, create: false)
      content = try database.read { try MapContent(connection: $0, since: since, until: until) }
    } catch {
      throw StorePath.commandError(error)
    }
    guard let renderer = SVGMapRenderer(content) else {
      throw CommandError(
        "nothing to draw: no track point and no visit in \(path)\(range(since, until))",
        code: .noInput)
    }
    var leaflet: LeafletAssets?
    if format == .html, leafletDirectory != "none" {
      leaflet = LeafletAssets(directory: leafletDirectory)
      if leaflet == nil {
        OutputSink.standardError.write(
          "map: no Leaflet in \(leafletDirectory) (install libjs-leaflet, or give '--leaflet "
            + "<dir>'): writing the static page\n")
      }
    }
    let text =
      switch (format, leaflet) {
      case (.svg, _): renderer.render(standalone: true)
      case (.html, let leaflet?):
        MapLeafletPage.page(
          data: MapLeafletData(content, tiles: tiles == "none" ? nil : tiles), leaflet: leaflet,
          title: renderer.title)
      case (.html, nil):
        MapHTMLPage.page(svg: renderer.render(standalone: false), title: renderer.title)
      }
    try TextFile.write(text, to: output)
    if output != "-" {
      let size =
        leaflet == nil
        ? "\(renderer.projection.width)x\(renderer.projection.height) px" : "Leaflet"
      OutputSink.standardError.write(
        "map: \(output) (\(format.rawValue), \(size), \(content.pointCount) track point(s), "
          + "\(content.stays.count) visit(s), \(content.circles.count) place(s))\n")
    }
    return .ok
  }

  /// The format named by `--format`, else the one of the output's extension.
  static func format(_ name: String?, output: String) throws -> Format {
    let names = Format.allCases.map(\.rawValue).joined(separator: ", ")
    if let name {
      guard let format = Format(rawValue: name) else {
        throw CommandError.usage("'--format' must be one of \(names), got '\(name)'.")
      }
      return format
    }
    if output == "-" { return .svg }
    switch URL(fileURLWithPath: output).pathExtension.lowercased() {
    case "svg": return .svg
    case "html", "htm": return .html
    default:
      throw CommandError.usage(
        "Cannot tell the format from '\(output)': name it .svg or .html, or give '--format'.")
    }
  }

  private static func range(_ since: Date?, _ until: Date?) -> String {
    switch (since, until) {
    case (let since?, let until?): " from \(Timestamp.format(since)) to \(Timestamp.format(until))"
    case (let since?, nil): " since \(Timestamp.format(since))"
    case (nil, let until?): " before \(Timestamp.format(until))"
    case (nil, nil): ""
    }
  }
}
