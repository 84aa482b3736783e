import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkStore

extension VisitsCommand {
  /// `waymark visits record`: records ARRIVAL/DEPARTURE NDJSON (and counts TPV fixes).
  static func record(file: String, store: String, source: String?) throws -> ExitCode {
    let descriptor: Int32
    if file == "-" {
      descriptor = 0
    } else {
      descriptor = Glibc.open(file, O_RDONLY | O_CLOEXEC)
      guard descriptor >= 0 else { throw CommandError("cannot read \(file)", code: .noInput) }
    }
    defer { if descriptor != 0 { close(descriptor) } }
    let name = file == "-" ? "<stdin>" : file
    let database = try StorePath.open(store, create: true, personal: true)
    let recorder = try VisitRecorder(database: database, source: source ?? name)
    var events = 0
    var recorded = 0
    var lineNumber = 0
    try LineReader(descriptor: descriptor, name: name).forEachLine { line in
      lineNumber += 1
      guard !line.allSatisfy({ $0 == 0x20 || $0 == 0x09 || $0 == 0x0D }) else { return }
      let item: RecordedItem
      do throws(LineError) {
        item = try parse(line)
      } catch {
        throw CommandError("\(name):\(lineNumber): \(error.text)", code: .dataError)
      }
      switch item {
      case .ignored: break
      case .fix(let fix): recorder.observe(fix)
      case .event(let event, let reasonJSON):
        events += 1
        do {
          if try recorder.record(event, reasonJSON: reasonJSON) { recorded += 1 }
        } catch let error as StoreError where error.kind == .notFound {
          throw CommandError("\(name):\(lineNumber): \(error.message)", code: .dataError)
        }
      }
    }
    try recorder.flush()
    OutputSink.standardError.line(
      "Recorded \(events) events from \(name) (\(recorded) new, \(events - recorded) already "
        + "recorded) into \(store).")
    return .ok
  }

  enum RecordedItem {
    case ignored
    case fix(Fix)
    case event(PlaceEvent, reasonJSON: String)
  }

  struct LineError: Error {
    var text: String
    init(_ text: String) { self.text = text }
  }

  /// Parses one NDJSON line of `replay` output.
  static func parse(_ line: [UInt8]) throws(LineError) -> RecordedItem {
    var reader = JSONReader(line)
    let parsed = try? reader.value()
    reader.skipWhitespace()
    guard let object = parsed, reader.isAtEnd, case .object = object else {
      throw LineError("not a JSON object")
    }
    guard case .string(let className)? = object["class"] else {
      throw LineError("missing \"class\"")
    }
    func time(_ key: String) throws(LineError) -> Date {
      guard case .string(let text)? = object[key], let date = Timestamp.parse(text) else {
        throw LineError("missing or bad \"\(key)\" time")
      }
      return date
    }
    func number(_ key: String, in dictionary: JSONValue? = nil) -> Double? {
      switch (dictionary ?? object)[key] {
      case .number(let value)?: value.isFinite ? value : nil
      case .bool(let value)?: value ? 1 : 0
      default: nil
      }
    }
    func string(_ key: String, in dictionary: JSONValue? = nil) -> String? {
      guard case .string(let text)? = (dictionary ?? object)[key] else { return nil }
      return text
    }
    switch className {
    case "TPV":
      guard let latitude = number("lat"), let longitude = number("lon") else { return .ignored }
      let mode = FixMode(rawValue: Int(number("mode") ?? 0)) ?? .unknown
      return .fix(
        Fix(
          time: try time("time"), mode: mode,
          coordinate: Coordinate(latitude: latitude, longitude: longitude),
          horizontalError: number("eph")))
    case "ARRIVAL", "DEPARTURE":
      guard let placeID = string("place"), !placeID.isEmpty else {
        throw LineError("missing \"place\"")
      }
      let eventTime = try time("time")
      let coordinate = Coordinate(
        latitude: number("lat") ?? .nan, longitude: number("lon") ?? .nan)
      var reasonObject = JSONValue.object([])
      if case .object? = object["reason"] { reasonObject = object["reason"]! }
      let reasonJSON = reasonObject.sortedKeysText
      let reason = EventReason(
        rule: string("rule", in: reasonObject) ?? "",
        distanceMeters: number("distance", in: reasonObject) ?? .nan,
        horizontalAccuracyMeters: number("accuracy", in: reasonObject),
        enterRadiusMeters: number("enter", in: reasonObject) ?? .nan,
        exitRadiusMeters: number("exit", in: reasonObject) ?? .nan,
        confirmations: Int(number("confirmations", in: reasonObject) ?? 0),
        dwellSeconds: number("dwell", in: reasonObject) ?? .nan)
      let name = string("name") ?? placeID
      if className == "ARRIVAL" {
        return .event(
          .arrival(
            PlaceEvent.Arrival(
              time: eventTime, placeID: placeID, placeName: name, coordinate: coordinate,
              reason: reason)), reasonJSON: reasonJSON)
      }
      let arrival = try time("arrival")
      guard arrival <= eventTime else { throw LineError("\"arrival\" is after \"time\"") }
      return .event(
        .departure(
          PlaceEvent.Departure(
            time: eventTime, placeID: placeID, placeName: name, coordinate: coordinate,
            arrival: arrival, reason: reason)), reasonJSON: reasonJSON)
    default:
      return .ignored
    }
  }
}

/// Reads a file descriptor line by line in large chunks.
struct LineReader {
  var descriptor: Int32
  var name: String

  /// Calls `body` with each line, without its newline.
  func forEachLine(_ body: ([UInt8]) throws -> Void) throws {
    var pending: [UInt8] = []
    var chunk = [UInt8](repeating: 0, count: 1 << 16)
    while true {
      let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
      if count < 0 {
        if errno == EINTR { continue }
        throw CommandError("error reading \(name)", code: .ioError)
      }
      if count == 0 { break }
      var start = 0
      for index in 0..<count where chunk[index] == 0x0A {
        pending.append(contentsOf: chunk[start..<index])
        try body(pending)
        pending.removeAll(keepingCapacity: true)
        start = index + 1
      }
      pending.append(contentsOf: chunk[start..<count])
    }
    if !pending.isEmpty { try body(pending) }
  }
}
