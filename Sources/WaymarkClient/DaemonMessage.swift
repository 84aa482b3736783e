import FoundationEssentials
import WaymarkCore

/// One object `waymarkd` sent on its location socket, typed: every class of docs/protocol.md
/// section 6, and ``unknown(class:raw:)`` for a class this library does not know.
///
/// ```swift
/// switch try DaemonMessage.parse(line).get() {
/// case .location(let fix): print(fix.coordinate ?? "no position")
/// case .placeEvent(let event): print(event.className, event.placeID, event.time)
/// case .unknown(let name, _): print("a later daemon sent \(name)")   // kept, not dropped
/// default: break
/// }
/// ```
///
/// Members are looked up by name and unknown members are ignored; a class added by a later
/// protocol minor version is kept as ``unknown(class:raw:)`` (the protocol's version rule). A
/// line that is not a JSON object, has no `class`, or lacks a member its class requires, is a
/// ``DaemonMessageError``, never a crash.
public enum DaemonMessage: Sendable, Hashable {
  /// `VERSION`, the first line of a connection.
  case version(Version)
  /// `AUTHORIZATION`: who this connection is and what it may have now (a state, not an event).
  case authorization(Authorization)
  /// `WATCH`: the daemon's answer to a `WATCH`.
  case watch(Watch)
  /// `AGENT`: the answer to an accepted `AGENT`; `enabled` tells whether this connection is now
  /// an agent.
  case agent(enabled: Bool)
  /// `STATUS`: the answer to a `STATUS`.
  case status(Status)
  /// `TPV`: one fix (time, 2D or 3D mode, position; altitudes in metres, speed and climb in
  /// metres per second, track in degrees from true north, `eph`/`epv` in metres when sent).
  case location(Fix)
  /// `ARRIVAL` or `DEPARTURE`: a place event (only to an `always` client with full accuracy
  /// that watches with `events`).
  case placeEvent(PlaceEvent)
  /// `VISIT` (protocol 1.2): a stay opened (`departureDate` `nil`) or closed (only to an
  /// `always` client with full accuracy that watches with `visits`). `placeID` names the
  /// declared place it lies in, `nil` at none; `source` is the daemon's.
  case visit(Stay)
  /// `SESSION` (protocol 1.3): what the daemon grants the service session this connection
  /// holds; sent in answer to `SESSION` and again after every `AUTHORIZATION` while the session
  /// is held.
  case session(Session)
  /// `MONITOR` (protocol 1.3): the daemon's answer to a `MONITOR` request about a monitor it
  /// holds for this program.
  case heldMonitor(HeldMonitorAnswer)
  /// `MONITOR_EVENT` (protocol 1.3): one event of a monitor the daemon holds for this program.
  case heldMonitorEvent(HeldMonitorEvent)
  /// `ASK`: a question for this connection, an agent.
  case ask(Ask)
  /// `DECIDED`: how the answer of this agent settled a question.
  case decided(Decided)
  /// `ERROR`: the daemon's complaint about a line this connection sent (or an agent's grant
  /// that could not be recorded); `message` is the daemon's text.
  case error(message: String)
  /// A class this library does not know (from a later protocol minor version): its name and
  /// the whole line, without the newline.
  case unknown(class: String, raw: String)

  /// The protocol major version this library implements (`proto_major` of `VERSION`).
  public static let protocolMajor = 1

  /// The object's `class`, as on the wire.
  public var className: String {
    switch self {
    case .version: "VERSION"
    case .authorization: "AUTHORIZATION"
    case .watch: "WATCH"
    case .agent: "AGENT"
    case .status: "STATUS"
    case .location: "TPV"
    case .placeEvent(let event): event.className
    case .visit: "VISIT"
    case .session: "SESSION"
    case .heldMonitor: "MONITOR"
    case .heldMonitorEvent: "MONITOR_EVENT"
    case .ask: "ASK"
    case .decided: "DECIDED"
    case .error: "ERROR"
    case .unknown(let name, _): name
    }
  }

  /// `VERSION`: the daemon's release and protocol version.
  public struct Version: Sendable, Hashable {
    /// The daemon's release, as `waymarkd --version` prints it, such as `0.1.0` (no protocol
    /// meaning).
    public var release: String
    /// `proto_major`: a client stops (or falls back) when it does not implement this one.
    public var protocolMajor: Int
    /// `proto_minor`: any value is accepted; features added in minor `n` need `n` or more.
    public var protocolMinor: Int

