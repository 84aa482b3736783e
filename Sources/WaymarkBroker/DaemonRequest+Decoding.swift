import FoundationEssentials
import Waymark
import WaymarkCore

// The daemon's reading of its clients' lines: every line decodes into the one typed request
// value (`DaemonRequest`, which clients write with `line`), or into the reason it is not one
// (the protocol's one error, `DaemonMessageError`), sent back as an `ERROR`. The members are
// read by the protocol's member reader (`Members`, which clients' decoder uses too). It also
// checks what a client may not be trusted with: the line's length, names, counts and ranges
// (the limits of `HeldMonitor`). A pure function of the line's bytes, so it can be fuzzed on
// its own (`Fuzz/BrokerRequestFuzz.swift`).

extension DaemonRequest {
  /// Decodes one line a client sent (without its newline).
  ///
  /// - Returns: the request, or the reason it is not one (sent back as an `ERROR`).
  package static func decode(_ line: some Collection<UInt8>) -> Result<
    DaemonRequest, DaemonMessageError
  > {
    guard line.count <= maximumLineLength else {
      return .failure(DaemonMessageError("line longer than \(maximumLineLength) bytes"))
    }
    var reader = JSONReader(Array(line))
    let value: JSONValue
    do {
      value = try reader.value()
      reader.skipWhitespace()
      guard reader.isAtEnd else {
        return .failure(
          DaemonMessageError("not JSON: text after the object at byte \(reader.offset)"))
      }
    } catch {
      return .failure(DaemonMessageError("not JSON: \(error.reason) at byte \(error.offset)"))
    }
    guard case .object = value else {
      return .failure(DaemonMessageError("expected a JSON object"))
    }
    guard case .string(let name)? = value["class"] else {
      return .failure(DaemonMessageError("missing \"class\""))
    }
    do {
      return .success(try request(name, Members(className: nil, json: value)))
    } catch {
      return .failure(error)
    }
  }

  private static func request(_ name: String, _ members: Members) throws(DaemonMessageError)
    -> DaemonRequest
  {
    switch name {
    case "WATCH":
      guard try members.optionalBool("enable") ?? true else { return .unwatch }
      var options = Watch()
      if let accuracy = try members.optionalString("accuracy") {
        if accuracy == "full" {
          options.reduced = false
        } else if let level = LocationAccuracy(rawValue: accuracy) {
          options.reduced = level == .reduced
        } else {
          throw DaemonMessageError("WATCH: unknown accuracy '\(accuracy)'")
        }
      }
      if let distance = try members.optionalNumber("distance") {
        guard distance >= 0 else { throw DaemonMessageError("WATCH: distance must be >= 0") }
        options.distanceMeters = distance > 0 ? distance : nil
      }
      options.events = try members.optionalBool("events") ?? false
      options.visits = try members.optionalBool("visits") ?? false
      return .watch(options)
    case "POLL":
      return .poll
    case "STATUS":
      return .status
    case "REQUEST":
      switch try members.optionalString("level") ?? "whenInUse" {
      case "whenInUse": return .request(level: .whenInUse)
      case "always": return .request(level: .always)
      case let other:
        throw DaemonMessageError("REQUEST: level must be whenInUse or always, not '\(other)'")
      }
    case "SESSION":
      guard try members.optionalBool("enable") ?? true else { return .endSession }
      let level: GrantLevel?
      switch try members.optionalString("authorization") ?? "whenInUse" {
      case "none": level = nil
      case "whenInUse": level = .whenInUse
      case "always": level = .always
      case let other:
        let shown = other.count > 32 ? String(other.prefix(32)) + "…" : other
        throw DaemonMessageError(
          "SESSION: authorization must be none, whenInUse or always, not '\(shown)'")
      }
      return .session(
        SessionOptions(
          level: level, fullAccuracy: try members.optionalBool("full_accuracy") ?? false,
          purpose: try members.optionalString("purpose").map {
            LogText.bounded($0, to: SessionOptions.maximumPurposeLength)
          }))
    case "AGENT":
      return .agent(
        enable: try members.optionalBool("enable") ?? true,
        scripted: try members.optionalBool("scripted") ?? false)
    case "ANSWER":
      guard let id = try members.optionalNumber("id"), id >= 0, id < 1e15, id == id.rounded() else {
        throw DaemonMessageError("ANSWER: missing or invalid \"id\"")
      }
      var accuracy = AccuracyAuthorization.full
      if let text = try members.optionalString("accuracy") {
        guard let parsed = AccuracyAuthorization(rawValue: text) else {
          throw DaemonMessageError("ANSWER: accuracy must be full or reduced")
        }
        accuracy = parsed
      }
      let answer: AgentAnswer
      switch try members.optionalString("grant") {
      case "once": answer = .once(accuracy)
      case "whenInUse": answer = .grant(.whenInUse, accuracy)
      case "always": answer = .grant(.always, accuracy)
      case "never": answer = .grant(.never, .full)
      default:
        throw DaemonMessageError("ANSWER: grant must be once, whenInUse, always or never")
      }
      return .answer(id: Int(id), answer: answer)
    case "MONITOR":
      return try monitor(members)
    default:
      let shown = name.count > 32 ? String(name.prefix(32)) + "…" : name
      throw DaemonMessageError("unknown class '\(shown)'")
    }
  }

