import Foundation
import WaymarkCore
import WaymarkService
import WaymarkStore

/// `waymark visits`: prints the visits in the store, or records place events into it.
enum VisitsCommand: Command {
  static let name = "visits"
  static let summary = "Print recorded visits (ndjson, geojson, gpx, csv, text); record events."
  static let help = """
    USAGE: waymark visits [--store <db>] [--format ndjson|geojson|gpx|csv|text] [--place <id>]
                          [--since <time>]
           waymark visits record [<events.ndjson>] [--store <db>] [--source <name>]

    Prints the visits in the store, oldest arrival first. An open visit (the device is still
    there) has "departure": null.

    'visits record' reads ARRIVAL and DEPARTURE objects (as printed by 'waymark replay --places')
    from a file or standard input and records them: an arrival opens a visit, its departure closes
    it, each transition in one transaction. TPV objects in the stream count as fixes. Recording is
    idempotent: the same events again add nothing.

    OPTIONS:
      --store <db>        The store (default $WAYMARK_STORE, $STATE_DIRECTORY/waymark.db,
                          $XDG_STATE_HOME/waymark/waymark.db, ~/.local/state/waymark/waymark.db).
      --format <format>   ndjson (default): VISIT objects; geojson: Point features at the
                          places; gpx: waypoints; csv: with a header line; text: for people.
      --place <id>        Only visits of this place.
      --since <time>      Only visits arriving at or after this time (ISO 8601 UTC, such as
                          2026-11-29T12:00:00Z, or a date, 2026-11-29).
      --source <name>     'record' only: the source stored with new visits (default: the file).
      -h, --help          Show this help.

    """

  enum Format: String {
    case ndjson, geojson, gpx, csv, text
  }

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(
      arguments, options: ["--store", "--format", "--place", "--since", "--source"])
    let path = StorePath.resolve(option: parsed.value("--store"))
    do {
      if parsed.positionals.first == "record" {
        for option in ["--format", "--place", "--since"] where parsed.value(option) != nil {
          throw CommandError.usage("'\(option)' does not apply to 'visits record'.")
        }
        guard parsed.positionals.count <= 2 else {
          throw CommandError.usage("Unexpected argument '\(parsed.positionals[2])'.")
        }
        let file = parsed.positionals.count == 2 ? parsed.positionals[1] : "-"
        return try record(file: file, store: path, source: parsed.value("--source"))
      }
      _ = try parsed.requirePositionals([])
      if parsed.value("--source") != nil {
        throw CommandError.usage("'--source' applies only to 'visits record'.")
      }
      let formatName = parsed.value("--format") ?? "ndjson"
      guard let format = Format(rawValue: formatName) else {
        throw CommandError.usage(
          "'--format' must be ndjson, geojson, gpx, csv or text, got '\(formatName)'.")
      }
      var since: Date?
      if let text = parsed.value("--since") {
        guard let date = Timestamp.parse(text) ?? UTCDate(iso: text)?.instant(millisecondsOfDay: 0)
        else {
          throw CommandError.usage("'--since' expects an ISO 8601 UTC time or date, got '\(text)'.")
        }
        since = date
      }
      let database = try StorePath.open(path, create: false)
      let visits = try database.read {
        try VisitRepository($0).all(placeID: parsed.value("--place"), since: since)
      }
      OutputSink.standardOutput.write(render(visits, as: format))
      return .ok
    } catch {
      throw StorePath.commandError(error)
    }
  }
}
