import Foundation
import WaymarkCore
import WaymarkStore

extension VisitsCommand {
  /// Renders visits in `format`.
  static func render(_ visits: [VisitRecord], as format: Format) -> [UInt8] {
    switch format {
    case .ndjson:
      var bytes: [UInt8] = []
      for record in visits { visitLine(record).write(to: &bytes) }
      return bytes
    case .geojson:
      var bytes = Array(#"{"type":"FeatureCollection","features":["#.utf8)
      for (index, record) in visits.enumerated() {
        bytes.append(contentsOf: index == 0 ? [0x0A] : [0x2C, 0x0A])
        let geometry = PlaceCollection.pointGeometry(record.place.coordinate)
        let properties = visitProperties(record)
        var feature = JSONLine()
        feature.add("type", "Feature")
        feature.add("geometry", object: geometry)
        feature.add("properties", object: properties)
        bytes.append(contentsOf: feature.closed)
      }
      bytes.append(contentsOf: Array("\n]}\n".utf8))
      return bytes
    case .gpx:
      var text = """
        <?xml version="1.0" encoding="UTF-8"?>
        <gpx version="1.1" creator="waymark" xmlns="http://www.topografix.com/GPX/1/1">

        """
      for record in visits {
        let visit = record.visit
        text += "  <wpt lat=\"\(record.place.coordinate.latitude.fixed(7))\" "
        text += "lon=\"\(record.place.coordinate.longitude.fixed(7))\">\n"
        text += "    <time>\(Timestamp.format(visit.arrivalDate))</time>\n"
        text += "    <name>\(XMLText.escaped(record.place.name))</name>\n"
        var description = "place \(visit.placeID), arrival \(Timestamp.format(visit.arrivalDate))"
        if let departure = visit.departureDate {
          description += ", departure \(Timestamp.format(departure))"
          description += ", duration \((visit.durationSeconds ?? 0).fixed(3)) s"
        } else {
          description += ", still there"
        }
        // url and image become links.
        let described = record.place.descriptiveFields.filter {
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
      for record in visits {
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
      for record in visits {
        let visit = record.visit
        text += Timestamp.format(visit.arrivalDate) + "  "
        text += (visit.departureDate.map(Timestamp.format) ?? "(still there)           ") + "  "
        text += (visit.durationSeconds.map(duration) ?? "-").padding(
          toLength: 10, withPad: " ", startingAt: 0)
        // Names and fields come from places files and MQTT: escaped for the terminal.
        text += "  \(LogText.escaped(record.place.name)) (\(LogText.escaped(visit.placeID)))"
        let fields = record.place.descriptiveFields.map { LogText.escaped($0.value) }
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
  /// recorded them (each only when known), fix count, accuracy, source, and `removed`: when the
  /// place was removed from the store, `null` while it is there.
  static func visitLine(_ record: VisitRecord) -> JSONLine {
    var line = JSONLine(class: "VISIT")
    appendFields(record, to: &line)
    return line
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
    for field in record.place.descriptiveFields { line.add(field.key, field.value) }
    line.add("fixes", visit.fixCount)
    line.add("accuracy", visit.bestAccuracyMeters, decimals: 1)
    line.add("source", visit.source)
    if let removed = record.placeRemoved {
      line.add("removed", removed)
    } else {
      line.addNullable("removed", nil)
    }
  }

  /// `seconds` for people: `1h 2m`, `4m 6s`, `2s`.
  static func duration(_ seconds: Double) -> String {
    let total = Int(seconds.rounded())
    let hours = total / 3600
    let minutes = total / 60 % 60
    let rest = total % 60
    if hours > 0 { return "\(hours)h \(minutes)m" }
    if minutes > 0 { return "\(minutes)m \(rest)s" }
    return "\(rest)s"
  }

  private static func csv(_ text: String) -> String {
    guard text.contains(where: { $0 == "," || $0 == "\"" || $0 == "\n" || $0 == "\r" }) else {
      return text
    }
    return "\"" + text.replacingOccurrences(of: "\"", with: "\"\"") + "\""
  }
}
