import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// `waymark track`: exports the recorded track (GPX, GeoJSON, CSV) or summarizes it.
enum TrackCommand: Command {
  static let name = "track"
  static let summary = "Export the recorded track (gpx, geojson, csv) or summarize it."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .store,
      .time(
        "--since",
        """
        Only points at or after this time (ISO 8601 UTC, such as
        2026-11-29T12:00:00Z, or a date, 2026-11-29).
        """),
      .time("--until", "Only points before this time (ISO 8601 UTC or a date)."),
      .format(default: "gpx", "'export' only: gpx (default), geojson or csv."),
      .value(
        "--device", "<name>",
        """
        The device whose track to read (default 'local', waymarkd's; others
        are named by 'waymark replay --device/--device-from').
        """),
    ])

  static let help = """
    USAGE: waymark track export [--store <db>] [--since <time>] [--until <time>]
                                [--format gpx|geojson|csv] [--device <name>]
           waymark track stats [--store <db>] [--since <time>] [--until <time>] [--device <name>]

    The track is what waymarkd records from the receiver (and 'waymark replay --store' from a
    log): fixes thinned by one rule, in segments that break at each fix loss. See
    docs/guide/tracks-and-map.md for the rule and the configuration keys.

    'track export' prints the points in time order: gpx (default): GPX 1.1, one <trk> with a
    <trkseg> per segment (<ele> above mean sea level, <time>); geojson: a FeatureCollection
    with a LineString feature per segment (a Point for a segment of one point), its properties
    the segment number, start, end, point count and the time of each point; csv: one line per
    point, with a header line. Times are ISO 8601 UTC with milliseconds.

    'track stats' prints one TRACK object (NDJSON): points, segments, first and last time, and
    the distance along the segments in metres.

    OPTIONS:
    \(options.listing)
    EXIT CODES: 0 ok, 64 usage, 65 unreadable store, 66 no store, 74 I/O error.

    """

  /// The export formats.
  enum Format: String, CaseIterable {
    case gpx, geojson, csv
  }

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard let action = parsed.positionals.first else {
      throw CommandError.usage("Missing subcommand: 'export' or 'stats'.")
    }
    _ = try ParsedArguments.require(Array(parsed.positionals.dropFirst()), [])
    let since = try VisitsCommand.time(parsed, "--since")
    let until = try VisitsCommand.time(parsed, "--until")
    if let since, let until, until <= since {
      throw CommandError.usage("'--until' must be later than '--since'.")
    }
    let path = StorePath.resolve(option: parsed.value("--store"))
    let device = try ReplayDevices.device(parsed.value("--device") ?? StoreDevice.local)
    switch action {
    case "export":
      let formatName = parsed.value(orDefault: "--format")
      guard let format = Format(rawValue: formatName) else {
        let names = Format.allCases.map(\.rawValue).joined(separator: ", ")
        throw CommandError.usage("'--format' must be one of \(names), got '\(formatName)'.")
      }
      return try export(store: path, device: device, since: since, until: until, format: format)
    case "stats":
      if parsed.value("--format") != nil {
        throw CommandError.usage("'--format' applies only to 'track export'.")
      }
      return try stats(store: path, device: device, since: since, until: until)
    default:
      throw CommandError.usage("Unknown subcommand '\(action)': expected 'export' or 'stats'.")
    }
  }

  /// Streams the points of `device` to standard output in `format`.
  static func export(
    store: String, device: String = StoreDevice.local, since: Date?, until: Date?,
    format: Format
  ) throws -> ExitCode {
    let output = OutputSink.standardOutput
    do {
      let database = try StorePath.open(store, create: false)
      var writer = TrackWriter(format: format)
      output.withBuffer { writer.begin(into: &$0) }
      try database.read { connection in
        try TrackRepository(connection, device: device).enumerate(since: since, until: until) {
          point in
          output.withBuffer { writer.add(point, into: &$0) }
        }
      }
      output.withBuffer { writer.end(into: &$0) }
    } catch {
      throw StorePath.commandError(error)
    }
    return try finish(output)
  }

  /// Prints the TRACK summary object of `device`'s track.
  static func stats(
    store: String, device: String = StoreDevice.local, since: Date?, until: Date?
  ) throws -> ExitCode {
    var summary = TrackSummary()
    do {
      let database = try StorePath.open(store, create: false)
      try database.read { connection in
        try TrackRepository(connection, device: device).enumerate(since: since, until: until) {
          summary.add($0)
        }
      }
    } catch {
      throw StorePath.commandError(error)
    }
    let output = OutputSink.standardOutput
    output.withBuffer { summary.line.write(to: &$0) }
    return try finish(output)
  }

  /// Flushes `output`; a failed write is an I/O error (74), except a reader that has gone
  /// (`EPIPE`, as in `waymark track export | head`).
  private static func finish(_ output: OutputSink) throws -> ExitCode {
    output.flush()
    if let code = output.writeError, code != EPIPE {
      throw CommandError(
        "cannot write the output: \(String(cString: strerror(code)))", code: .ioError)
    }
    return .ok
  }
}

/// The figures of `waymark track stats`.
struct TrackSummary {
  private(set) var points = 0
  private(set) var segments = 0
  private(set) var first: Date?
  private(set) var last: TrackPoint?
  private(set) var distanceMeters = 0.0

  /// Counts `point`, the next one in time order.
  mutating func add(_ point: TrackPoint) {
    points += 1
    if first == nil { first = point.timestamp }
    if let last, last.segment == point.segment {
      distanceMeters += last.coordinate.distance(to: point.coordinate)
    } else {
      segments += 1
    }
    last = point
  }

  /// `{"class":"TRACK","points":…,"segments":…,"first":…,"last":…,"distance":…}`; times are
  /// `null` for an empty track.
  var line: JSONLine {
    var line = JSONLine(class: "TRACK")
    line.add("points", points)
    line.add("segments", segments)
    if let first { line.add("first", first) } else { line.addNullable("first", nil) }
    if let last { line.add("last", last.timestamp) } else { line.addNullable("last", nil) }
    line.add("distance", distanceMeters, decimals: 1)
    return line
  }
}
