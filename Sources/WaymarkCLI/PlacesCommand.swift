import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore
import WaymarkStore

/// `waymark places`: import, list, add, remove and export the places in the store.
enum PlacesCommand: Command {
  static let name = "places"
  static let summary = "Manage places in the store: import, list, add, remove, export."
  /// The options, declared once: parsing, `--help`, `waymark.1` and completions read them.
  static let options = OptionTable(
    column: 22,
    [
      .store,
      .value("--name", "<n>", nil),
      .value("--lat", "<deg>", nil),
      .value("--lon", "<deg>", nil),
      .value("--radius", "<m>", nil),
      .value("--id", "<id>", nil),
      .value("--min-visits", "<n>", nil),
      .json(nil),
    ])

  static let help = """
    USAGE: waymark places <subcommand> [--store <db>] [options]

    Manages the places in the store. A place is a circle (centre and radius in metres) with a
    name and optional descriptive fields; see docs/guide/places-and-visits.md, "Places file and
    store".

    SUBCOMMANDS:
      import <file>       Import a GeoJSON FeatureCollection of Point features. A bad file is
                          rejected whole (feature index and reason); places whose id exists are
                          updated, keeping their visits. Recorded stays at no declared place
                          whose centre lies in an imported place are labelled with it.
      list [--json]       List places (text, or NDJSON PLACE objects with --json).
      add --name <n> --lat <deg> --lon <deg> [--radius <m>] [--id <id>]
                          Add one place; prints its id (made from the name when not given).
      remove <id>         Remove a place and its monitor state. Its visits and events are
                          kept, marked as of a removed place (each visit keeps the name and
                          fields the place had); an open visit is closed. 'waymark visits
                          delete' deletes history. A place added again with the id is a new
                          place with a history of its own.
      export              Write every place as GeoJSON to stdout.
      suggest [--min-visits <n>] [--radius <m>]
                          Propose places from the recorded stays at no declared place:
                          density-based clustering (a place needs <n> stays, default 3, each
                          within <m> metres, default 50, of another of its stays). Writes
                          GeoJSON that 'places import' accepts (centre weighted by the stays'
                          accuracy, radius holding 95 % of them, visit count in "detail");
                          one line per place on stderr. Edit the names, then import.

    OPTIONS:
    \(options.listing)
    """

  static func run(_ arguments: [String]) async throws -> ExitCode {
    let parsed = try ParsedArguments(arguments, declared: options)
    guard let subcommand = parsed.positionals.first else {
      throw CommandError.usage(
        "Missing subcommand (import, list, add, remove, export, suggest).")
    }
    let rest = Array(parsed.positionals.dropFirst())
    let path = StorePath.resolve(option: parsed.value("--store"))
    func allow(_ allowed: Set<String>) throws {
      let given = Set(parsed.options.keys).union(parsed.flags).subtracting(["--store"])
      if let extra = given.subtracting(allowed).sorted().first {
        throw CommandError.usage("'\(extra)' does not apply to 'places \(subcommand)'.")
      }
    }
    func noArguments() throws {
      if let extra = rest.first { throw CommandError.usage("Unexpected argument '\(extra)'.") }
    }
    func onlyArgument(_ placeholder: String) throws -> String {
      guard rest.count == 1 else {
        throw CommandError.usage(rest.isEmpty ? "Missing \(placeholder)." : "Unexpected argument.")
      }
      return rest[0]
    }
    do {
      switch subcommand {
      case "import":
        try allow([])
        return try importFile(try onlyArgument("<file>"), store: path)
      case "list":
        try allow(["--json"])
        try noArguments()
        return try list(store: path, json: parsed.has("--json"))
      case "add":
        try allow(["--name", "--lat", "--lon", "--radius", "--id"])
        try noArguments()
        return try add(parsed, store: path)
      case "remove":
        try allow([])
        return try remove(try onlyArgument("<id>"), store: path)
      case "export":
        try allow([])
        try noArguments()
        return try export(store: path)
      case "suggest":
        try allow(["--min-visits", "--radius"])
        try noArguments()
        return try suggest(parsed, store: path)
      default:
        throw CommandError.usage("Unknown subcommand '\(subcommand)'.")
      }
    } catch {
      throw StorePath.commandError(error)
    }
  }

