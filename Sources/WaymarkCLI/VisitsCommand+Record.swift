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

  /// Parses one NDJSON line of `replay` output through `JSONObjectReader`: a member of another
  /// type than expected reads as absent (the reader's `lenient` accessors).
  static func parse(_ line: [UInt8]) throws(LineError) -> RecordedItem {
    guard let object = try? JSONObjectReader(parsing: line) else {
      throw LineError("not a JSON object")
    }
    guard let className = object.lenientString("class") else {
      throw LineError("missing \"class\"")
    }
    func time(_ key: String) throws(LineError) -> Date {
      guard let date = object.lenientString(key).flatMap(Timestamp.parse) else {
        throw LineError("missing or bad \"\(key)\" time")
      }
      return date
    }
    switch className {
    case "TPV":
      guard let latitude = object.lenientNumber("lat"), let longitude = object.lenientNumber("lon")
      else { return .ignored }
      let mode = FixMode(rawValue: Int(saturating: object.lenientNumber("mode") ?? 0)) ?? .unknown
      let fixTime = try time("time")
      return .fix(
        Fix(
          time: fixTime, mode: mode,
          coordinate: Coordinate(latitude: latitude, longitude: longitude),
          horizontalError: object.lenientNumber("eph")))
    case "ARRIVAL", "DEPARTURE":
      guard let placeID = object.lenientString("place"), !placeID.isEmpty else {
        throw LineError("missing \"place\"")
      }
      let eventTime = try time("time")
      let coordinate = Coordinate(
        latitude: object.lenientNumber("lat") ?? .nan,
        longitude: object.lenientNumber("lon") ?? .nan)
      let reasonObject = object.lenientObject("reason") ?? .empty(at: "reason")
      let reason = EventReason(
        rule: reasonObject.lenientString("rule") ?? "",
        distanceMeters: reasonObject.lenientNumber("distance") ?? .nan,
        horizontalAccuracyMeters: reasonObject.lenientNumber("accuracy"),
        enterRadiusMeters: reasonObject.lenientNumber("enter") ?? .nan,
        exitRadiusMeters: reasonObject.lenientNumber("exit") ?? .nan,
        confirmations: Int(saturating: reasonObject.lenientNumber("confirmations") ?? 0),
        dwellSeconds: reasonObject.lenientNumber("dwell") ?? .nan)
      let reasonJSON = reasonObject.json.sortedKeysText
      let name = object.lenientString("name") ?? placeID
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
