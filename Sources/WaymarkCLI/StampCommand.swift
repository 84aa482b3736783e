import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

/// `waymark stamp`: marks the place the device is at as visited now.
enum StampCommand: Command {
  static let name = "stamp"
  static let summary = "Mark the place you are at (or --place) as visited now."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .place("The place to stamp."),
      .value("--lat", "<deg>", "Latitude of the position (with --lon)."),
      .value("--lon", "<deg>", "Longitude of the position (with --lat)."),
      .value("--time", "<time>", "The stamp time, ISO 8601 UTC (default: now)."),
      .value(
        "--max-age", "<s>",
        """
        How far, in seconds, the fix used may be from the stamp time
        (default 60).
        """),
      .socket,
      .store,
    ])

  static let help = """
    USAGE: waymark stamp [--place <id>] [--lat <deg> --lon <deg>] [--time <time>]
                         [--max-age <s>] [--socket <path>] [--store <db>]

    Records a visit of a place, like the stamp button of a map app: with --place, that place;
    otherwise the place whose circle contains the position and whose centre is nearest. The
    position is --lat/--lon, or else the last fix recorded in the store when it is at most
    --max-age seconds from the stamp time; an older one is not used: waymarkd is asked for its
    latest fix when its socket exists (this program needs a grant, see 'waymark auth'), and
    without it the stamp fails (exit 69), naming the age. The visit arrives and departs at the
    stamp time (source "stamp"), the place is flagged visited and its visit count grows by one.
    Prints the VISIT object.

    OPTIONS:
    \(options.listing)
    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    _ = try parsed.requirePositionals([])
    let latitude = try parsed.double("--lat")
    let longitude = try parsed.double("--lon")
    guard (latitude == nil) == (longitude == nil) else {
      throw CommandError.usage("'--lat' and '--lon' go together.")
    }
    if parsed.value("--place") != nil, latitude != nil {
      throw CommandError.usage("Give either '--place' or '--lat'/'--lon', not both.")
    }
    var position: Coordinate?
    if let latitude, let longitude {
      position = Coordinate(latitude: latitude, longitude: longitude)
      guard position?.isValid == true else {
        throw CommandError.usage("'--lat'/'--lon' are not a valid position.")
      }
    }
    let byFix = parsed.value("--place") == nil && position == nil
    for option in ["--max-age", "--socket"] where !byFix && parsed.value(option) != nil {
      throw CommandError.usage(
        "'\(option)' applies only when stamping where the last fix is (no '--place', "
          + "'--lat'/'--lon').")
    }
    let maximumAge = try parsed.double("--max-age") ?? FreshFix.defaultMaximumAgeSeconds
    guard maximumAge >= 0 else { throw CommandError.usage("'--max-age' must be >= 0 seconds.") }
    var time = Date()
    if let text = parsed.value("--time") {
      guard let date = Timestamp.parse(text) else {
        throw CommandError.usage("'--time' expects an ISO 8601 UTC time, got '\(text)'.")
      }
      time = date
    }
    let path = StorePath.resolve(option: parsed.value("--store"))
    let database = try StorePath.open(path, create: false)
    do {
      if byFix {
        let fresh = FreshFix(
          time: time, maximumAgeSeconds: maximumAge,
          socketPath: parsed.value(orDefault: "--socket"), store: path)
        position = try await fresh.position(
          lastFix: try database.read { try MonitorStateRepository($0).lastFix() })
      }
      let record = try database.write { connection -> VisitRecord in
        let places = PlaceRepository(connection)
        let place: Place
        if let id = parsed.value("--place") {
          guard let found = try places.place(id: id) else {
            throw CommandError("no place with id '\(id)' in \(path)", code: .dataError)
          }
          place = found
        } else {
          guard let here = position, let found = try places.nearestContaining(here) else {
            throw CommandError("the position is not inside any place", code: .dataError)
          }
          place = found
        }
        let visit = Visit(
          placeID: place.id, arrivalDate: time, departureDate: time, source: "stamp")
        let visits = VisitRepository(connection)
        let (entry, inserted) = try visits.insert(visit)
        if inserted { try places.markVisited(id: place.id) }
        guard let record = try visits.record(id: entry.id) else {
          throw StoreError(.notFound, message: "the stamped visit vanished", path: path)
        }
        return record
      }
      OutputSink.standardOutput.withBuffer { VisitsCommand.visitLine(record).write(to: &$0) }
      return .ok
    } catch {
      throw StorePath.commandError(error)
    }
  }
}