    /// Creates a version.
    public init(release: String, protocolMajor: Int, protocolMinor: Int) {
      self.release = release
      self.protocolMajor = protocolMajor
      self.protocolMinor = protocolMinor
    }
  }

  /// `AUTHORIZATION`: the connection's client id and its state in force.
  public struct Authorization: Sendable, Hashable {
    /// This connection's client id, `<user>:<exe>` (untrusted text: escape it before it reaches
    /// a terminal).
    public var clientID: String
    /// The status and the accuracy (`full` unless the grant is reduced).
    public var state: AuthorizationState

    /// Creates an authorization.
    public init(clientID: String, state: AuthorizationState) {
      self.clientID = clientID
      self.state = state
    }
  }

  /// `WATCH`: the watch in force after a `WATCH` request.
  public struct Watch: Sendable, Hashable {
    /// Whether locations are watched.
    public var enabled: Bool
    /// The accuracy the watch delivers (`reduced` when asked or granted reduced); `nil` when
    /// not watching.
    public var accuracy: AccuracyAuthorization?
    /// The distance filter, metres; `nil` when there is none.
    public var distanceMeters: Double?
    /// Whether place events were asked for (whether or not the grant lets them through);
    /// `false` when not watching.
    public var events: Bool
    /// Whether visits were asked for (protocol 1.2; whether or not the grant lets them
    /// through); `false` when not asked or not watching.
    public var visits: Bool

    /// Creates a watch.
    public init(
      enabled: Bool, accuracy: AccuracyAuthorization? = nil, distanceMeters: Double? = nil,
      events: Bool = false, visits: Bool = false
    ) {
      self.enabled = enabled
      self.accuracy = accuracy
      self.distanceMeters = distanceMeters
      self.events = events
      self.visits = visits
    }
  }

  /// `STATUS`: counts of the daemon's connections and the time of its latest fix.
  public struct Status: Sendable, Hashable {
    /// The daemon's release.
    public var release: String
    /// Location-socket connections other than this one.
    public var clients: Int
    /// Location-socket connections with a `WATCH` in place, this one included.
    public var watchers: Int
    /// NMEA connections (socket and TCP).
    public var nmeaClients: Int
    /// Fix time of the daemon's latest fix; `nil` when there has been none or this connection
    /// may not know it (not authorized, not root).
    public var lastFix: Date?

    /// Creates a status.
    public init(release: String, clients: Int, watchers: Int, nmeaClients: Int, lastFix: Date?) {
      self.release = release
      self.clients = clients
      self.watchers = watchers
      self.nmeaClients = nmeaClients
      self.lastFix = lastFix
    }
  }

  /// `ASK`: a program asks for a grant; this agent may answer it by ``id``.
  public struct Ask: Sendable, Hashable {
    /// The question's id, unique for the daemon's lifetime, from 1.
    public var id: Int
    /// The asking program's client id, `<user>:<exe>` (untrusted text).
    public var clientID: String
    /// The asking process's id.
    public var processID: Int
    /// The level asked for: `whenInUse` or `always`.
    public var level: GrantLevel
    /// Why, in the asking program's words (a `SESSION`'s purpose, at most 200 Unicode
    /// scalars; untrusted text: escape it before it reaches a terminal); `nil` when it gave
    /// none.
    public var purpose: String?

    /// Creates a question.
    public init(
      id: Int, clientID: String, processID: Int, level: GrantLevel, purpose: String? = nil
    ) {
      self.id = id
      self.clientID = clientID
      self.processID = processID
      self.level = level
      self.purpose = purpose
    }
  }

  /// `SESSION` (protocol 1.3): the service session this connection holds and what the daemon
  /// grants it.
  public struct Session: Sendable, Hashable {
    /// The session's requirement as held: `none`, `whenInUse` or `always`; `nil` after the
    /// session was ended (`"enable":false`).
    public var authorization: String?
    /// Whether the session asked for full accuracy.
    public var fullAccuracy: Bool
    /// The connection's state in force (as in `AUTHORIZATION`).
    public var state: AuthorizationState
    /// Whether location services are on system-wide (`false`: `/etc/waymark/disabled`).
    public var servicesEnabled: Bool
    /// Whether the daemon's agent is asking a person for this connection now.
    public var requestInProgress: Bool

    /// Creates a session answer.
    public init(
      authorization: String?, fullAccuracy: Bool, state: AuthorizationState,
      servicesEnabled: Bool, requestInProgress: Bool
    ) {
      self.authorization = authorization
      self.fullAccuracy = fullAccuracy
      self.state = state
      self.servicesEnabled = servicesEnabled
      self.requestInProgress = requestInProgress
    }
  }

