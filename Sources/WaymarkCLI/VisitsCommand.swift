import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// `waymark visits`: prints the visits in the store, records place events into it, or deletes
/// history.
enum VisitsCommand: Command {
  static let name = "visits"
  static let summary = "Print, record and delete visits (ndjson, geojson, gpx, csv, text)."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .store,
      .format(
        default: "ndjson",
        """
        ndjson (default): VISIT objects; geojson: Point features at the
        places; gpx: waypoints; csv: with a header line; text: for people.
        """),
      .place(
        """
        Only visits of this place id (of the place in the store and of removed
        places that had the id).
        """),
      .time(
        "--since",
        """
        Only visits arriving at or after this time (ISO 8601 UTC, such as
        2026-11-29T12:00:00Z, or a date, 2026-11-29).
        """),
      .flag("--removed", "Only visits of removed places."),
      .flag(
        "--towns",
        """
        Name the town of each stay at no declared place, offline, from the
        towns built in (GeoNames, 15,000 people or more): "town" and
        "country" (ISO code) in ndjson and geojson, the town column in csv,
        "near <town>" in text and gpx. A place's visit keeps its own town.
        """),
      .time(
        "--before",
        """
        'delete' only: only visits arriving before this time (ISO 8601 UTC or
        a date).
        """),
      .value(
        "--source", "<name>",
        "'record' only: the source stored with new visits (default: the file)."),
    ])

  static let help = """
    USAGE: waymark visits [--store <db>] [--format ndjson|geojson|gpx|csv|text] [--place <id>]
                          [--since <time>] [--removed]
                          [--towns]
           waymark visits record [<events.ndjson>] [--store <db>] [--source <name>]
           waymark visits delete [--place <id>] [--removed] [--before <time>] [--store <db>]

    Prints the visits in the store, oldest arrival first. An open visit (the device is still
    there) has "departure": null. Stays found anywhere (waymarkd's 'stays = on', 'waymark
    replay --store --visits') that lie at no declared place are listed too, with "place": null
    and lat/lon their centre (not with --place or --removed); a stay at a declared place is
    that place's visit. Each visit carries its place as it was when the visit was
    recorded (name, centre, category, subtitle, address, town, url, image, detail, each when
    known) and "removed": the time its place was removed from the store, or null.

    'visits record' reads ARRIVAL and DEPARTURE objects (as printed by 'waymark replay --places')
    from a file or standard input and records them: an arrival opens a visit, its departure closes
    it, each transition in one transaction. TPV objects in the stream count as fixes. Recording is
    idempotent: the same events again add nothing.

    'visits delete' deletes history: the closed visits selected by --place, --removed and
    --before (at least one), with their arrival and departure events, and says how many. Open
    visits are kept. Removing a place ('waymark places remove') never deletes its history.

    OPTIONS:
    \(options.listing)
    """

  enum Format: String {
    case ndjson, geojson, gpx, csv, text
  }

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    let path = StorePath.resolve(option: parsed.value("--store"))
    func reject(_ options: [String], for use: String) throws {
      for option in options where parsed.value(option) != nil || parsed.has(option) {
        throw CommandError.usage("'\(option)' does not apply to \(use).")
      }
    }
    do {
      switch parsed.positionals.first {
      case "record":
        try reject(
          ["--format", "--place", "--since", "--removed", "--before", "--towns"],
          for: "'visits record'")
        guard parsed.positionals.count <= 2 else {
          throw CommandError.usage("Unexpected argument '\(parsed.positionals[2])'.")
        }
        let file = parsed.positionals.count == 2 ? parsed.positionals[1] : "-"
        return try record(file: file, store: path, source: parsed.value("--source"))
      case "delete":
        try reject(["--format", "--since", "--source", "--towns"], for: "'visits delete'")
        _ = try ParsedArguments.require(Array(parsed.positionals.dropFirst()), [])
        return try delete(
          placeID: parsed.value("--place"), removedOnly: parsed.has("--removed"),
          before: try time(parsed, "--before"), store: path)
      default:
        break
      }
      _ = try parsed.requirePositionals([])
      if parsed.value("--source") != nil {
        throw CommandError.usage("'--source' applies only to 'visits record'.")
      }
      if parsed.value("--before") != nil {
        throw CommandError.usage("'--before' applies only to 'visits delete'.")
      }
      let formatName = parsed.value(orDefault: "--format")
      guard let format = Format(rawValue: formatName) else {
        throw CommandError.usage(
          "'--format' must be ndjson, geojson, gpx, csv or text, got '\(formatName)'.")
      }
      let since = try time(parsed, "--since")
      let database = try StorePath.open(path, create: false)
      let byPlace = parsed.value("--place") != nil || parsed.has("--removed")
      let (visits, stays) = try database.read {
        (
          try VisitRepository($0).all(
            placeID: parsed.value("--place"), since: since, removedOnly: parsed.has("--removed")),
          byPlace ? [] : try StayRepository($0).all(since: since, unnamedOnly: true)
        )
      }
      OutputSink.standardOutput.write(
        render(visits, stays: stays, as: format, towns: parsed.has("--towns")))
      return .ok
    } catch {
      throw StorePath.commandError(error)
    }
  }

  /// The time given to `option` (ISO 8601 UTC, or a date for its midnight), or `nil`.
  static func time(_ parsed: ParsedArguments, _ option: String) throws -> Date? {
    guard let text = parsed.value(option) else { return nil }
    guard let date = Timestamp.parse(text) ?? UTCDate(iso: text)?.instant(millisecondsOfDay: 0)
    else {
      throw CommandError.usage("'\(option)' expects an ISO 8601 UTC time or date, got '\(text)'.")
    }
    return date
  }
}
