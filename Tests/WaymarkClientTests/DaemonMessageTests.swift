import Foundation
import Testing
import Waymark
import WaymarkClient
import WaymarkCore
import WaymarkTesting

/// The daemon's lines in docs/protocol.md's transcripts (`< {…}`), read out of the document so
/// that the specification and the decoder cannot drift apart.
private let protocolLines: [String] = {
  let url = Products.packageRoot.appendingPathComponent("docs/protocol.md")
  guard let text = try? String(contentsOf: url, encoding: .utf8) else { return [] }
  return MarkdownFiles.codeBlocks(in: text, file: "docs/protocol.md")
    .flatMap { $0.code.split(separator: "\n") }
    .filter { $0.hasPrefix("< {") }
    .map { String($0.dropFirst(2)) }
}()

/// The one line of `class` in the document's transcripts (the first, when there are several).
private func documented(_ className: String) throws -> String {
  try #require(
    protocolLines.first { $0.hasPrefix(#"{"class":"\#(className)""#) },
    "docs/protocol.md has no \(className) line")
}

private func decoded(_ line: String) throws -> DaemonMessage {
  try DaemonMessage.parse(line).get()
}

@Suite("Daemon messages")
struct DaemonMessageTests {
  /// Every class the daemon sends (section 6) appears in the transcripts, and every daemon line
  /// there decodes as its own class, none as unknown.
  @Test func everyDocumentedLineDecodesAsItsClass() throws {
    let classes: Set = [
      "VERSION", "AUTHORIZATION", "WATCH", "AGENT", "STATUS", "TPV", "ARRIVAL", "DEPARTURE",
      "ASK", "DECIDED", "ERROR", "VISIT", "SESSION", "MONITOR", "MONITOR_EVENT",
    ]
    #expect(protocolLines.count >= 20, "\(protocolLines.count) daemon lines in docs/protocol.md")
    var seen: Set<String> = []
    for line in protocolLines {
      let message = try decoded(line)
      if case .unknown = message { Issue.record("decoded as unknown: \(line)") }
      #expect(line.hasPrefix(#"{"class":"\#(message.className)""#), "\(line)")
      seen.insert(message.className)
    }
    #expect(seen == classes)
  }

  /// `SESSION` (1.3): the session held and the state granted; members the daemon may leave out
  /// take their defaults.
  @Test func session() throws {
    guard case .session(let session) = try decoded(try documented("SESSION")) else {
      Issue.record("not a session")
      return
    }
    #expect(session.authorization == "always" && session.fullAccuracy)
    #expect(session.state == AuthorizationState(status: .authorizedWhenInUse))
    #expect(session.servicesEnabled && session.requestInProgress)
    let bare = try decoded(#"{"class":"SESSION","status":"denied"}"#)
    #expect(
      bare
        == .session(
          .init(
            authorization: nil, fullAccuracy: false, state: AuthorizationState(status: .denied),
            servicesEnabled: true, requestInProgress: false)))
    #expect(throws: DaemonMessageError.self) { try decoded(#"{"class":"SESSION"}"#) }
  }

  /// `MONITOR` and `MONITOR_EVENT` (1.3): a held monitor's answers and events, typed; a state
  /// other than the two the protocol names is an error, not a guess.
  @Test func heldMonitors() throws {
    let event = try decoded(
      #"{"class":"MONITOR_EVENT","name":"trips","sequence":2,"id":"home","state":"unsatisfied","time":"2026-11-29T08:00:50.000Z"}"#
    )
    #expect(
      event
        == .heldMonitorEvent(
          .init(
            name: "trips", sequence: 2, identifier: "home", isSatisfied: false,
            date: try #require(Timestamp.parse("2026-11-29T08:00:50.000Z")))))
    let entered = try decoded(
      #"{"class":"MONITOR_EVENT","name":"t","sequence":1,"id":"a","state":"satisfied","time":"2026-11-29T08:00:31.000Z"}"#
    )
    guard case .heldMonitorEvent(let first) = entered else {
      Issue.record("not a held monitor's event")
      return
    }
    #expect(first.isSatisfied)
    #expect(throws: DaemonMessageError.self) {
      try decoded(
        #"{"class":"MONITOR_EVENT","name":"t","sequence":1,"id":"a","state":"inside","time":"2026-11-29T08:00:31.000Z"}"#
      )
    }
    let answer = try decoded(
      #"{"class":"MONITOR","name":"trips","op":"events","last":2,"lost":0,"more":false,"next":3}"#)
    #expect(
      answer
        == .heldMonitor(
          .init(name: "trips", operation: "events", last: 2, lost: 0, more: false, next: 3)))
    let added = try decoded(#"{"class":"MONITOR","name":"trips","op":"add","conditions":1}"#)
    #expect(added == .heldMonitor(.init(name: "trips", operation: "add", conditionCount: 1)))
    #expect(throws: DaemonMessageError.self) { try decoded(#"{"class":"MONITOR","op":"add"}"#) }
  }

  @Test func versionAuthorizationWatchAgent() throws {
    #expect(
      try decoded(documented("VERSION"))
        == .version(.init(release: "0.1.0", protocolMajor: 1, protocolMinor: 3)))
    #expect(
      try decoded(documented("AUTHORIZATION"))
        == .authorization(
          .init(
            clientID: "alice:/usr/bin/gnome-maps",
            state: AuthorizationState(status: .authorizedWhenInUse, accuracy: .full))))
    #expect(
      try decoded(documented("WATCH"))
        == .watch(.init(enabled: true, accuracy: .full, distanceMeters: 25, events: false)))
    #expect(try decoded(#"{"class":"WATCH","enable":false}"#) == .watch(.init(enabled: false)))
    #expect(try decoded(documented("AGENT")) == .agent(enabled: true))
    let reduced = try #require(
      protocolLines.first { $0.contains(#""accuracy":"reduced""#) && $0.contains("AUTHORIZATION") })
    guard case .authorization(let authorization) = try decoded(reduced) else {
      Issue.record("not an AUTHORIZATION: \(reduced)")
      return
    }
    #expect(
      authorization.state == AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced))
  }

  @Test func statusAskDecidedError() throws {
    #expect(
      try decoded(documented("STATUS"))
        == .status(
          .init(
            release: "0.1.0", clients: 2, watchers: 1, nmeaClients: 1,
            lastFix: Timestamp.parse("2026-11-29T08:00:00.000Z"))))
    #expect(
      try decoded(#"{"class":"STATUS","release":"0.1.0","clients":0,"watchers":0,"nmeaClients":0}"#)
        == .status(.init(release: "0.1.0", clients: 0, watchers: 0, nmeaClients: 0, lastFix: nil)))
    #expect(
      try decoded(documented("ASK"))
        == .ask(
          .init(id: 1, clientID: "alice:/usr/bin/gnome-maps", processID: 4242, level: .whenInUse)))
    guard case .decided(let decided) = try decoded(documented("DECIDED")) else {
      Issue.record("DECIDED did not decode as one")
      return
    }
    // The documented exchange: polkit confirmed the agent's "while in use", so it was recorded.
    #expect(decided.id == 1 && decided.grant == .whenInUse && decided.recorded)
    #expect(decided.reason == nil)
    #expect(try decoded(documented("ERROR")) == .error(message: "unknown class 'BOGUS'"))
  }

  /// The full TPV: every member the document shows, in the library's units.
  @Test func tpv() throws {
    guard case .location(let fix) = try decoded(documented("TPV")) else {
      Issue.record("TPV did not decode as a location")
      return
    }
    #expect(fix.time == Timestamp.parse("2026-11-29T08:00:00.000Z"))
    #expect(fix.mode == .threeDimensional && fix.status == .dgps)
    #expect(fix.coordinate == Coordinate(latitude: 52.519998850, longitude: 13.400588450))
    #expect(fix.altitudeMSL == 34 && fix.geoidSeparation == 47.2)
    #expect(fix.speed == 12.34 && fix.track == 87.5 && fix.climb == 0.05)
    #expect(fix.horizontalError == 3.2 && fix.verticalError == 4.1)
    // The reduced TPV: plain GPS (no `status`), 2D, no altitude.
    let reduced = try #require(protocolLines.first { $0.contains(#""eph":5000.000"#) })
    guard case .location(let coarse) = try decoded(reduced) else {
      Issue.record("the reduced TPV did not decode as a location")
      return
    }
    #expect(coarse.mode == .twoDimensional && coarse.status == .gps)
    #expect(coarse.altitudeMSL == nil && coarse.horizontalError == 5000)
  }

  /// ARRIVAL and DEPARTURE decode as the library's `PlaceEvent`, and the library writes them
  /// back byte for byte as the document shows them.
  @Test func placeEvents() throws {
    let arrivalLine = try documented("ARRIVAL")
    let departureLine = try documented("DEPARTURE")
    guard case .placeEvent(let arrival) = try decoded(arrivalLine),
      case .placeEvent(let departure) = try decoded(departureLine)
    else {
      Issue.record("ARRIVAL/DEPARTURE did not decode as place events")
      return
    }
    #expect(arrival.jsonLine().string == arrivalLine)
    #expect(departure.jsonLine().string == departureLine)
    guard case .arrival(let came) = arrival, case .departure(let left) = departure else {
      Issue.record("wrong kinds: \(arrival.className), \(departure.className)")
      return
    }
    #expect(came.placeID == "home" && came.placeName == "Home")
    #expect(came.time == Timestamp.parse("2026-11-29T07:50:00.000Z"))
    #expect(came.reason.rule == "inside" && came.reason.distanceMeters == 2.1)
    #expect(came.reason.horizontalAccuracyMeters == 6 && came.reason.confirmations == 3)
    #expect(left.arrival == came.time && left.durationSeconds == 3000)
    #expect(left.reason.rule == "outside" && left.reason.exitRadiusMeters == 90)
  }

  /// VISIT (protocol 1.2): the document's open and closed stay decode as the library's `Stay`,
  /// which writes them back byte for byte; the WATCH that asked for them says so.
  @Test func visits() throws {
    let lines = protocolLines.filter { $0.hasPrefix(#"{"class":"VISIT""#) }
    try #require(lines.count == 2)
    let stays = try lines.compactMap { line -> Stay? in
      guard case .visit(let stay) = try decoded(line) else { return nil }
      return stay
    }
    try #require(stays.count == 2, "a VISIT line did not decode as a visit")
    let arrival = try #require(Timestamp.parse("2026-11-29T09:12:04.000Z"))
    #expect(stays[0].isOpen && stays[0].arrivalDate == arrival && stays[0].placeID == nil)
    #expect(stays[0].fixCount == 121 && stays[0].horizontalAccuracy == 2.4)
    #expect(stays[1].arrivalDate == arrival && stays[1].durationSeconds == 627)
    #expect(stays[1].coordinate == Coordinate(latitude: 45.7641093, longitude: 4.8357052))
    for (stay, line) in zip(stays, lines) {
      #expect(stay.visitLine(place: nil, source: stay.source).string == line)
    }
    let watch = try #require(protocolLines.first { $0.contains(#""visits":true"#) })
    #expect(try decoded(watch) == .watch(.init(enabled: true, accuracy: .full, visits: true)))
    // Required members: a VISIT without a centre or with a bad time is an error.
    #expect(throws: DaemonMessageError.self) {
      try decoded(lines[0].replacingOccurrences(of: #""lat":45.7641120,"#, with: ""))
    }
    #expect(throws: DaemonMessageError.self) {
      try decoded(lines[1].replacingOccurrences(of: "2026-11-29T09:22:31.000Z", with: "later"))
    }
  }

  /// A class from a later minor version is kept whole; an unknown member of a known class is
  /// ignored (the version rule of the protocol).
  @Test func unknownClassIsKept() throws {
    let line = #"{"class":"GEOFENCE","id":7,"inside":true}"#
    #expect(try decoded(line) == .unknown(class: "GEOFENCE", raw: line))
    #expect(try decoded(line).className == "GEOFENCE")
    #expect(
      try decoded(#"{"class":"AGENT","enable":false,"since":"2027-01-01T00:00:00.000Z"}"#)
        == .agent(enabled: false))
  }

  /// Lines that are not messages are errors naming what is wrong; the positive controls beside
  /// them decode.
  @Test(arguments: [
    ("", "not JSON"),
    ("hello", "not JSON"),
    (#"{"class":"ERROR","message":"x"} trailing"#, "text after the object"),
    ("[1,2]", "not a JSON object"),
    (#"{"message":"x"}"#, "missing \"class\""),
    (#"{"class":"ERROR"}"#, "ERROR: \"message\""),
    (#"{"class":"TPV","mode":3,"time":"2026-11-29T08:00:00.000Z","lat":52.5}"#, "\"lon\""),
    (#"{"class":"TPV","mode":1e300,"time":"2026-11-29T08:00:00.000Z","lat":1,"lon":2}"#, "mode"),
    (#"{"class":"TPV","mode":1,"time":"2026-11-29T08:00:00.000Z","lat":1,"lon":2}"#, "mode"),
    (#"{"class":"TPV","mode":2,"time":"2026-11-29T08:00:00.000Z","lat":91,"lon":2}"#, "range"),
    (#"{"class":"TPV","mode":2,"time":"yesterday","lat":1,"lon":2}"#, "\"time\""),
    (#"{"class":"AUTHORIZATION","client":"a:/b","status":"maybe"}"#, "\"status\""),
    (#"{"class":"VERSION","release":"1","proto_major":1.5,"proto_minor":0}"#, "integer"),
    (
      #"{"class":"ARRIVAL","time":"2026-11-29T07:50:00.000Z","place":"home","lat":1,"lon":2}"#,
      "\"reason\""
    ),
    (#"{"class":"DECIDED","id":1,"client":"a:/b","grant":"forever","recorded":true}"#, "grant"),
  ])
  func malformedLinesAreErrors(line: String, complaint: String) throws {
    guard case .failure(let error) = DaemonMessage.parse(line) else {
      Issue.record("decoded: \(line)")
      return
    }
    #expect(error.message.contains(complaint), "\(error.message)")
  }

  @Test func positiveControlsOfTheMalformedLines() throws {
    #expect(try decoded(#"{"class":"ERROR","message":"x"}  "#) == .error(message: "x"))
    let fix = try decoded(
      #"{"class":"TPV","mode":2,"time":"2026-11-29T08:00:00.000Z","lat":1,"lon":2}"#)
    #expect(fix.className == "TPV")
    #expect(
      try decoded(#"{"class":"AUTHORIZATION","client":"a:/b","status":"denied"}"#)
        == .authorization(.init(clientID: "a:/b", state: AuthorizationState(status: .denied))))
  }
}
