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
    case .placeEvent(let event):
      return event.jsonLine().closed + [0x0A]
    case .visit(let stay):
      return stay.visitLine(place: nil, source: stay.source).closed + [0x0A]
    case .unknown(_, let raw):
      return Array(raw.utf8) + [0x0A]
    default:
      var object = JSONLine(class: className)
      addMembers(to: &object)
      return object.closed + [0x0A]
    }
  }

  /// The members after `class` of every class but those with a writer of their own.
  private func addMembers(to line: inout JSONLine) {
    switch self {
    case .version(let version):
      line.add("release", version.release)
      line.add("proto_major", version.protocolMajor)
      line.add("proto_minor", version.protocolMinor)
    case .authorization(let authorization):
      line.add("client", authorization.clientID)
      line.add("status", authorization.state.status.rawValue)
      line.add("accuracy", authorization.state.accuracy.rawValue)
    case .watch(let watch):
      watch.addMembers(to: &line)
    case .agent(let enabled):
      line.add("enable", enabled)
    case .status(let status):
      line.add("release", status.release)
      line.add("clients", status.clients)
      line.add("watchers", status.watchers)
      line.add("nmeaClients", status.nmeaClients)
      line.add("lastFix", status.lastFix)
    case .session(let session):
      session.addMembers(to: &line)
    case .heldMonitor(let answer):
      line.add("name", answer.name)
      line.add("op", answer.operation)
      line.add("conditions", answer.conditionCount)
      line.add("last", answer.last)
      line.add("lost", answer.lost)
      line.add("more", answer.more)
      line.add("next", answer.next)
    case .heldMonitorEvent(let event):
      line.add("name", event.name)
      line.add("sequence", event.sequence)
      line.add("id", event.identifier)
      line.add("state", event.isSatisfied ? "satisfied" : "unsatisfied")
      line.add("time", event.date)
    case .ask(let ask):
      line.add("id", ask.id)
      line.add("client", ask.clientID)
      line.add("pid", ask.processID)
      line.add("level", ask.level.rawValue)
      line.add("purpose", ask.purpose)
    case .decided(let decided):
      line.add("id", decided.id)
      line.add("client", decided.clientID)
      line.add("grant", decided.grant.rawValue)
      line.add("recorded", decided.recorded)
      line.add("reason", decided.reason)
    case .error(let message):
      line.add("message", message)
    case .location, .placeEvent, .visit, .unknown:
      // Written by `line` with their own writers.
      break
    }
  }
}

extension DaemonMessage.Watch {
  /// `enable`; when watching also `accuracy`, `distance` (metres, 1 decimal; if set), `events`
  /// and `visits` (only when asked).
  fileprivate func addMembers(to line: inout JSONLine) {
    line.add("enable", enabled)
    guard enabled else { return }
    line.add("accuracy", (accuracy ?? .full).rawValue)
    line.add("distance", distanceMeters, decimals: 1)
    line.add("events", events)
    if visits { line.add("visits", true) }
  }
}

extension DaemonMessage.Session {
  /// The answer to `"enable":false`: no session held (`authorization` `nil`; the other members
  /// are their defaults, as a client reads `{"class":"SESSION","enable":false}`).
  package static let ended = Self(
    authorization: nil, fullAccuracy: false, state: AuthorizationState(status: .notDetermined),
    servicesEnabled: true, requestInProgress: false)

  /// The session held and the state in force; only `"enable":false` once the session ended.
  fileprivate func addMembers(to line: inout JSONLine) {
    guard let authorization else {
      line.add("enable", false)
      return
    }
    line.add("authorization", authorization)
    line.add("full_accuracy", fullAccuracy)
    line.add("status", state.status.rawValue)
    line.add("accuracy", state.accuracy.rawValue)
    line.add("services", servicesEnabled)
    line.add("asking", requestInProgress)
  }
}