  /// `DECIDED`: what an answer of this agent did.
  public struct Decided: Sendable, Hashable {
    /// The question's id.
    public var id: Int
    /// The asking program's client id (untrusted text).
    public var clientID: String
    /// What it got.
    public var grant: Outcome
    /// Whether a grant was stored.
    public var recorded: Bool
    /// Why a lasting answer counted once, or why a `never` kept the recorded `whenInUse`;
    /// `nil` otherwise.
    public var reason: String?

    /// What a settled question gave the asker.
    public enum Outcome: String, Sendable, Hashable, CaseIterable {
      /// Authorized for that connection only.
      case once
      /// `whenInUse` recorded for the client id.
      case whenInUse
      /// `always` recorded for the client id.
      case always
      /// That connection was denied.
      case never
    }

    /// Creates a decision.
    public init(id: Int, clientID: String, grant: Outcome, recorded: Bool, reason: String?) {
      self.id = id
      self.clientID = clientID
      self.grant = grant
      self.recorded = recorded
      self.reason = reason
    }
  }

  /// Decodes one line the daemon sent (without its newline).
  ///
  /// - Returns: the message, or why the line is not one.
  public static func parse(_ line: String) -> Result<DaemonMessage, DaemonMessageError> {
    parse(BrokerMessage(line: line))
  }

  /// Decodes a line a ``BrokerConnection`` read (parsed once, there).
  public static func parse(_ message: BrokerMessage) -> Result<DaemonMessage, DaemonMessageError> {
    if let syntaxError = message.syntaxError {
      return .failure(DaemonMessageError("not JSON: \(syntaxError)"))
    }
    guard let value = message.value, case .object = value else {
      return .failure(DaemonMessageError("not a JSON object"))
    }
    guard case .string(let name)? = value["class"] else {
      return .failure(DaemonMessageError("missing \"class\""))
    }
    do {
      return .success(try decode(name, Members(className: name, json: value), message))
    } catch {
      return .failure(error)
    }
  }

  private static func decode(_ name: String, _ members: Members, _ message: BrokerMessage)
    throws(DaemonMessageError) -> DaemonMessage
  {
    switch name {
    case "VERSION":
      return .version(
        Version(
          release: try members.string("release"),
          protocolMajor: try members.integer("proto_major"),
          protocolMinor: try members.integer("proto_minor")))
    case "AUTHORIZATION":
      let accuracy = try members.optionalString("accuracy") ?? "full"
      return .authorization(
        Authorization(
          clientID: try members.string("client"),
          state: AuthorizationState(
            status: try members.parsed("status", AuthorizationStatus.init(rawValue:)),
            accuracy: try members.parsed(accuracy, "accuracy", AccuracyAuthorization.init))))
    case "WATCH":
      let enabled = try members.bool("enable")
      return .watch(
        Watch(
          enabled: enabled,
          accuracy: try members.optionalString("accuracy").map {
            (text) throws(DaemonMessageError) in
            try members.parsed(text, "accuracy", AccuracyAuthorization.init)
          },
          distanceMeters: try members.optionalNumber("distance"),
          events: try members.optionalBool("events") ?? false,
          visits: try members.optionalBool("visits") ?? false))
    case "AGENT":
      return .agent(enabled: try members.bool("enable"))
    case "STATUS":
      return .status(
        Status(
          release: try members.string("release"), clients: try members.integer("clients"),
          watchers: try members.integer("watchers"),
          nmeaClients: try members.integer("nmeaClients"),
          lastFix: try members.optionalString("lastFix").map { (text) throws(DaemonMessageError) in
            try members.parsed(text, "lastFix", Timestamp.parse)
          }))
    case "TPV":
      return .location(try location(members, message))
    case "ARRIVAL", "DEPARTURE":
      return .placeEvent(try placeEvent(name, members))
    case "VISIT":
      return .visit(try visit(members))
    case "SESSION":
      guard try members.optionalBool("enable") ?? true else {
        // The session ended: only `"enable":false` is sent.
        return .session(.ended)
      }
      let accuracy = try members.optionalString("accuracy") ?? "full"
      return .session(
        Session(
          authorization: try members.optionalString("authorization"),
          fullAccuracy: try members.optionalBool("full_accuracy") ?? false,
          state: AuthorizationState(
            status: try members.parsed("status", AuthorizationStatus.init(rawValue:)),
            accuracy: try members.parsed(accuracy, "accuracy", AccuracyAuthorization.init)),
          servicesEnabled: try members.optionalBool("services") ?? true,
          requestInProgress: try members.optionalBool("asking") ?? false))
    case "MONITOR":
      return .heldMonitor(try heldMonitorAnswer(members))
    case "MONITOR_EVENT":
      return .heldMonitorEvent(try heldMonitorEvent(members))
    case "ASK":
      return .ask(
        Ask(
          id: try members.integer("id"), clientID: try members.string("client"),
          processID: try members.integer("pid"),
          level: try members.parsed("level", GrantLevel.init(rawValue:)),
          purpose: try members.optionalString("purpose")))
    case "DECIDED":
      return .decided(
        Decided(
          id: try members.integer("id"), clientID: try members.string("client"),
          grant: try members.parsed("grant", Decided.Outcome.init(rawValue:)),
          recorded: try members.bool("recorded"), reason: try members.optionalString("reason")))
    case "ERROR":
      return .error(message: try members.string("message"))
    default:
      return .unknown(class: name, raw: message.line)
    }
  }

