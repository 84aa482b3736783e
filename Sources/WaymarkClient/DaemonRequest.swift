import WaymarkCore

/// One line a client sends to `waymarkd`'s location socket, typed: every request class of
/// docs/protocol.md section 5 (and section 14's `MONITOR`). ``line`` writes it; the daemon
/// decodes each line it reads into this type too (`DaemonRequest.decode(_:)`, in the broker's
/// module, which also checks what a client may not be trusted with: ranges, names, limits) and
/// acts on the value.
///
/// Members that keep their default are left out, so that the bytes are those the protocol's
/// transcripts show.
package enum DaemonRequest: Sendable, Hashable {
  /// `WATCH`: start (or change) the stream of locations.
  case watch(Watch)
  /// `{"class":"WATCH","enable":false}`: stop the stream.
  case unwatch
  /// `POLL`: one `TPV` with the latest fix.
  case poll
  /// `STATUS`: one `STATUS`.
  case status
  /// `REQUEST`: ask an agent for `level` (`whenInUse` or `always`).
  case request(level: GrantLevel)
  /// `SESSION` (protocol 1.3): hold a service session (ask for what it needs, hear what is
  /// granted).
  case session(SessionOptions)
  /// `{"class":"SESSION","enable":false}`: end the service session.
  case endSession
  /// `AGENT`: become (or stop being) an agent; `scripted` when a script answers.
  case agent(enable: Bool, scripted: Bool)
  /// `ANSWER`: an agent's decision on the question `id`.
  case answer(id: Int, answer: AgentAnswer)
  /// `MONITOR` (protocol 1.3): a change to, or a read of, the monitor `name` the daemon holds.
  case monitor(name: String, MonitorOperation)

  /// The longest line a client may send, in bytes without the newline.
  package static let maximumLineLength = 4096

  /// What a `WATCH` asks for.
  package struct Watch: Sendable, Hashable {
    /// `"accuracy":"reduced"`: coarse positions only (written only when `true`; the daemon
    /// also takes a `LocationAccuracy` name).
    package var reduced: Bool
    /// `"distance"`: metres from the last delivered location (CoreLocation's distance filter;
    /// written with 1 decimal); `nil` for none.
    package var distanceMeters: Double?
    /// `"events"`: `ARRIVAL` and `DEPARTURE` too (needs `always` with full accuracy; written
    /// only when `true`).
    package var events: Bool
    /// `"visits"` (protocol 1.2): `VISIT` too, when a stay opens or closes (needs `always` with
    /// full accuracy; written only when `true`).
    package var visits: Bool

    /// Creates options; the defaults are full accuracy, no filter, no events, no visits.
    package init(
      reduced: Bool = false, distanceMeters: Double? = nil, events: Bool = false,
      visits: Bool = false
    ) {
      self.reduced = reduced
      self.distanceMeters = distanceMeters
      self.events = events
      self.visits = visits
    }
  }

  /// What a `SESSION` holds: `"authorization"`, `"full_accuracy"`, `"purpose"`.
  package struct SessionOptions: Sendable, Hashable {
    /// The grant the session needs; `nil` for `"none"` (nothing is asked).
    package var level: GrantLevel?
    /// `"full_accuracy"`: whether full accuracy is needed.
    package var fullAccuracy: Bool
    /// `"purpose"`: why, as the program says (untrusted text); the daemon keeps at most
    /// ``maximumPurposeLength`` scalars of it (longer ones are cut and end with `…`).
    package var purpose: String?

    /// The longest purpose the daemon keeps, in Unicode scalars.
    package static let maximumPurposeLength = 200

    /// Creates options (the purpose as given: the daemon's decoder bounds it).
    package init(level: GrantLevel?, fullAccuracy: Bool = false, purpose: String? = nil) {
      self.level = level
      self.fullAccuracy = fullAccuracy
      self.purpose = purpose
    }
  }

  /// An agent's answer to an `ASK`: `"grant"` and `"accuracy"`.
  package enum AgentAnswer: Sendable, Hashable {
    /// `once`: for the life of the asking connection only, never recorded.
    case once(AccuracyAuthorization)
    /// `whenInUse`, `always` or `never`: recorded in the daemon's store (the daemon reads
    /// `never` with full accuracy, whatever was written).
    case grant(GrantLevel, AccuracyAuthorization)
  }

  /// What a `MONITOR` request does (its `op`).
  package enum MonitorOperation: Sendable, Hashable {
    /// `add`: adds or replaces conditions.
    case add([MonitorCondition])
    /// `remove`: removes the conditions of these ids.
    case remove([String])
    /// `delete`: deletes the monitor and its queue.
    case delete
    /// `events`: acknowledges up to `after` and reads the events after it.
    case events(after: Int)
    /// `ack`: acknowledges the events up to `through`.
    case acknowledge(through: Int)
  }

  /// One object of `MONITOR`'s `conditions`: a circle, in degrees and metres.
  package struct MonitorCondition: Sendable, Hashable {
    /// `id`: the condition's identifier.
    package var identifier: String
    /// `lat`, `lon`: the centre, degrees (written with 9 decimals).
    package var latitude: Double
    /// The centre's longitude, degrees.
    package var longitude: Double
    /// `radius`, metres (3 decimals).
    package var radiusMeters: Double
    /// `exitRadius`, metres (3 decimals), if set.
    package var exitRadiusMeters: Double?
    /// `confirmations`, if set.
    package var confirmations: Int?
    /// `dwell`, seconds (3 decimals), if set.
    package var dwellSeconds: Double?
    /// `group`, if set.
    package var group: String?
    /// `overlap` (`all` or `nearest`), if set.
    package var overlap: String?
    /// `assume`: `unknown`, `satisfied` or `unsatisfied`.
    package var assume: String

    /// Creates a condition.
    package init(
      identifier: String, latitude: Double, longitude: Double, radiusMeters: Double,
      exitRadiusMeters: Double? = nil, confirmations: Int? = nil, dwellSeconds: Double? = nil,
      group: String? = nil, overlap: String? = nil, assume: String = "unknown"
    ) {
      self.identifier = identifier
      self.latitude = latitude
      self.longitude = longitude
      self.radiusMeters = radiusMeters
      self.exitRadiusMeters = exitRadiusMeters
      self.confirmations = confirmations
      self.dwellSeconds = dwellSeconds
      self.group = group
      self.overlap = overlap
      self.assume = assume
    }

    fileprivate var object: JSONLine {
      var condition = JSONLine()
      condition.add("id", identifier)
      condition.add("lat", latitude, decimals: 9)
      condition.add("lon", longitude, decimals: 9)
      condition.add("radius", radiusMeters, decimals: 3)
      condition.add("exitRadius", exitRadiusMeters, decimals: 3)
      condition.add("confirmations", confirmations)
      condition.add("dwell", dwellSeconds, decimals: 3)
      condition.add("group", group)
      condition.add("overlap", overlap)
      condition.add("assume", assume)
      return condition
    }
  }

  /// The request's `class`, as on the wire.
  package var className: String {
    switch self {
    case .watch, .unwatch: "WATCH"
    case .poll: "POLL"
    case .status: "STATUS"
    case .request: "REQUEST"
    case .session, .endSession: "SESSION"
    case .agent: "AGENT"
    case .answer: "ANSWER"
    case .monitor: "MONITOR"
    }
  }

  /// The request as one JSON object, without its newline (`BrokerConnection.send(_:)` adds it).
  package var line: JSONLine {
    var line = JSONLine(class: className)
    switch self {
    case .watch(let watch):
      line.add("enable", true)
      if watch.reduced { line.add("accuracy", "reduced") }
      line.add("distance", watch.distanceMeters, decimals: 1)
      if watch.events { line.add("events", true) }
      if watch.visits { line.add("visits", true) }
    case .unwatch:
      line.add("enable", false)
    case .poll, .status:
      break
    case .request(let level):
      line.add("level", level.rawValue)
    case .session(let options):
      line.add("authorization", options.level?.rawValue ?? "none")
      line.add("full_accuracy", options.fullAccuracy)
      line.add("purpose", options.purpose)
    case .endSession:
      line.add("enable", false)
    case .agent(let enable, let scripted):
      line.add("enable", enable)
      line.add("scripted", scripted)
    case .answer(let id, .once(let accuracy)):
      line.add("id", id)
      line.add("grant", "once")
      line.add("accuracy", accuracy.rawValue)
    case .answer(let id, .grant(let level, let accuracy)):
      line.add("id", id)
      line.add("grant", level.rawValue)
      line.add("accuracy", accuracy.rawValue)
    case .monitor(let name, let operation):
      line.add("name", name)
      Self.add(operation, to: &line)
    }
    return line
  }

  /// `op` and the members of `operation`.
  private static func add(_ operation: MonitorOperation, to line: inout JSONLine) {
    switch operation {
    case .add(let conditions):
      line.add("op", "add")
      line.add("conditions", objects: conditions.map(\.object))
    case .remove(let identifiers):
      line.add("op", "remove")
      var list: [UInt8] = [UInt8(ascii: "[")]
      for (index, identifier) in identifiers.enumerated() {
        if index > 0 { list.append(UInt8(ascii: ",")) }
        JSONLine.appendString(identifier, to: &list)
      }
      list.append(UInt8(ascii: "]"))
      line.add("ids", rawJSON: String(decoding: list, as: UTF8.self))
    case .delete:
      line.add("op", "delete")
    case .events(let cursor):
      line.add("op", "events")
      line.add("after", cursor)
    case .acknowledge(let sequence):
      line.add("op", "ack")
      line.add("sequence", sequence)
    }
  }
}
