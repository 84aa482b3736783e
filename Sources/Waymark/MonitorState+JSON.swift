import FoundationEssentials
import WaymarkCore

// A monitor's state in JSON, as its file (`MonitorStore`) and waymarkd's store of held monitors
// keep it, and the types' `Codable` form (`JSONCoded`): the member names and shapes that the
// files written before this code hold (see PlaceMonitor+JSON.swift for numbers and times).

extension Monitor.CircularGeographicCondition: JSONCoded {
  /// The circle in JSON: degrees, metres, and the options that are set.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("confirmations", confirmations)
    line.add("dwellSeconds", exactly: dwellSeconds)
    line.add("exitRadius", exactly: exitRadius)
    line.add("group", group)
    line.add("latitude", exactly: center.latitude)
    line.add("longitude", exactly: center.longitude)
    line.add("overlap", overlap?.rawValue)
    line.add("radius", exactly: radius)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    var overlap: PlaceOverlap?
    if let name = try object.optionalString("overlap") {
      guard let value = PlaceOverlap(rawValue: name) else {
        throw JSONObjectReader.Mismatch(
          path: object.child("overlap"),
          expected: PlaceOverlap.allCases.map(\.rawValue).joined(separator: " or "))
      }
      overlap = value
    }
    self.init(
      center: try Coordinate(json: object), radius: try object.double("radius"),
      exitRadius: try object.optionalDouble("exitRadius"),
      confirmations: try object.optionalInteger("confirmations"),
      dwellSeconds: try object.optionalDouble("dwellSeconds"),
      group: try object.optionalString("group"), overlap: overlap)
  }
}

extension Monitor.Event: JSONCoded {
  /// The event in JSON.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("condition", object: condition.json)
    line.add("date", referenceDate: date)
    line.add("identifier", identifier)
    line.add("state", state.rawValue)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    guard let state = State(rawValue: try object.string("state")) else {
      throw JSONObjectReader.Mismatch(
        path: object.child("state"),
        expected: State.allCases.map(\.rawValue).joined(separator: ", "))
    }
    self.init(
      identifier: try object.string("identifier"), state: state, date: try object.date("date"),
      condition: try Monitor.CircularGeographicCondition(json: object.object("condition")))
  }
}

extension MonitorState.Entry: JSONCoded {
  /// The entry in JSON.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("awaitsAnchor", awaitsAnchor)
    line.add("condition", object: condition.json)
    line.add("identifier", identifier)
    line.add("lastEvent", object: lastEvent.json)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    self.init(
      identifier: try object.string("identifier"),
      condition: try Monitor.CircularGeographicCondition(json: object.object("condition")),
      lastEvent: try Monitor.Event(json: object.object("lastEvent")),
      awaitsAnchor: try object.bool("awaitsAnchor"))
  }
}

extension MonitorState.Saved: JSONCoded {
  /// What a monitor's file holds, in JSON (keys sorted, as the file has always had them).
  ///
  /// JSON has no infinity or NaN: check `JSONLine.hasNonFiniteNumber` before keeping it.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("cursor", cursor.map { Int($0) })
    line.add("engine", object: engine.json)
    line.add("entries", objects: entries.map(\.json))
    line.add("version", version)
    return line
  }

  /// Reads ``json``, whatever its `version` (the caller checks it).
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    var entries: [MonitorState.Entry] = []
    for entry in try object.objects("entries") {
      entries.append(try MonitorState.Entry(json: entry))
    }
    self.init(
      version: try object.integer("version"), entries: entries,
      engine: try PlaceMonitor.Snapshot(json: object.object("engine")),
      cursor: try object.optionalInteger("cursor").map { Int64($0) })
  }

  /// Parses the text of ``json``.
  package init(jsonText bytes: [UInt8]) throws(JSONObjectReader.Mismatch) {
    try self.init(json: JSONObjectReader(parsing: bytes))
  }
}