  private static func importFile(_ file: String, store: String) throws -> ExitCode {
    guard let data = FileManager.default.contents(atPath: file) else {
      throw CommandError("cannot read \(file)", code: .noInput)
    }
    let places: [Place]
    do {
      places = try PlaceCollection.decode(data)
    } catch {
      throw CommandError("\(file): \(error)", code: .dataError)
    }
    let database = try StorePath.open(store, create: true, personal: true)
    let added = try database.write { connection in
      let added = try PlaceRepository(connection).upsert(places)
      let stays = StayRepository(connection)
      for place in places {
        try stays.label(
          placeID: place.id, centre: place.coordinate, radiusMeters: place.radiusMeters)
      }
      return added
    }
    OutputSink.standardError.line(
      "Imported \(places.count) places from \(file) (\(added) new, "
        + "\(places.count - added) updated) into \(store).")
    return .ok
  }

  private static func suggest(_ parsed: ParsedArguments, store: String) throws -> ExitCode {
    var suggester = PlaceSuggester()
    if let text = parsed.value("--min-visits") {
      guard let count = Int(text), count >= 1, count <= 1_000_000 else {
        throw CommandError.usage("'--min-visits' expects a whole number >= 1, got '\(text)'.")
      }
      suggester.minimumVisits = count
    }
    if let text = parsed.value("--radius") {
      guard let meters = Double(text), meters >= 1, meters <= 10_000 else {
        throw CommandError.usage("'--radius' expects metres in [1, 10000], got '\(text)'.")
      }
      suggester.radiusMeters = meters
    }
    let database = try StorePath.open(store, create: false)
    let stays = try database.read { try StayRepository($0).all(unnamedOnly: true) }
    let suggestions = suggester.suggestions(stays)
    var places: [Place] = []
    for (index, suggestion) in suggestions.enumerated() {
      let latitude = suggestion.coordinate.latitude.fixed(5)
      let longitude = suggestion.coordinate.longitude.fixed(5)
      var detail = "\(suggestion.visitCount) stays, "
      detail += "\(Timestamp.format(suggestion.firstArrival)) to "
      detail += Timestamp.format(suggestion.lastArrival)
      places.append(
        Place(
          id: "stay-\(latitude)-\(longitude)", name: "Suggested place \(index + 1)",
          coordinate: suggestion.coordinate, radiusMeters: suggestion.radiusMeters,
          category: "suggested", detail: detail))
      OutputSink.standardError.line(
        "\(index + 1). \(latitude),\(longitude) radius \(suggestion.radiusMeters.fixed(0)) m: "
          + detail)
    }
    OutputSink.standardOutput.write(PlaceCollection.encode(places))
    OutputSink.standardError.line(
      "\(suggestions.count) place(s) suggested from \(stays.count) stay(s) at no declared place.")
    return .ok
  }

  private static func list(store: String, json: Bool) throws -> ExitCode {
    let database = try StorePath.open(store, create: false)
    let output = OutputSink.standardOutput
    try database.read { connection in
      try PlaceRepository(connection).enumerate { place in
        if json {
          output.withBuffer { placeLine(place).write(to: &$0) }
        } else {
          // Names come from places files and MQTT: escaped for the terminal (a tab too).
          var text = "\(LogText.escaped(place.id))\t\(LogText.escaped(place.name))\t"
          text += "\(place.coordinate.latitude.fixed(6))\t\(place.coordinate.longitude.fixed(6))\t"
          text += "\(place.radiusMeters.fixed(0)) m"
          if place.visited { text += "\tvisited \(place.visitCount)x" }
          output.line(text)
        }
      }
    }
    return .ok
  }

  /// The NDJSON object for `place`.
  static func placeLine(_ place: Place) -> JSONLine {
    var line = JSONLine(class: "PLACE")
    line.add("id", place.id)
    line.add("name", place.name)
    line.add("lat", place.coordinate.latitude, decimals: 7)
    line.add("lon", place.coordinate.longitude, decimals: 7)
    line.add("radius", place.radiusMeters, decimals: 1)
    PlaceCollection.addDescriptiveFields(of: place, to: &line)
    return line
  }

