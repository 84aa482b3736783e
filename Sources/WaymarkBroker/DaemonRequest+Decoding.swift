import FoundationEssentials
import Waymark
import WaymarkCore

// The daemon's reading of its clients' lines: every line decodes into the one typed request
// value (`DaemonRequest`, which clients write with `line`), or into the reason it is not one,
// sent back as an `ERROR`. It also checks what a client may not be trusted with: the line's
// length, names, counts and ranges (the limits of `HeldMonitor`). A pure function of the
// line's bytes, so it can be fuzzed on its own (`Fuzz/BrokerRequestFuzz.swift`).

extension DaemonRequest {
  /// Decodes one line a client sent (without its newline).
  ///
  /// - Returns: the request, or the reason it is not one (sent back as an `ERROR`).
  package static func decode(_ line: some Collection<UInt8>) -> Result<
    DaemonRequest, DaemonRequestError
  > {
    guard line.count <= maximumLineLength else {
      return .failure(DaemonRequestError("line longer than \(maximumLineLength) bytes"))
    }
    var reader = JSONReader(Array(line))
    let value: JSONValue
    do {
      value = try reader.value()
      reader.skipWhitespace()
      guard reader.isAtEnd else {
        return .failure(
          DaemonRequestError("not JSON: text after the object at byte \(reader.offset)"))
      }
    } catch {
      return .failure(DaemonRequestError("not JSON: \(error.reason) at byte \(error.offset)"))
    }
    guard case .object = value else {
      return .failure(DaemonRequestError("expected a JSON object"))
    }
    guard case .string(let name)? = value["class"] else {
      return .failure(DaemonRequestError("missing \"class\""))
    }
    do {
      return .success(try request(name, value))
    } catch {
      return .failure(error)
    }
  }

