import FoundationEssentials
import Waymark
import WaymarkCore

/// One line a client sent to `waymarkd`'s socket, parsed.
///
/// The parser is a pure function of the line's bytes, so it can be fuzzed on its own
/// (`Fuzz/BrokerRequestFuzz.swift`): every input gives a request or a ``BrokerRequestError``.
public enum BrokerRequest: Sendable, Hashable {
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

  /// What a `WATCH` asks for.
  public struct WatchOptions: Sendable, Hashable {
    /// `"accuracy":"reduced"` (or a `LocationAccuracy` name): coarse positions only.
    public var reduced: Bool
    /// `"distance"`: metres from the last delivered location (CoreLocation's distance filter).
    public var distanceMeters: Double?
    /// `"events"`: ARRIVAL and DEPARTURE objects too (needs `always` with full accuracy).
    public var events: Bool
    /// `"visits"` (protocol 1.2): VISIT objects too, when a stay opens or closes (needs `always`
    /// with full accuracy).
    public var visits: Bool

    /// Creates options; the defaults are full accuracy, no filter, no events, no visits.
    public init(
      reduced: Bool = false, distanceMeters: Double? = nil, events: Bool = false,
      visits: Bool = false
    ) {
      self.reduced = reduced
      self.distanceMeters = distanceMeters
      self.events = events
      self.visits = visits
    }
  }

  /// What a `SESSION` holds.
  public struct SessionOptions: Sendable, Hashable {
    /// The grant the session needs; `nil` for `"none"` (nothing is asked).
    public var level: GrantLevel?
    /// `"full_accuracy"`: whether full accuracy is needed.
    public var fullAccuracy: Bool
    /// `"purpose"`: why, as the program says (untrusted text), at most
    /// ``maximumPurposeLength`` scalars (longer ones are cut and end with `…`).
    public var purpose: String?

    /// The longest purpose kept, in Unicode scalars.
    public static let maximumPurposeLength = 200

    /// Creates options.
    public init(level: GrantLevel?, fullAccuracy: Bool = false, purpose: String? = nil) {
      self.level = level
      self.fullAccuracy = fullAccuracy
      self.purpose = purpose.map { LogText.bounded($0, to: Self.maximumPurposeLength) }
    }
  }

  /// An agent's answer to an `ASK`.
  public enum AgentAnswer: Sendable, Hashable {
    /// For the life of the asking connection only, never recorded.
    case once(AccuracyAuthorization)
    /// Recorded in the daemon's store.
    case grant(GrantLevel, AccuracyAuthorization)
  }

  /// The longest line a client may send, in bytes without the newline.
  public static let maximumLineLength = 4096

  /// Parses one line (without its newline).
  ///
  /// - Returns: the request, or the reason it is not one (sent back as an `ERROR`).
  public static func parse(_ line: some Collection<UInt8>) -> Result<
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
    default:
      let shown = name.count > 32 ? String(name.prefix(32)) + "…" : name
      throw BrokerRequestError("unknown class '\(shown)'")
    }
  }

  private static func bool(_ value: JSONValue, _ key: String) throws(BrokerRequestError) -> Bool? {
    switch value[key] {
    case nil, .null?: return nil
    case .bool(let flag)?: return flag
    default: throw BrokerRequestError("\"\(key)\" must be true or false")
    }
  }

  private static func string(_ value: JSONValue, _ key: String) throws(BrokerRequestError)
    -> String?
  {
    switch value[key] {
    case nil, .null?: return nil
    case .string(let text)?: return text
    default: throw BrokerRequestError("\"\(key)\" must be a string")
    }
  }

  private static func number(_ value: JSONValue, _ key: String) throws(BrokerRequestError)
    -> Double?
  {
    switch value[key] {
    case nil, .null?: return nil
    case .number(let number)? where number.isFinite: return number
    default: throw BrokerRequestError("\"\(key)\" must be a number")
    }
  }
}

/// Why a client's line is not a request; the daemon answers it with an `ERROR` object.
public struct BrokerRequestError: Error, Sendable, Hashable, CustomStringConvertible {
  /// The message sent back.
  public var message: String

  /// Creates an error with `message`.
  public init(_ message: String) { self.message = message }

  public var description: String { message }
}