  private static func add(_ parsed: ParsedArguments, store: String) throws -> ExitCode {
    guard let name = parsed.value("--name"), !name.isEmpty else {
      throw CommandError.usage("Missing '--name <name>'.")
    }
    if let problem = Place.textProblem(name) { throw CommandError.usage("'--name' \(problem).") }
    guard let latitude = try parsed.double("--lat") else {
      throw CommandError.usage("Missing '--lat <degrees>'.")
    }
    guard let longitude = try parsed.double("--lon") else {
      throw CommandError.usage("Missing '--lon <degrees>'.")
    }
    guard (-90.0...90.0).contains(latitude) else {
      throw CommandError.usage("'--lat' must be within -90...90.")
    }
    guard (-180.0...180.0).contains(longitude) else {
      throw CommandError.usage("'--lon' must be within -180...180.")
    }
    let radius = try parsed.double("--radius") ?? Place.defaultRadiusMeters
    if let problem = Place.radiusProblem(radius) {
      throw CommandError.usage("'--radius' \(problem).")
    }
    if let id = parsed.value("--id"), let problem = Place.textProblem(id) {
      throw CommandError.usage("'--id' \(problem).")
    }
    let database = try StorePath.open(store, create: true, personal: true)
    let id = try database.write { connection in
      let places = PlaceRepository(connection)
      let id: String
      if let given = parsed.value("--id") {
        guard try !places.contains(id: given) else {
          throw CommandError("a place with id '\(given)' exists", code: .dataError)
        }
        id = given
      } else {
        id = try freeIdentifier(for: name, in: places)
      }
      try places.insert(
        Place(
          id: id, name: name, coordinate: Coordinate(latitude: latitude, longitude: longitude),
          radiusMeters: radius, created: Date()))
      return id
    }
    OutputSink.standardOutput.line(id)
    return .ok
  }

  /// A slug of `name` (`Blue Bottle` → `blue-bottle`), with `-2`, `-3` … when taken.
  static func freeIdentifier(for name: String, in places: PlaceRepository) throws -> String {
    var slug = ""
    for scalar in name.lowercased().unicodeScalars {
      if ("a"..."z").contains(scalar) || ("0"..."9").contains(scalar) {
        slug.unicodeScalars.append(scalar)
      } else if !slug.isEmpty, !slug.hasSuffix("-") {
        slug += "-"
      }
    }
    while slug.hasSuffix("-") { slug.removeLast() }
    if slug.isEmpty { slug = "place" }
    var candidate = slug
    var suffix = 2
    while try places.contains(id: candidate) {
      candidate = "\(slug)-\(suffix)"
      suffix += 1
    }
    return candidate
  }

  private static func remove(_ id: String, store: String) throws -> ExitCode {
    let database = try StorePath.open(store, create: false)
    guard let removal = try database.write({ try PlaceRepository($0).remove(id: id) }) else {
      throw CommandError("no place with id '\(id)' in \(store)", code: .dataError)
    }
    var text = "Removed place '\(id)' from \(store); kept its \(removal.visits) visit(s) and "
    text += "\(removal.events) event(s)"
    if removal.closedOpenVisit { text += ", closing the open visit" }
    if removal.visits + removal.events > 0 {
      text += " ('waymark visits delete --place \(id) --removed' deletes them)"
    }
    OutputSink.standardError.line(text + ".")
    return .ok
  }

  private static func export(store: String) throws -> ExitCode {
    let database = try StorePath.open(store, create: false)
    let output = OutputSink.standardOutput
    output.write(FeatureCollectionFrame.opening)
    var frame = FeatureCollectionFrame()
    try database.read { connection in
      try PlaceRepository(connection).enumerate { place in
        output.withBuffer { buffer in
          frame.appendSeparator(to: &buffer)
          PlaceCollection.append(place, to: &buffer)
        }
      }
    }
    output.write(FeatureCollectionFrame.closing)
    return .ok
  }
}