  private static func monitor(_ members: Members) throws(DaemonMessageError) -> DaemonRequest {
    guard let name = try members.optionalString("name") else {
      throw DaemonMessageError("MONITOR: missing \"name\"")
    }
    if let problem = HeldMonitor.problem(with: name) {
      throw DaemonMessageError("MONITOR: the name \(problem)")
    }
    let operation: MonitorOperation
    switch try members.optionalString("op") {
    case "add":
      guard case .array(let items)? = members.json["conditions"], !items.isEmpty else {
        throw DaemonMessageError("MONITOR: add needs a non-empty \"conditions\" array")
      }
      guard items.count <= HeldMonitor.maximumConditions else {
        throw DaemonMessageError(
          "MONITOR: more than \(HeldMonitor.maximumConditions) conditions")
      }
      var conditions: [MonitorCondition] = []
      for item in items { conditions.append(try condition(item)) }
      operation = .add(conditions)
    case "remove":
      guard case .array(let items)? = members.json["ids"], !items.isEmpty,
        items.count <= HeldMonitor.maximumConditions
      else {
        throw DaemonMessageError(
          "MONITOR: remove needs an \"ids\" array of 1 to \(HeldMonitor.maximumConditions) "
            + "strings")
      }
      var identifiers: [String] = []
      for item in items {
        guard case .string(let identifier) = item else {
          throw DaemonMessageError("MONITOR: \"ids\" must hold strings")
        }
        identifiers.append(identifier)
      }
      operation = .remove(identifiers)
    case "delete":
      operation = .delete
    case "events":
      operation = .events(after: try sequence(members, "after") ?? 0)
    case "ack":
      guard let through = try sequence(members, "sequence") else {
        throw DaemonMessageError("MONITOR: ack needs \"sequence\"")
      }
      operation = .acknowledge(through: through)
    default:
      throw DaemonMessageError("MONITOR: op must be add, remove, delete, events or ack")
    }
    return .monitor(name: name, operation)
  }

  /// One object of `conditions`.
  private static func condition(_ value: JSONValue) throws(DaemonMessageError)
    -> MonitorCondition
  {
    guard case .object = value else {
      throw DaemonMessageError("MONITOR: a condition must be an object")
    }
    let members = Members(className: nil, json: value)
    guard let identifier = try members.optionalString("id") else {
      throw DaemonMessageError("MONITOR: a condition needs \"id\"")
    }
    if let problem = HeldMonitor.problem(with: identifier) {
      throw DaemonMessageError("MONITOR: a condition's id \(problem)")
    }
    guard let latitude = try members.optionalNumber("lat"), (-90...90).contains(latitude),
      let longitude = try members.optionalNumber("lon"), (-180...180).contains(longitude)
    else {
      throw DaemonMessageError("MONITOR: a condition needs \"lat\" and \"lon\" in degrees")
    }
    guard let radius = try members.optionalNumber("radius"), Place.radiusProblem(radius) == nil
    else {
      throw DaemonMessageError("MONITOR: \"radius\" must be a number of metres in (0, 100000]")
    }
    let exitRadius = try members.optionalNumber("exitRadius")
    if let exitRadius, !(exitRadius >= radius && exitRadius <= 200_000) {
      throw DaemonMessageError("MONITOR: \"exitRadius\" must be at least \"radius\"")
    }
    let confirmations = try members.optionalNumber("confirmations")
    if let confirmations,
      !(confirmations >= 1 && confirmations <= 100 && confirmations == confirmations.rounded())
    {
      throw DaemonMessageError("MONITOR: \"confirmations\" must be an integer in [1, 100]")
    }
    let dwell = try members.optionalNumber("dwell")
    if let dwell, !(dwell >= 0 && dwell <= 86_400) {
      throw DaemonMessageError("MONITOR: \"dwell\" must be seconds in [0, 86400]")
    }
    let group = try members.optionalString("group")
    if let group, let problem = HeldMonitor.problem(with: group) {
      throw DaemonMessageError("MONITOR: a condition's group \(problem)")
    }
    let overlap = try members.optionalString("overlap")
    if let overlap, PlaceOverlap(rawValue: overlap) == nil {
      throw DaemonMessageError("MONITOR: \"overlap\" must be all or nearest")
    }
    let assumed = try members.optionalString("assume") ?? Monitor.Event.State.unknown.rawValue
    guard Monitor.Event.State(rawValue: assumed) != nil else {
      throw DaemonMessageError("MONITOR: \"assume\" must be unknown, satisfied or unsatisfied")
    }
    return MonitorCondition(
      identifier: identifier, latitude: latitude, longitude: longitude, radiusMeters: radius,
      exitRadiusMeters: exitRadius, confirmations: confirmations.map { Int($0) },
      dwellSeconds: dwell, group: group, overlap: overlap, assume: assumed)
  }

  /// A sequence number: an integer in [0, 2^53).
  private static func sequence(_ members: Members, _ key: String) throws(DaemonMessageError)
    -> Int?
  {
    guard let number = try members.optionalNumber(key) else { return nil }
    guard number >= 0, number < 9_007_199_254_740_992, number == number.rounded() else {
      throw DaemonMessageError("MONITOR: \"\(key)\" must be an integer >= 0")
    }
    return Int(number)
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
