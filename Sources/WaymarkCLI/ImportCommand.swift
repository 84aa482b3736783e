import Waymark
import WaymarkCore

/// `waymark import`: the location history people already have (GPX, Google Takeout, GeoJSON,
/// CSV) through the replay's pipeline into the store.
enum ImportCommand: Command {
  static let name = "import"
  static let summary = "Import GPX, Google Takeout, GeoJSON or CSV history into the store."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 24,
    [
      .store(
        """
        The store to import into (created if needed; default $WAYMARK_STORE,
        then as for every command, ~/.local/state/waymark/waymark.db last).
        """),
      .value(
        "--places", "<geojson>",
        """
        Also monitor these places (the store's are monitored anyway): print
        ARRIVAL and DEPARTURE objects (NDJSON) and record the visits.
        """),
      .format(
        """
        The file's format: gpx, records (Takeout Records.json), semantic
        (Takeout Semantic Location History, YYYY_MONTH.json), timeline (the
        phone's Timeline.json), geojson or csv. Default: from the file's
        name and first bytes.
        """),
      .flag(
        "--append",
        """
        Import a file even when the store's track already has points in the
        file's time span (from waymarkd or an earlier import). Without it,
        such a file is refused (exit 65) and nothing of it is imported.
        """),
      .visitMinDuration,
      .visitMaxGap,
    ])

  static let help = """
    USAGE: waymark import <file>... [--store <db>] [--places <geojson>] [--format <format>]
                          [--append] [--visit-min-duration <s>] [--visit-max-gap <s>]

    Reads location history and runs its points, sorted by time, through the same pipeline as
    'waymark replay --visits --store': the track, place arrivals and departures, visits, and
    stays found anywhere are recorded in the store. The same file gives the same records
    every time.

    ARGUMENTS:
      <file>...             GPX (.gpx, gpsbabel's too), Google Takeout (Records.json,
                            Semantic Location History months, Timeline.json), GeoJSON
                            (.geojson) or CSV (.csv, with a header row). Several files are
                            imported one after another, each sorted by time on its own.

    OPTIONS:
    \(options.listing)
    Stdout: the ARRIVAL, DEPARTURE and VISIT objects of 'waymark replay --visits' (NDJSON).
    Stderr: each bad record as 'file:line: where: reason' (the first 100 of a file), then a
    summary per file (points, bad records, time span, events, stays, track). Bad records are
    skipped and the rest imported.
    Exit codes: 0 every record of every file imported; 65 a bad record, a truncated file, a
    file with no point or of unknown format, or a store whose track overlaps a file (without
    --append); 66 unreadable file or places file; 74 store or read error; 64 usage. With
    several files, the first failure's code, the others still imported.

    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard !parsed.positionals.isEmpty else { throw CommandError.usage("Missing <file>.") }
    var format: ImportFormat?
    if let text = parsed.value("--format") {
      guard let value = ImportFormat(rawValue: text) else {
        let names = ImportFormat.allCases.map(\.rawValue).joined(separator: ", ")
        throw CommandError.usage("'--format' must be one of \(names), got '\(text)'.")
      }
      format = value
    }
    let stays = try CommandOption.stayConfiguration(parsed)
    let options = ReplayOptions(
      path: parsed.positionals[0], printFixes: false, strict: false, speed: .max,
      defaultDate: nil, placesPath: parsed.value("--places"),
      storePath: StorePath.resolve(option: parsed.value("--store")), mqtt: nil, stays: stays)
    var exit = ExitCode.ok
    for path in parsed.positionals {
      let code: ExitCode
      do {
        code = try await FileImporter(
          path: path, format: format, options: options, appends: parsed.has("--append")
        ).run()
      } catch let error as CommandError {
        OutputSink.standardOutput.flush()
        OutputSink.standardError.write("Error: \(error.message)\n")
        code = error.code
      }
      if exit == .ok { exit = code }
    }
    return exit
  }
}
