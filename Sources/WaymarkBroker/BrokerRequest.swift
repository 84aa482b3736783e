import FoundationEssentials
import Waymark
import WaymarkCore

/// One line a client sent to `waymarkd`'s socket, parsed.
///
/// The parser is a pure function of the line's bytes, so it can be fuzzed on its own
/// (`Fuzz/BrokerRequestFuzz.swift`): every input gives a request or a ``BrokerRequestError``.
package enum BrokerRequest: Sendable, Hashable {
  /// `{"class":"WATCH","enable":true,…}`: start (or change) the stream of locations.
  case watch(WatchOptions)
  /// `{"class":"WATCH","enable":false}`: stop the stream.
  case unwatch
  /// `{"class":"POLL"}`: one TPV with the latest fix.
  case poll
  /// `{"class":"STATUS"}`: the daemon's state (clients, the latest fix's time and age).
  case status
  /// `{"class":"REQUEST","level":"whenInUse"|"always"}`: ask an agent for a grant.
  case request(GrantLevel)
  /// `{"class":"SESSION","authorization":"always","full_accuracy":true,"purpose":"…"}`
  /// (protocol 1.3): hold a service session (ask for what it needs, hear what is granted);
  /// `"enable":false` ends it.
  case session(SessionOptions?)
  /// `{"class":"AGENT","enable":true|false}`: answer requests (configured agents only).
  /// `"scripted":true` says the answers come from a script, not a person: they never persist
  /// on polkit's word (only from root or group `waymark`).
  case agent(enable: Bool, scripted: Bool)
  /// `{"class":"ANSWER","id":…,"grant":…,"accuracy":…}`: an agent's decision.
  case answer(id: Int, answer: AgentAnswer)
  /// `{"class":"MONITOR","name":…,"op":…}` (protocol 1.3): a change to, or a read of, a monitor
  /// the daemon holds for this app (only with `always` and full accuracy).
  case monitor(name: String, MonitorOperation)

  /// What a `MONITOR` request does.
  package enum MonitorOperation: Sendable, Hashable {
    /// `"op":"add","conditions":[…]`: adds or replaces conditions, creating the monitor.
    case add([HeldMonitor.Condition])
    /// `"op":"remove","ids":[…]`: removes conditions.
    case remove([String])
    /// `"op":"delete"`: deletes the monitor and its queue.
    case delete
    /// `"op":"events","after":n`: acknowledges the events up to `n` and sends those after it,
    /// then the live ones.
    case events(after: Int64)
    /// `"op":"ack","sequence":n`: acknowledges the events up to `n`.
    case acknowledge(through: Int64)
  }

  /// What a `WATCH` asks for: the request's own type, as clients write it.
  package typealias WatchOptions = DaemonRequest.Watch

  /// What a `SESSION` holds.
  package struct SessionOptions: Sendable, Hashable {
    /// The grant the session needs; `nil` for `"none"` (nothing is asked).
    package var level: GrantLevel?
    /// `"full_accuracy"`: whether full accuracy is needed.
    package var fullAccuracy: Bool
    /// `"purpose"`: why, as the program says (untrusted text), at most
    /// ``maximumPurposeLength`` scalars (longer ones are cut and end with `…`).
    package var purpose: String?

    /// The longest purpose kept, in Unicode scalars.
    package static let maximumPurposeLength = 200

    /// Creates options.
    package init(level: GrantLevel?, fullAccuracy: Bool = false, purpose: String? = nil) {
      self.level = level
      self.fullAccuracy = fullAccuracy
      self.purpose = purpose.map { LogText.bounded($0, to: Self.maximumPurposeLength) }
    }
  }

  /// An agent's answer to an `ASK`.
  package enum AgentAnswer: Sendable, Hashable {
    /// For the life of the asking connection only, never recorded.
    case once(AccuracyAuthorization)
    /// Recorded in the daemon's store.
    case grant(GrantLevel, AccuracyAuthorization)
  }

  /// The longest line a client may send, in bytes without the newline.
  package static let maximumLineLength = 4096

  /// Parses one line (without its newline).
  ///
  /// - Returns: the request, or the reason it is not one (sent back as an `ERROR`).
  package static func parse(_ line: some Collection<UInt8>) -> Result<
    BrokerRequest, BrokerRequestError
  > {
    guard line.count <= maximumLineLength else {
      return .failure(BrokerRequestError("line longer than \(maximumLineLength) bytes"))
    }
    var reader = JSONReader(Array(line))
    let value: JSONValue
    do {
      value = try reader.value()
      reader.skipWhitespace()
      guard reader.isAtEnd else {
        return .failure(
          BrokerRequestError("not JSON: text after the object at byte \(reader.offset)"))
      }
    } catch {
      return .failure(BrokerRequestError("not JSON: \(error.reason) at byte \(error.offset)"))
    }
    guard case .object = value else {
      return .failure(BrokerRequestError("expected a JSON object"))
    }
    guard case .string(let name)? = value["class"] else {
      return .failure(BrokerRequestError("missing \"class\""))
    }
    do {
      return .success(try request(name, value))
    } catch {
      return .failure(error)
    }
  }

  private static func request(_ name: String, _ value: JSONValue) throws(BrokerRequestError)
    -> BrokerRequest
  {
    switch name {
    case "WATCH":
      guard try bool(value, "enable") ?? true else { return .unwatch }
      var options = WatchOptions()
      if let accuracy = try string(value, "accuracy") {
        if accuracy == "full" {
          options.reduced = false
        } else if let level = LocationAccuracy(rawValue: accuracy) {
          options.reduced = level == .reduced
        } else {
          throw BrokerRequestError("WATCH: unknown accuracy '\(accuracy)'")
        }
      }
      if let distance = try number(value, "distance") {
        guard distance >= 0 else { throw BrokerRequestError("WATCH: distance must be >= 0") }
        options.distanceMeters = distance > 0 ? distance : nil
      }
      options.events = try bool(value, "events") ?? false
      options.visits = try bool(value, "visits") ?? false
      return .watch(options)
    case "POLL":
      return .poll
    case "STATUS":
      return .status
    case "REQUEST":
      switch try string(value, "level") ?? "whenInUse" {
      case "whenInUse": return .request(.whenInUse)
      case "always": return .request(.always)
      case let other:
        throw BrokerRequestError("REQUEST: level must be whenInUse or always, not '\(other)'")
      }
    case "SESSION":
      guard try bool(value, "enable") ?? true else { return .session(nil) }
      let level: GrantLevel?
      switch try string(value, "authorization") ?? "whenInUse" {
      case "none": level = nil
      case "whenInUse": level = .whenInUse
      case "always": level = .always
      case let other:
        let shown = other.count > 32 ? String(other.prefix(32)) + "…" : other
        throw BrokerRequestError(
          "SESSION: authorization must be none, whenInUse or always, not '\(shown)'")
      }
      return .session(
        SessionOptions(
          level: level, fullAccuracy: try bool(value, "full_accuracy") ?? false,
          purpose: try string(value, "purpose")))
    case "AGENT":
      return .agent(
        enable: try bool(value, "enable") ?? true, scripted: try bool(value, "scripted") ?? false)
    case "ANSWER":
      guard let id = try number(value, "id"), id >= 0, id < 1e15, id == id.rounded() else {
        throw BrokerRequestError("ANSWER: missing or invalid \"id\"")
      }
      var accuracy = AccuracyAuthorization.full
      if let text = try string(value, "accuracy") {
        guard let parsed = AccuracyAuthorization(rawValue: text) else {
          throw BrokerRequestError("ANSWER: accuracy must be full or reduced")
        }
        accuracy = parsed
      }
      let answer: AgentAnswer
      switch try string(value, "grant") {
      case "once": answer = .once(accuracy)
      case "whenInUse": answer = .grant(.whenInUse, accuracy)
      case "always": answer = .grant(.always, accuracy)
      case "never": answer = .grant(.never, .full)
      default:
        throw BrokerRequestError("ANSWER: grant must be once, whenInUse, always or never")
      }
      return .answer(id: Int(id), answer: answer)
    case "MONITOR":
      return try monitor(value)
    default:
      let shown = name.count > 32 ? String(name.prefix(32)) + "…" : name
      throw BrokerRequestError("unknown class '\(shown)'")
    }
  }

  private static func monitor(_ value: JSONValue) throws(BrokerRequestError) -> BrokerRequest {
    guard let name = try string(value, "name") else {
      throw BrokerRequestError("MONITOR: missing \"name\"")
    }
    if let problem = HeldMonitor.problem(with: name) {
      throw BrokerRequestError("MONITOR: the name \(problem)")
    }
    let operation: MonitorOperation
    switch try string(value, "op") {
    case "add":
      guard case .array(let items)? = value["conditions"], !items.isEmpty else {
        throw BrokerRequestError("MONITOR: add needs a non-empty \"conditions\" array")
      }
      guard items.count <= HeldMonitor.maximumConditions else {
        throw BrokerRequestError(
          "MONITOR: more than \(HeldMonitor.maximumConditions) conditions")
      }
      var conditions: [HeldMonitor.Condition] = []
      for item in items { conditions.append(try condition(item)) }
      operation = .add(conditions)
    case "remove":
      guard case .array(let items)? = value["ids"], !items.isEmpty,
        items.count <= HeldMonitor.maximumConditions
      else {
        throw BrokerRequestError(
          "MONITOR: remove needs an \"ids\" array of 1 to \(HeldMonitor.maximumConditions) "
            + "strings")
      }
      var identifiers: [String] = []
      for item in items {
        guard case .string(let identifier) = item else {
          throw BrokerRequestError("MONITOR: \"ids\" must hold strings")
        }
        identifiers.append(identifier)
      }
      operation = .remove(identifiers)
    case "delete":
      operation = .delete
    case "events":
      operation = .events(after: try sequence(value, "after") ?? 0)
    case "ack":
      guard let through = try sequence(value, "sequence") else {
        throw BrokerRequestError("MONITOR: ack needs \"sequence\"")
      }
      operation = .acknowledge(through: through)
    default:
      throw BrokerRequestError("MONITOR: op must be add, remove, delete, events or ack")
    }
    return .monitor(name: name, operation)
  }

  /// One object of `conditions`.
  private static func condition(_ value: JSONValue) throws(BrokerRequestError)
    -> HeldMonitor.Condition
  {
    guard case .object = value else {
      throw BrokerRequestError("MONITOR: a condition must be an object")
    }
    guard let identifier = try string(value, "id") else {
      throw BrokerRequestError("MONITOR: a condition needs \"id\"")
    }
    if let problem = HeldMonitor.problem(with: identifier) {
      throw BrokerRequestError("MONITOR: a condition's id \(problem)")
    }
    guard let latitude = try number(value, "lat"), (-90...90).contains(latitude),
      let longitude = try number(value, "lon"), (-180...180).contains(longitude)
    else {
      throw BrokerRequestError("MONITOR: a condition needs \"lat\" and \"lon\" in degrees")
    }
    guard let radius = try number(value, "radius"), Place.radiusProblem(radius) == nil else {
      throw BrokerRequestError("MONITOR: \"radius\" must be a number of metres in (0, 100000]")
    }
    let exitRadius = try number(value, "exitRadius")
    if let exitRadius, !(exitRadius >= radius && exitRadius <= 200_000) {
      throw BrokerRequestError("MONITOR: \"exitRadius\" must be at least \"radius\"")
    }
    let confirmations = try number(value, "confirmations")
    if let confirmations,
      !(confirmations >= 1 && confirmations <= 100 && confirmations == confirmations.rounded())
    {
      throw BrokerRequestError("MONITOR: \"confirmations\" must be an integer in [1, 100]")
    }
    let dwell = try number(value, "dwell")
    if let dwell, !(dwell >= 0 && dwell <= 86_400) {
      throw BrokerRequestError("MONITOR: \"dwell\" must be seconds in [0, 86400]")
    }
    let group = try string(value, "group")
    if let group, let problem = HeldMonitor.problem(with: group) {
      throw BrokerRequestError("MONITOR: a condition's group \(problem)")
    }
    var overlap: PlaceOverlap?
    if let text = try string(value, "overlap") {
      guard let parsed = PlaceOverlap(rawValue: text) else {
        throw BrokerRequestError("MONITOR: \"overlap\" must be all or nearest")
      }
      overlap = parsed
    }
    var assumed = Monitor.Event.State.unknown
    if let text = try string(value, "assume") {
      guard let parsed = Monitor.Event.State(rawValue: text) else {
        throw BrokerRequestError("MONITOR: \"assume\" must be unknown, satisfied or unsatisfied")
      }
      assumed = parsed
    }
    return HeldMonitor.Condition(
      identifier: identifier,
      circle: Monitor.CircularGeographicCondition(
        center: Coordinate(latitude: latitude, longitude: longitude), radius: radius,
        exitRadius: exitRadius, confirmations: confirmations.map { Int($0) },
        dwellSeconds: dwell, group: group, overlap: overlap),
      assumed: assumed)
  }

  /// A sequence number: an integer in [0, 2^53).
  private static func sequence(_ value: JSONValue, _ key: String) throws(BrokerRequestError)
    -> Int64?
  {
    guard let number = try number(value, key) else { return nil }
    guard number >= 0, number < 9_007_199_254_740_992, number == number.rounded() else {
      throw BrokerRequestError("MONITOR: \"\(key)\" must be an integer >= 0")
    }
    return Int64(number)
  }

  // The members are read by the protocol's one member reader (`Members`, which the client's
  // decoder uses too); its error names the member and what it must be.

  private static func bool(_ value: JSONValue, _ key: String) throws(BrokerRequestError) -> Bool? {
    do { return try Members(className: nil, json: value).optionalBool(key) } catch {
      throw BrokerRequestError(error.message)
    }
  }

  private static func string(_ value: JSONValue, _ key: String) throws(BrokerRequestError)
    -> String?
  {
    do { return try Members(className: nil, json: value).optionalString(key) } catch {
      throw BrokerRequestError(error.message)
    }
  }

  private static func number(_ value: JSONValue, _ key: String) throws(BrokerRequestError)
    -> Double?
  {
    do { return try Members(className: nil, json: value).optionalNumber(key) } catch {
      throw BrokerRequestError(error.message)
    }
  }
}

/// Why a client's line is not a request; the daemon answers it with an `ERROR` object.
package struct BrokerRequestError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The message sent back.
  package var message: String

  /// Creates an error with `message`.
  package init(_ message: String) { self.message = message }

  package var description: String { message }
}