  private static func request(_ name: String, _ value: JSONValue) throws(DaemonRequestError)
    -> DaemonRequest
  {
    switch name {
    case "WATCH":
      guard try bool(value, "enable") ?? true else { return .unwatch }
      var options = Watch()
      if let accuracy = try string(value, "accuracy") {
        if accuracy == "full" {
          options.reduced = false
        } else if let level = LocationAccuracy(rawValue: accuracy) {
          options.reduced = level == .reduced
        } else {
          throw DaemonRequestError("WATCH: unknown accuracy '\(accuracy)'")
        }
      }
      if let distance = try number(value, "distance") {
        guard distance >= 0 else { throw DaemonRequestError("WATCH: distance must be >= 0") }
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
      case "whenInUse": return .request(level: .whenInUse)
      case "always": return .request(level: .always)
      case let other:
        throw DaemonRequestError("REQUEST: level must be whenInUse or always, not '\(other)'")
      }
    case "SESSION":
      guard try bool(value, "enable") ?? true else { return .endSession }
      let level: GrantLevel?
      switch try string(value, "authorization") ?? "whenInUse" {
      case "none": level = nil
      case "whenInUse": level = .whenInUse
      case "always": level = .always
      case let other:
        let shown = other.count > 32 ? String(other.prefix(32)) + "…" : other
        throw DaemonRequestError(
          "SESSION: authorization must be none, whenInUse or always, not '\(shown)'")
      }
      return .session(
        SessionOptions(
          level: level, fullAccuracy: try bool(value, "full_accuracy") ?? false,
          purpose: try string(value, "purpose").map {
            LogText.bounded($0, to: SessionOptions.maximumPurposeLength)
          }))
    case "AGENT":
      return .agent(
        enable: try bool(value, "enable") ?? true, scripted: try bool(value, "scripted") ?? false)
    case "ANSWER":
      guard let id = try number(value, "id"), id >= 0, id < 1e15, id == id.rounded() else {
        throw DaemonRequestError("ANSWER: missing or invalid \"id\"")
      }
      var accuracy = AccuracyAuthorization.full
      if let text = try string(value, "accuracy") {
        guard let parsed = AccuracyAuthorization(rawValue: text) else {
          throw DaemonRequestError("ANSWER: accuracy must be full or reduced")
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
        throw DaemonRequestError("ANSWER: grant must be once, whenInUse, always or never")
      }
      return .answer(id: Int(id), answer: answer)
    case "MONITOR":
      return try monitor(value)
    default:
      let shown = name.count > 32 ? String(name.prefix(32)) + "…" : name
      throw DaemonRequestError("unknown class '\(shown)'")
    }
  }

  private static func monitor(_ value: JSONValue) throws(DaemonRequestError) -> DaemonRequest {
    guard let name = try string(value, "name") else {
      throw DaemonRequestError("MONITOR: missing \"name\"")
    }
    if let problem = HeldMonitor.problem(with: name) {
      throw DaemonRequestError("MONITOR: the name \(problem)")
    }
    let operation: MonitorOperation
    switch try string(value, "op") {
    case "add":
      guard case .array(let items)? = value["conditions"], !items.isEmpty else {
        throw DaemonRequestError("MONITOR: add needs a non-empty \"conditions\" array")
      }
      guard items.count <= HeldMonitor.maximumConditions else {
        throw DaemonRequestError(
          "MONITOR: more than \(HeldMonitor.maximumConditions) conditions")
      }
      var conditions: [MonitorCondition] = []
      for item in items { conditions.append(try condition(item)) }
      operation = .add(conditions)
    case "remove":
      guard case .array(let items)? = value["ids"], !items.isEmpty,
        items.count <= HeldMonitor.maximumConditions
      else {
        throw DaemonRequestError(
          "MONITOR: remove needs an \"ids\" array of 1 to \(HeldMonitor.maximumConditions) "
            + "strings")
      }
      var identifiers: [String] = []
      for item in items {
        guard case .string(let identifier) = item else {
          throw DaemonRequestError("MONITOR: \"ids\" must hold strings")
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
        throw DaemonRequestError("MONITOR: ack needs \"sequence\"")
      }
      operation = .acknowledge(through: through)
    default:
      throw DaemonRequestError("MONITOR: op must be add, remove, delete, events or ack")
    }
    return .monitor(name: name, operation)
  }

  /// One object of `conditions`.
  private static func condition(_ value: JSONValue) throws(DaemonRequestError)
    -> MonitorCondition
  {
    guard case .object = value else {
      throw DaemonRequestError("MONITOR: a condition must be an object")
    }
    guard let identifier = try string(value, "id") else {
      throw DaemonRequestError("MONITOR: a condition needs \"id\"")
    }
    if let problem = HeldMonitor.problem(with: identifier) {
      throw DaemonRequestError("MONITOR: a condition's id \(problem)")
    }
    guard let latitude = try number(value, "lat"), (-90...90).contains(latitude),
      let longitude = try number(value, "lon"), (-180...180).contains(longitude)
    else {
      throw DaemonRequestError("MONITOR: a condition needs \"lat\" and \"lon\" in degrees")
    }
    guard let radius = try number(value, "radius"), Place.radiusProblem(radius) == nil else {
      throw DaemonRequestError("MONITOR: \"radius\" must be a number of metres in (0, 100000]")
    }
    let exitRadius = try number(value, "exitRadius")
    if let exitRadius, !(exitRadius >= radius && exitRadius <= 200_000) {
      throw DaemonRequestError("MONITOR: \"exitRadius\" must be at least \"radius\"")
    }
    let confirmations = try number(value, "confirmations")
    if let confirmations,
      !(confirmations >= 1 && confirmations <= 100 && confirmations == confirmations.rounded())
    {
      throw DaemonRequestError("MONITOR: \"confirmations\" must be an integer in [1, 100]")
    }
    let dwell = try number(value, "dwell")
    if let dwell, !(dwell >= 0 && dwell <= 86_400) {
      throw DaemonRequestError("MONITOR: \"dwell\" must be seconds in [0, 86400]")
    }
    let group = try string(value, "group")
    if let group, let problem = HeldMonitor.problem(with: group) {
      throw DaemonRequestError("MONITOR: a condition's group \(problem)")
    }
    let overlap = try string(value, "overlap")
    if let overlap, PlaceOverlap(rawValue: overlap) == nil {
      throw DaemonRequestError("MONITOR: \"overlap\" must be all or nearest")
    }
    let assumed = try string(value, "assume") ?? Monitor.Event.State.unknown.rawValue
    guard Monitor.Event.State(rawValue: assumed) != nil else {
      throw DaemonRequestError("MONITOR: \"assume\" must be unknown, satisfied or unsatisfied")
    }
    return MonitorCondition(
      identifier: identifier, latitude: latitude, longitude: longitude, radiusMeters: radius,
      exitRadiusMeters: exitRadius, confirmations: confirmations.map { Int($0) },
      dwellSeconds: dwell, group: group, overlap: overlap, assume: assumed)
  }

  /// A sequence number: an integer in [0, 2^53).
  private static func sequence(_ value: JSONValue, _ key: String) throws(DaemonRequestError)
    -> Int?
  {
    guard let number = try number(value, key) else { return nil }
    guard number >= 0, number < 9_007_199_254_740_992, number == number.rounded() else {
      throw DaemonRequestError("MONITOR: \"\(key)\" must be an integer >= 0")
    }
    return Int(number)
  }

  // The members are read by the protocol's one member reader (`Members`, which the client's
  // decoder uses too); its error names the member and what it must be.

  private static func bool(_ value: JSONValue, _ key: String) throws(DaemonRequestError) -> Bool? {
    do { return try Members(className: nil, json: value).optionalBool(key) } catch {
      throw DaemonRequestError(error.message)
    }
  }

  private static func string(_ value: JSONValue, _ key: String) throws(DaemonRequestError)
    -> String?
  {
    do { return try Members(className: nil, json: value).optionalString(key) } catch {
      throw DaemonRequestError(error.message)
    }
  }

  private static func number(_ value: JSONValue, _ key: String) throws(DaemonRequestError)
    -> Double?
  {
    do { return try Members(className: nil, json: value).optionalNumber(key) } catch {
      throw DaemonRequestError(error.message)
    }
  }
}

extension HeldMonitor.Condition {
  /// The condition a decoded `MONITOR` `add` names (its names and ranges already checked by
  /// `DaemonRequest.decode(_:)`).
  package init(_ condition: DaemonRequest.MonitorCondition) {
    self.init(
      identifier: condition.identifier,
      circle: Monitor.CircularGeographicCondition(
        center: Coordinate(latitude: condition.latitude, longitude: condition.longitude),
        radius: condition.radiusMeters, exitRadius: condition.exitRadiusMeters,
        confirmations: condition.confirmations, dwellSeconds: condition.dwellSeconds,
        group: condition.group, overlap: condition.overlap.flatMap(PlaceOverlap.init(rawValue:))),
      assumed: Monitor.Event.State(rawValue: condition.assume) ?? .unknown)
  }
}