  /// A `TPV`: the protocol sends only fixes with a time, a 2D or 3D mode and a valid position.
  private static func location(_ members: Members, _ message: BrokerMessage)
    throws(DaemonMessageError) -> Fix
  {
    _ = try members.parsed("time", Timestamp.parse)
    _ = try members.number("lat")
    _ = try members.number("lon")
    guard FixMode(rawValue: try members.integer("mode"))?.hasPosition == true,
      var fix = message.fix
    else { throw DaemonMessageError("TPV: \"mode\" must be 2 or 3") }
    guard fix.isUsable else { throw DaemonMessageError("TPV: position out of range") }
    let status = try members.optionalInteger("status") ?? FixStatus.gps.rawValue
    fix.status = FixStatus(rawValue: status) ?? .unknown
    return fix
  }

  /// A `VISIT`: the stay's times, centre, accuracy and fix count, and the place it names.
  private static func visit(_ members: Members) throws(DaemonMessageError) -> Stay {
    let coordinate = Coordinate(
      latitude: try members.number("lat"), longitude: try members.number("lon"))
    guard coordinate.isValid else { throw DaemonMessageError("VISIT: position out of range") }
    return Stay(
      arrivalDate: try members.parsed("arrival", Timestamp.parse),
      departureDate: try members.optionalString("departure").map {
        (text) throws(DaemonMessageError) in try members.parsed(text, "departure", Timestamp.parse)
      },
      observedDepartureDate: try members.optionalString("departure_observed").map {
        (text) throws(DaemonMessageError) in
        try members.parsed(text, "departure_observed", Timestamp.parse)
      },
      coordinate: coordinate, horizontalAccuracy: try members.number("accuracy"),
      fixCount: try members.integer("fixes"), placeID: try members.optionalString("place"),
      source: try members.optionalString("source"))
  }

  private static func placeEvent(_ name: String, _ members: Members) throws(DaemonMessageError)
    -> PlaceEvent
  {
    let time = try members.parsed("time", Timestamp.parse)
    let placeID = try members.string("place")
    let placeName = try members.optionalString("name") ?? placeID
    let coordinate = Coordinate(
      latitude: try members.number("lat"), longitude: try members.number("lon"))
    guard let reasonObject = members.json["reason"], case .object = reasonObject else {
      throw DaemonMessageError("\(name): \"reason\" must be an object")
    }
    let reasonMembers = Members(className: name + " reason", json: reasonObject)
    let reason = EventReason(
      rule: try reasonMembers.string("rule"),
      distanceMeters: try reasonMembers.number("distance"),
      horizontalAccuracyMeters: try reasonMembers.optionalNumber("accuracy"),
      enterRadiusMeters: try reasonMembers.number("enter"),
      exitRadiusMeters: try reasonMembers.number("exit"),
      confirmations: try reasonMembers.integer("confirmations"),
      dwellSeconds: try reasonMembers.number("dwell"))
    guard name == "DEPARTURE" else {
      return .arrival(
        PlaceEvent.Arrival(
          time: time, placeID: placeID, placeName: placeName, coordinate: coordinate,
          reason: reason))
    }
    return .departure(
      PlaceEvent.Departure(
        time: time, placeID: placeID, placeName: placeName, coordinate: coordinate,
        arrival: try members.parsed("arrival", Timestamp.parse), reason: reason))
  }
}
