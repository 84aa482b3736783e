import FoundationEssentials
import WaymarkCore
import WaymarkStore

/// OwnTracks JSON, the format OwnTracks Recorder, Home Assistant and Node-RED read:
/// the messages Waymark publishes, and the `setWaypoints` command it accepts.
package enum OwnTracks {
  /// `{"_type":"location",…}` for `fix`, or `nil` when it has no time or position.
  ///
  /// `tst` in Unix seconds, `lat`/`lon` in degrees (7 decimals), `acc` (m), `alt` (m MSL),
  /// `vel` (km/h) and `cog` (degrees) as whole numbers when known, `t` = `p` (ping).
  package static func location(_ fix: Fix, tid: String) -> String? {
    guard fix.isUsable, let time = fix.time, let coordinate = fix.coordinate else { return nil }
    var line = JSONLine()
    line.add("_type", "location")
    line.add("tst", Int(saturating: time.timeIntervalSince1970.rounded(.down)))
    line.add("lat", coordinate.latitude, decimals: 7)
    line.add("lon", coordinate.longitude, decimals: 7)
    line.add("acc", fix.horizontalError.map { Int(saturating: $0.rounded()) })
    if fix.mode == .threeDimensional {
      line.add("alt", fix.altitudeMSL.map { Int(saturating: $0.rounded()) })
    }
    line.add("vel", fix.speed.map { Int(saturating: ($0 * 3.6).rounded()) })
    line.add("cog", fix.track.map { Int(saturating: $0.rounded()) })
    line.add("tid", tid)
    line.add("t", "p")
    return line.string
  }

  /// `{"_type":"transition",…}` for `event`: `event` enter/leave, `desc` the place's name, `tst`
  /// the event's fix time, `wtst` the place's creation time (OwnTracks' waypoint id; 0 when
  /// unknown), `lat`/`lon` the deciding fix, `acc`, `t` = `c` (circular region), and `_id`, a
  /// stable id (`ARRIVAL-<place>-<ms>`) for consumers that de-duplicate QoS 1 deliveries.
  package static func transition(_ event: PlaceEvent, placeCreated: Date?, tid: String) -> String {
    var line = JSONLine()
    line.add("_type", "transition")
    let name: String
    let coordinate: Coordinate
    let accuracy: Double?
    switch event {
    case .arrival(let arrival):
      line.add("event", "enter")
      (name, coordinate, accuracy) = (
        arrival.placeName, arrival.coordinate, arrival.reason.horizontalAccuracyMeters
      )
    case .departure(let departure):
      line.add("event", "leave")
      (name, coordinate, accuracy) = (
        departure.placeName, departure.coordinate, departure.reason.horizontalAccuracyMeters
      )
    }
    line.add("desc", name)
    line.add("tst", Int(saturating: event.time.timeIntervalSince1970.rounded(.down)))
    line.add("wtst", Int(saturating: (placeCreated?.timeIntervalSince1970 ?? 0).rounded(.down)))
    line.add("lat", coordinate.latitude, decimals: 7)
    line.add("lon", coordinate.longitude, decimals: 7)
    line.add("acc", accuracy.map { Int(saturating: $0.rounded()) })
    line.add("tid", tid)
    line.add("t", "c")
    line.add("_id", "\(event.className)-\(event.placeID)-\(Timestamp.milliseconds(event.time))")
    return line.string
  }

  /// `{"_type":"waypoints","waypoints":[…]}`: every place as an OwnTracks waypoint (`desc`,
  /// `lat`, `lon`, `rad` in whole metres, `tst` its creation time, `rid` its id).
  package static func waypoints(_ places: [Place]) -> String {
    var text = #"{"_type":"waypoints","waypoints":["#
    for (index, place) in places.enumerated() {
      var line = JSONLine()
      line.add("_type", "waypoint")
      line.add("desc", place.name)
      line.add("lat", place.coordinate.latitude, decimals: 7)
      line.add("lon", place.coordinate.longitude, decimals: 7)
      line.add("rad", Int(saturating: place.radiusMeters.rounded()))
      line.add("tst", Int(saturating: (place.created?.timeIntervalSince1970 ?? 0).rounded(.down)))
      line.add("rid", place.id)
      text += (index > 0 ? "," : "") + line.string
    }
    return text + "]}"
  }

  /// Why a command was not used (logged; a bad command is never fatal).
  package struct CommandError: Error, Sendable, CustomStringConvertible {
    /// What is wrong.
    package var description: String
  }

  /// The most waypoints one `setWaypoints` command may carry.
  package static let maximumWaypoints = 1_000
  /// The most places the store may hold after a `setWaypoints` command: one that would bring it
  /// above is refused whole.
  package static let maximumPlacesInAll = 10_000
  /// The largest command payload read, bytes (a larger one is refused before it is parsed).
  package static let maximumCommandBytes = 1 << 20

  /// The places of a `{"_type":"cmd","action":"setWaypoints","waypoints":{…}}` command, checked
  /// like a places file: each waypoint needs a non-empty `desc`, `lat` in -90...90, `lon` in
  /// -180...180 and `rad` in (0, 100000] metres; `desc` and the id are checked by
  /// ``Place/textProblem(_:maximumBytes:)``; its id is `rid` when given, else `ot-<tst>` (else
  /// `ot-<desc>`). The whole command is refused at the first bad waypoint, naming its index, and
  /// a command of more than ``maximumWaypoints`` waypoints is refused whole.
  package static func setWaypoints(_ payload: [UInt8]) throws(CommandError) -> [Place] {
    guard payload.count <= maximumCommandBytes else {
      throw CommandError(
        description: "a command of \(payload.count) bytes: at most \(maximumCommandBytes)")
    }
    var reader = JSONReader(payload)
    let value: JSONValue
    do {
      value = try reader.value()
    } catch {
      throw CommandError(description: "not JSON: \(error.reason) at byte \(error.offset)")
    }
    let command = try? JSONObjectReader(value)
    guard let command, command.lenientString("_type") == "cmd" else {
      throw CommandError(description: "not a command (_type is not \"cmd\")")
    }
    guard let action = command.lenientString("action") else {
      throw CommandError(description: "command without an action")
    }
    guard action == "setWaypoints" else {
      throw CommandError(description: "unsupported action '\(action.prefix(40))'")
    }
    // The list itself, or (as OwnTracks exports it) an object holding it as `waypoints`.
    var waypoints: [JSONValue]?
    if case .array(let items)? = command.optional("waypoints") {
      waypoints = items
    } else if case .array(let items)? = command.lenientObject("waypoints")?.optional("waypoints") {
      waypoints = items
    }
    guard let list = waypoints else {
      throw CommandError(description: "setWaypoints without a waypoints list")
    }
    guard list.count <= maximumWaypoints else {
      throw CommandError(
        description: "\(list.count) waypoints: at most \(maximumWaypoints) in one command")
    }
    var places: [Place] = []
    var seen = Set<String>()
    for (index, value) in list.enumerated() {
      func fail(_ reason: String) -> CommandError {
        CommandError(description: "waypoint \(index): \(reason)")
      }
      // A member of another type than expected reads as absent (and is refused as such).
      let item = (try? JSONObjectReader(value)) ?? .empty()
      func number(_ key: String) -> Double? { (try? item.optionalDouble(key)) ?? nil }
      guard let name = item.lenientString("desc"), !name.isEmpty else {
        throw fail("missing desc")
      }
      if let problem = Place.textProblem(name) { throw fail("desc \(problem)") }
      guard let latitude = number("lat"), (-90...90).contains(latitude) else {
        throw fail("lat must be a number in -90...90")
      }
      guard let longitude = number("lon"), (-180...180).contains(longitude) else {
        throw fail("lon must be a number in -180...180")
      }
      guard let radius = number("rad"), Place.radiusProblem(radius) == nil else {
        throw fail("rad must be a number of metres above 0 and at most 100000")
      }
      var created: Date?
      if let tst = number("tst"), tst.isFinite, tst >= 0, tst < 1e11 {
        created = Date(timeIntervalSince1970: tst)
      }
      let id: String
      if let rid = item.lenientString("rid"), !rid.isEmpty {
        id = rid
      } else if let created {
        id = "ot-\(Int(saturating: created.timeIntervalSince1970))"
      } else {
        id = "ot-\(name)"
      }
      if let problem = Place.textProblem(id) { throw fail("rid \(problem)") }
      guard seen.insert(id).inserted else { throw fail("id '\(id)' given twice") }
      places.append(
        Place(
          id: id, name: name, coordinate: Coordinate(latitude: latitude, longitude: longitude),
          radiusMeters: radius, created: created))
    }
    return places
  }

  /// The outbox message of a transition, on `<topic>/event`, at QoS 2 (exactly once, whatever
  /// `mqtt-qos` says for locations).
  package static func transitionMessage(
    _ event: PlaceEvent, placeCreated: Date?, settings: MQTTSettings
  ) -> OutboxMessage {
    OutboxMessage(
      kind: .transition, topic: settings.topic + "/event",
      payload: transition(event, placeCreated: placeCreated, tid: settings.tid), qos: 2)
  }
}

/// The creation times of `places` that have one, by id (OwnTracks' `wtst`).
package func placeCreationTimes(_ places: [Place]) -> [String: Date] {
  var times: [String: Date] = [:]
  for place in places {
    if let created = place.created { times[place.id] = created }
  }
  return times
}
