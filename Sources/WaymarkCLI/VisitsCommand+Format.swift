import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkGazetteer
import WaymarkStore

extension VisitsCommand {
  /// A row of the listing: a place's visit, or a stay at no declared place.
  enum Entry {
    case visit(VisitRecord)
    case stay(Stay)

    var arrival: Date {
      switch self {
      case .visit(let record): record.visit.arrivalDate
      case .stay(let stay): stay.arrivalDate
      }
    }
  }

  /// Visits and stays in one list, oldest arrival first (a visit before a stay arriving at the
  /// same time).
  static func merge(_ visits: [VisitRecord], _ stays: [Stay]) -> [Entry] {
    var entries: [Entry] = []
    entries.reserveCapacity(visits.count + stays.count)
    var next = stays.startIndex
    for record in visits {
      while next < stays.endIndex, stays[next].arrivalDate < record.visit.arrivalDate {
        entries.append(.stay(stays[next]))
        next += 1
      }
      entries.append(.visit(record))
    }
    entries += stays[next...].map(Entry.stay)
    return entries
  }

  /// Renders visits and stays (at no declared place) in `format`; with `towns`, each stay with
  /// the town it is in (``Gazetteer/locality(of:nearbyMeters:)``), when one is near.
  static func render(
    _ visits: [VisitRecord], stays: [Stay] = [], as format: Format, towns: Bool = false
  ) -> [UInt8] {
    let entries = merge(visits, stays)
    func town(_ stay: Stay) -> Town? {
      towns ? Gazetteer.bundled.locality(of: stay.coordinate)?.town : nil
    }
    switch format {
    case .ndjson:
      var bytes: [UInt8] = []
      for entry in entries {
        switch entry {
        case .visit(let record): visitLine(record).write(to: &bytes)
        case .stay(let stay):
          var line = stayLine(stay, place: nil, source: stay.source)
          addTown(town(stay), to: &line)
          line.write(to: &bytes)
        }
      }
      return bytes
    case .geojson:
      var bytes = FeatureCollectionFrame.opening
      var frame = FeatureCollectionFrame()
      for entry in entries {
        frame.appendSeparator(to: &bytes)
        let geometry: JSONLine
        let properties: JSONLine
        switch entry {
        case .visit(let record):
          geometry = PlaceCollection.pointGeometry(record.place.coordinate)
          properties = visitProperties(record)
        case .stay(let stay):
          geometry = PlaceCollection.pointGeometry(stay.coordinate)
          var fields = stay.visitFields(place: nil, source: stay.source, into: JSONLine())
          addTown(town(stay), to: &fields)
          properties = fields
        }
        var feature = JSONLine()
        feature.add("type", "Feature")
        feature.add("geometry", object: geometry)
        feature.add("properties", object: properties)
        bytes.append(contentsOf: feature.closed)
      }
      bytes.append(contentsOf: FeatureCollectionFrame.closing)
      return bytes
    case .gpx:
      var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="waymark" xmlns="http://www.topografix.com/GPX/1/1">

        """
      for entry in entries {
        guard case .visit(let record) = entry else {
          if case .stay(let stay) = entry { text += gpxWaypoint(stay, town: town(stay)) }
          continue
        }
        let visit = record.visit
        text += "  <wpt lat=\"\(record.place.coordinate.latitude.fixed(7))\" "
        text += "lon=\"\(record.place.coordinate.longitude.fixed(7))\">\n"
        text += "    <time>\(Timestamp.format(visit.arrivalDate))</time>\n"
        text += "    <name>\(XMLText.escaped(record.place.name))</name>\n"
        var description = "place \(visit.placeID), arrival \(Timestamp.format(visit.arrivalDate))"
        description += gpxEnd(visit.departureDate, durationSeconds: visit.durationSeconds)
        // url and image become links.
        let described = record.place.details.descriptiveFields.filter {
          $0.key != "url" && $0.key != "image"
        }
        for field in described { description += ", \(field.key) \(field.value)" }
        if let removed = record.placeRemoved {
          description += ", place removed \(Timestamp.format(removed))"
        }
        text += "    <desc>\(XMLText.escaped(description))</desc>\n"
        if let url = record.place.url {
          text += "    <link href=\"\(XMLText.escaped(url))\">"
          text += "<text>\(XMLText.escaped(record.place.name))</text></link>\n"
        }
        if let image = record.place.image {
          text += "    <link href=\"\(XMLText.escaped(image))\"><text>image</text></link>\n"
        }
        text += "    <type>visit</type>\n"
        text += "  </wpt>\n"
      }
      text += "</gpx>\n"
      return Array(text.utf8)
    case .csv:
      var text = "place,name,arrival,departure,duration,fixes,best_accuracy,source,lat,lon,"
      text += "category,subtitle,address,town,url,image,detail,removed\r\n"
      for entry in entries {
        guard case .visit(let record) = entry else {
          if case .stay(let stay) = entry { text += csvRow(stay, town: town(stay)) }
          continue
        }
        let visit = record.visit
        let place = record.place
        let fields = [
          csv(visit.placeID), csv(place.name), Timestamp.format(visit.arrivalDate),
          visit.departureDate.map(Timestamp.format) ?? "",
          visit.durationSeconds.map { $0.fixed(3) } ?? "", String(visit.fixCount),
          visit.bestAccuracyMeters.map { $0.fixed(1) } ?? "", csv(visit.source ?? ""),
          place.coordinate.latitude.fixed(7), place.coordinate.longitude.fixed(7),
          csv(place.category ?? ""), csv(place.subtitle ?? ""), csv(place.address ?? ""),
          csv(place.town ?? ""), csv(place.url ?? ""), csv(place.image ?? ""),
          csv(place.detail ?? ""), record.placeRemoved.map(Timestamp.format) ?? "",
        ]
        text += fields.joined(separator: ",") + "\r\n"
      }
      return Array(text.utf8)
    case .text:
      var text = ""
      for entry in entries {
        guard case .visit(let record) = entry else {
          if case .stay(let stay) = entry { text += textLine(stay, town: town(stay)) }
          continue
        }
        let visit = record.visit
        text += Timestamp.format(visit.arrivalDate) + "  "
        text += (visit.departureDate.map(Timestamp.format) ?? "(still there)           ") + "  "
        text += (visit.durationSeconds.map(duration) ?? "-").padded(toLength: 10)
        // Names and fields come from places files and MQTT: escaped for the terminal.
        text += "  \(LogText.escaped(record.place.name)) (\(LogText.escaped(visit.placeID)))"
        let fields = record.place.details.descriptiveFields.map { LogText.escaped($0.value) }
        if !fields.isEmpty { text += "  " + fields.joined(separator: " · ") }
        if let removed = record.placeRemoved {
          text += "  [place removed \(Timestamp.format(removed))]"
        }
        text += "\n"
      }
      return Array(text.utf8)
    }
  }

  /// The VISIT object of the CLI contract, plus the place's centre and descriptive fields as the visit
  /// recorded them (each only when known), fix count, accuracy, source, `device` (only for a
  /// device other than `local`: a replayed fleet's), and `removed`: when the place was removed
  /// from the store, `null` while it is there.
  static func visitLine(_ record: VisitRecord) -> JSONLine {
    var line = JSONLine(class: "VISIT")
    appendFields(record, to: &line)
    return line
  }

  /// The VISIT object of a stay found from the fixes (`waymark replay --visits`): the same
  /// fields as a place's visit, with `place` and `name` `null` at no declared place, `lat` and
  /// `lon` the stay's centre and `accuracy` the centre's.
  static func stayLine(_ stay: Stay, place: PlaceSnapshot?, source: String?) -> JSONLine {
    stay.visitLine(place: place, source: source)
  }

  private static func visitProperties(_ record: VisitRecord) -> JSONLine {
    var line = JSONLine()
    appendFields(record, to: &line)
    return line
  }

  private static func appendFields(_ record: VisitRecord, to line: inout JSONLine) {
    let visit = record.visit
    line.add("place", visit.placeID)
    line.add("name", record.place.name)
    line.add("arrival", visit.arrivalDate)
    if let departure = visit.departureDate {
      line.add("departure", departure)
    } else {
      line.addNullable("departure", nil)
    }
    if let duration = visit.durationSeconds {
      line.add("duration", duration, decimals: 3)
    } else {
      line.add("duration", rawJSON: "null")
    }
    line.add("lat", record.place.coordinate.latitude, decimals: 7)
    line.add("lon", record.place.coordinate.longitude, decimals: 7)
    for field in record.place.details.descriptiveFields { line.add(field.key, field.value) }
    line.add("fixes", visit.fixCount)
    line.add("accuracy", visit.bestAccuracyMeters, decimals: 1)
    line.add("source", visit.source)
    if record.device != StoreDevice.local { line.add("device", record.device) }
    if let removed = record.placeRemoved {
      line.add("removed", removed)
    } else {
      line.addNullable("removed", nil)
    }
  }

  /// The end of a waypoint's description: its departure and duration, or that it is open.
  private static func gpxEnd(_ departure: Date?, durationSeconds: Double?) -> String {
    guard let departure else { return ", still there" }
    return
      ", departure \(Timestamp.format(departure)), duration \((durationSeconds ?? 0).fixed(3)) s"
  }

  /// `town` and `country` (its ISO code) of a stay's line, when there is a town.
  private static func addTown(_ town: Town?, to line: inout JSONLine) {
    guard let town else { return }
    line.add("town", town.name)
    line.add("country", town.countryCode)
  }

  private static func gpxWaypoint(_ stay: Stay, town: Town?) -> String {
    var text = "  <wpt lat=\"\(stay.coordinate.latitude.fixed(7))\" "
    text += "lon=\"\(stay.coordinate.longitude.fixed(7))\">\n"
    text += "    <time>\(Timestamp.format(stay.arrivalDate))</time>\n"
    text += "    <name>stay</name>\n"
    var description = "stay at no declared place, arrival \(Timestamp.format(stay.arrivalDate))"
    description += gpxEnd(stay.departureDate, durationSeconds: stay.durationSeconds)
    description += ", accuracy \(stay.horizontalAccuracy.fixed(1)) m"
    if let town { description += ", near \(town.name), \(town.country)" }
    text += "    <desc>\(XMLText.escaped(description))</desc>\n"
    text += "    <type>stay</type>\n"
    text += "  </wpt>\n"
    return text
  }

  private static func csvRow(_ stay: Stay, town: Town?) -> String {
    let fields = [
      "", "", Timestamp.format(stay.arrivalDate), stay.departureDate.map(Timestamp.format) ?? "",
      stay.durationSeconds.map { $0.fixed(3) } ?? "", String(stay.fixCount),
      stay.horizontalAccuracy.fixed(1), csv(stay.source ?? ""),
      stay.coordinate.latitude.fixed(7), stay.coordinate.longitude.fixed(7),
    ]
    // category, subtitle, address, town, url, image, detail, removed
    let place = ["", "", "", csv(town?.name ?? ""), "", "", "", ""]
    return (fields + place).joined(separator: ",") + "\r\n"
  }

  private static func textLine(_ stay: Stay, town: Town?) -> String {
    var text = Timestamp.format(stay.arrivalDate) + "  "
    text += (stay.departureDate.map(Timestamp.format) ?? "(still there)           ") + "  "
    text += (stay.durationSeconds.map(duration) ?? "-").padded(toLength: 10)
    text += "  (stay) \(stay.coordinate.latitude.fixed(5)),\(stay.coordinate.longitude.fixed(5))"
    text += " ±\(stay.horizontalAccuracy.fixed(0)) m"
    if let town { text += "  near \(town.name), \(town.country)" }
    text += "\n"
    return text
  }

  /// `seconds` for people: `1h 2m`, `4m 6s`, `2s`.
  static func duration(_ seconds: Double) -> String {
    let total = Int(saturating: seconds.rounded())
    let hours = total / 3600
    let minutes = total / 60 % 60
    let rest = total % 60
    if hours > 0 { return "\(hours)h \(minutes)m" }
    if minutes > 0 { return "\(minutes)m \(rest)s" }
    return "\(rest)s"
  }

  /// A text cell (RFC 4180 quoting). A cell that a spreadsheet would read as a formula (it
  /// starts with `=`, `+`, `-`, `@`, a tab or a carriage return: a place name from a broker or a
  /// places file) is written as text: quoted, with a `'` before it.
  static func csv(_ text: String) -> String {
    if let first = text.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) {
      return "\"'" + text.replacing("\"", with: "\"\"") + "\""
    }
    guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
      return text
    }
    return "\"" + text.replacing("\"", with: "\"\"") + "\""
  }
}
