import FoundationEssentials
import WaymarkCore

extension DaemonMessage {
  /// The message as `waymarkd` writes it on its location socket: one JSON object, keys in the
  /// order of docs/protocol.md section 6, and its LF. ``parse(_:)`` reads it back.
  ///
  /// `TPV` is `Fix.appendTPV(to:)`'s pre-built line, `ARRIVAL`/`DEPARTURE`
  /// `PlaceEvent.jsonLine()` and `VISIT` `Stay.visitLine(place:source:)` without a place's
  /// name and descriptive fields (the broker writes a visit at a place with that writer and
  /// the place); ``unknown(class:raw:)`` is its raw line again.
  package var line: [UInt8] {
    switch self {
    case .location(let fix):
      var bytes: [UInt8] = []
      fix.appendTPV(to: &bytes)
      return bytes
    case .unknown(_, let raw):
      return Array(raw.utf8) + [0x0A]
    default:
      return object.closed + [0x0A]
    }
  }

  /// The object of every class but `TPV` and an unknown one.
  private var object: JSONLine {
    switch self {
    case .version(let version):
      var line = JSONLine(class: className)
      line.add("release", version.release)
      line.add("proto_major", version.protocolMajor)
      line.add("proto_minor", version.protocolMinor)
      return line
    case .authorization(let authorization):
      var line = JSONLine(class: className)
      line.add("client", authorization.clientID)
      Self.add(authorization.state, to: &line)
      return line
    case .watch(let watch):
      return watch.object
    case .agent(let enabled):
      var line = JSONLine(class: className)
      line.add("enable", enabled)
      return line
    case .status(let status):
      var line = JSONLine(class: className)
      line.add("release", status.release)
      line.add("clients", status.clients)
      line.add("watchers", status.watchers)
      line.add("nmeaClients", status.nmeaClients)
      line.add("lastFix", status.lastFix)
      return line
    case .placeEvent(let event):
      return event.jsonLine()
    case .visit(let stay):
      return stay.visitLine(place: nil, source: stay.source)
    case .session(let session):
      return session.object
    case .heldMonitor(let answer):
      return answer.object
    case .heldMonitorEvent(let event):
      var line = JSONLine(class: className)
      line.add("name", event.name)
      line.add("sequence", event.sequence)
      line.add("id", event.identifier)
      line.add("state", event.isSatisfied ? "satisfied" : "unsatisfied")
      line.add("time", event.date)
      return line
    case .ask(let ask):
      var line = JSONLine(class: className)
      line.add("id", ask.id)
      line.add("client", ask.clientID)
      line.add("pid", ask.processID)
      line.add("level", ask.level.rawValue)
      line.add("purpose", ask.purpose)
      return line
    case .decided(let decided):
      var line = JSONLine(class: className)
      line.add("id", decided.id)
      line.add("client", decided.clientID)
      line.add("grant", decided.grant.rawValue)
      line.add("recorded", decided.recorded)
      line.add("reason", decided.reason)
      return line
    case .error(let message):
      var line = JSONLine(class: className)
      line.add("message", message)
      return line
    case .location, .unknown:
      // Written by `line` without an object.
      return JSONLine(class: className)
    }
  }

  /// `status` and `accuracy`, as `AUTHORIZATION` and `SESSION` write them.
  private static func add(_ state: AuthorizationState, to line: inout JSONLine) {
    line.add("status", state.status.rawValue)
    line.add("accuracy", state.accuracy.rawValue)
  }
}

extension DaemonMessage.Watch {
  /// `enable`; when watching also `accuracy`, `distance` (metres, 1 decimal; if set), `events`
  /// and `visits` (only when asked).
  fileprivate var object: JSONLine {
    var line = JSONLine(class: "WATCH")
    line.add("enable", enabled)
    guard enabled else { return line }
    line.add("accuracy", (accuracy ?? .full).rawValue)
    line.add("distance", distanceMeters, decimals: 1)
    line.add("events", events)
    if visits { line.add("visits", true) }
    return line
  }
}

extension DaemonMessage.Session {
  /// The answer to `"enable":false`: no session held (`authorization` `nil`; the other members
  /// are their defaults, as a client reads `{"class":"SESSION","enable":false}`).
  package static let ended = Self(
    authorization: nil, fullAccuracy: false, state: AuthorizationState(status: .notDetermined),
    servicesEnabled: true, requestInProgress: false)

  /// The session held and the state in force; only `"enable":false` once the session ended.
  fileprivate var object: JSONLine {
    var line = JSONLine(class: "SESSION")
    guard let authorization else {
      line.add("enable", false)
      return line
    }
    line.add("authorization", authorization)
    line.add("full_accuracy", fullAccuracy)
    line.add("status", state.status.rawValue)
    line.add("accuracy", state.accuracy.rawValue)
    line.add("services", servicesEnabled)
    line.add("asking", requestInProgress)
    return line
  }
}

extension DaemonMessage.HeldMonitorAnswer {
  /// `name`, `op`, then whichever of `conditions`, `last`, `lost`, `more` and `next` are set.
  fileprivate var object: JSONLine {
    var line = JSONLine(class: "MONITOR")
    line.add("name", name)
    line.add("op", operation)
    line.add("conditions", conditionCount)
    line.add("last", last)
    line.add("lost", lost)
    line.add("more", more)
    line.add("next", next)
    return line
  }
}
