import FoundationEssentials
import WaymarkCore

// The place monitor's state in JSON, as a monitor's file and the store keep it, and the types'
// `Codable` form (`JSONCoded`): the member names and shapes Foundation's encoder wrote before
// (which still read), keys sorted, numbers that read back bit for bit, times as seconds since
// 2001-01-01 (`Date`'s `Codable` form). An enum case is an object with one member, the case,
// whose value holds the payloads as `_0`, `_1`.

extension JSONObjectReader {
  /// The time member `key`, seconds since 2001-01-01 (`Date`'s `Codable` form).
  package func date(_ key: String) throws(Mismatch) -> Date {
    Date(timeIntervalSinceReferenceDate: try double(key))
  }
}

extension JSONLine {
  /// Adds a time as seconds since 2001-01-01 (`Date`'s `Codable` form), exactly.
  package mutating func add(_ name: String, referenceDate date: Date) {
    add(name, exactly: date.timeIntervalSinceReferenceDate)
  }
}

extension PlaceMonitor.Sample: JSONCoded {
  /// The sample in JSON.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("accuracyMeters", exactly: accuracyMeters)
    line.add("coordinate", object: coordinate.json)
    line.add("courseDegrees", exactly: courseDegrees)
    line.add("speedMetersPerSecond", exactly: speedMetersPerSecond)
    line.add("time", referenceDate: time)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    self.init(
      time: try object.date("time"), coordinate: try Coordinate(json: object.object("coordinate")),
      accuracyMeters: try object.double("accuracyMeters"),
      speedMetersPerSecond: try object.optionalDouble("speedMetersPerSecond"),
      courseDegrees: try object.optionalDouble("courseDegrees"))
  }
}

extension PlaceMonitor.Candidate: JSONCoded {
  /// The candidate in JSON.
  package var json: JSONLine {
    var line = JSONLine()
    if let before { line.add("before", object: before.json) }
    line.add("confirmingCount", confirmingCount)
    line.add("count", count)
    line.add("first", object: first.json)
    line.add("last", object: last.json)
    return line
  }

  /// Reads ``json``; one saved before `confirmingCount` existed gets `count`.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    self.init(
      before: try object.optionalObject("before").map(PlaceMonitor.Sample.init(json:)),
      first: try PlaceMonitor.Sample(json: object.object("first")),
      last: try PlaceMonitor.Sample(json: object.object("last")),
      count: try object.integer("count"),
      confirmingCount: try object.optionalInteger("confirmingCount"))
  }
}

extension PlaceMonitor.Stay: JSONCoded {
  /// The stay in JSON.
  package var json: JSONLine {
    var line = JSONLine()
    line.add("arrival", referenceDate: arrival)
    line.add("bestAccuracyMeters", exactly: bestAccuracyMeters)
    line.add("fixCount", fixCount)
    line.add("lastFix", referenceDate: lastFix)
    line.add("lastInside", object: lastInside.json)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    self.init(
      arrival: try object.date("arrival"),
      lastInside: try PlaceMonitor.Sample(json: object.object("lastInside")),
      lastFix: try object.date("lastFix"), fixCount: try object.integer("fixCount"),
      bestAccuracyMeters: try object.double("bestAccuracyMeters"))
  }
}

extension PlaceMonitor.State: JSONCoded {
  /// The state in JSON: `{"outside":{}}`, `{"arriving":{"_0":candidate}}`,
  /// `{"inside":{"_0":stay}}` or `{"departing":{"_0":stay,"_1":candidate}}`.
  package var json: JSONLine {
    var payload = JSONLine()
    let name: String
    switch self {
    case .outside:
      name = "outside"
    case .arriving(let candidate):
      name = "arriving"
      payload.add("_0", object: candidate.json)
    case .inside(let stay):
      name = "inside"
      payload.add("_0", object: stay.json)
    case .departing(let stay, let candidate):
      name = "departing"
      payload.add("_0", object: stay.json)
      payload.add("_1", object: candidate.json)
    }
    var line = JSONLine()
    line.add(name, object: payload)
    return line
  }

  /// Reads ``json``.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    let cases = "one member: outside, arriving, inside or departing"
    guard object.keys.count == 1, let name = object.keys.first else {
      throw JSONObjectReader.Mismatch(path: object.path, expected: cases)
    }
    let payload = try object.object(name)
    switch name {
    case "outside": self = .outside
    case "arriving": self = .arriving(try PlaceMonitor.Candidate(json: payload.object("_0")))
    case "inside": self = .inside(try PlaceMonitor.Stay(json: payload.object("_0")))
    case "departing":
      self = .departing(
        try PlaceMonitor.Stay(json: payload.object("_0")),
        try PlaceMonitor.Candidate(json: payload.object("_1")))
    default: throw JSONObjectReader.Mismatch(path: object.path, expected: cases)
    }
  }

  /// Parses the JSON text of a state (as the store keeps one per place).
  package init(jsonText text: String) throws(JSONObjectReader.Mismatch) {
    try self.init(json: JSONObjectReader(parsing: Array(text.utf8)))
  }
}

extension PlaceMonitor.Snapshot: JSONCoded {
  /// The snapshot in JSON: the places by id (sorted), the last accepted fix, the suspects.
  package var json: JSONLine {
    var places = JSONLine()
    for (id, state) in self.places.sorted(by: { $0.key < $1.key }) {
      places.add(escapedName: id, object: state.json)
    }
    var line = JSONLine()
    line.add("places", object: places)
    if let previous { line.add("previous", object: previous.json) }
    line.add("suspects", objects: suspects.map(\.json))
    return line
  }

  /// Reads ``json``; one written before `suspects` existed has none.
  package init(json object: JSONObjectReader) throws(JSONObjectReader.Mismatch) {
    var places: [String: PlaceMonitor.State] = [:]
    for (id, state) in try object.object("places").objectMembers() {
      places[id] = try PlaceMonitor.State(json: state)
    }
    var suspects: [PlaceMonitor.Sample] = []
    for suspect in try object.optionalObjects("suspects") {
      suspects.append(try PlaceMonitor.Sample(json: suspect))
    }
    self.init(
      previous: try object.optionalObject("previous").map(PlaceMonitor.Sample.init(json:)),
      places: places, suspects: suspects)
  }
}
