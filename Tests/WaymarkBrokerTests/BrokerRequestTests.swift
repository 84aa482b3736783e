import Foundation
import Testing
import Waymark
import WaymarkCore

@testable import WaymarkBroker

@Suite("Daemon request decoder")
struct RequestDecodingTests {
  private func parse(_ text: String) -> Result<DaemonRequest, DaemonMessageError> {
    DaemonRequest.decode(Array(text.utf8))
  }

  @Test(
    "valid requests",
    arguments: [
      (#"{"class":"WATCH","enable":true}"#, DaemonRequest.watch(.init())),
      (#"{"class":"WATCH"}"#, .watch(.init())),
      (
        #"{"class":"WATCH","enable":true,"accuracy":"reduced","distance":25,"events":true}"#,
        .watch(.init(reduced: true, distanceMeters: 25, events: true))
      ),
      (#"{"class":"WATCH","visits":true}"#, .watch(.init(visits: true))),
      (#"{"class":"WATCH","accuracy":"nearestTenMeters","distance":0}"#, .watch(.init())),
      (#"{"class":"WATCH","enable":false}"#, .unwatch),
      (#" {"class":"POLL"} "#, .poll),
      (#"{"class":"STATUS"}"#, .status),
      (#"{"class":"REQUEST","level":"always"}"#, .request(level: .always)),
      (#"{"class":"REQUEST"}"#, .request(level: .whenInUse)),
      (
        #"{"class":"SESSION","authorization":"always","full_accuracy":true,"purpose":"nav"}"#,
        .session(.init(level: .always, fullAccuracy: true, purpose: "nav"))
      ),
      (#"{"class":"SESSION","authorization":"none"}"#, .session(.init(level: nil))),
      (#"{"class":"SESSION"}"#, .session(.init(level: .whenInUse))),
      (#"{"class":"SESSION","enable":false}"#, .endSession),
      (#"{"class":"AGENT","enable":true}"#, .agent(enable: true, scripted: false)),
      (#"{"class":"AGENT","enable":false}"#, .agent(enable: false, scripted: false)),
      (#"{"class":"AGENT","scripted":true}"#, .agent(enable: true, scripted: true)),
      (#"{"class":"ANSWER","id":7,"grant":"once"}"#, .answer(id: 7, answer: .once(.full))),
      (
        #"{"class":"ANSWER","id":8,"grant":"whenInUse","accuracy":"reduced"}"#,
        .answer(id: 8, answer: .grant(.whenInUse, .reduced))
      ),
      (
        #"{"class":"ANSWER","id":9,"grant":"never","accuracy":"reduced"}"#,
        .answer(id: 9, answer: .grant(.never, .full))
      ),
      (
        #"{"class":"MONITOR","name":"trips","op":"add","conditions":[{"id":"home","lat":52.5,"#
          + #""lon":13.4,"radius":50,"exitRadius":80,"confirmations":2,"dwell":5,"group":"g","#
          + #""overlap":"nearest","assume":"satisfied"}]}"#,
        .monitor(name: "trips", .add([Self.home]))
      ),
      (
        #"{"class":"MONITOR","name":"trips","op":"remove","ids":["home"]}"#,
        .monitor(name: "trips", .remove(["home"]))
      ),
      (#"{"class":"MONITOR","name":"trips","op":"delete"}"#, .monitor(name: "trips", .delete)),
      (#"{"class":"MONITOR","name":"t","op":"events"}"#, .monitor(name: "t", .events(after: 0))),
      (
        #"{"class":"MONITOR","name":"t","op":"events","after":12}"#,
        .monitor(name: "t", .events(after: 12))
      ),
      (
        #"{"class":"MONITOR","name":"t","op":"ack","sequence":3}"#,
        .monitor(name: "t", .acknowledge(through: 3))
      ),
    ])
  func valid(_ text: String, _ expected: DaemonRequest) throws {
    #expect(try parse(text).get() == expected)
  }

  /// The condition of the valid `add` above, as decoded.
  private static let home = DaemonRequest.MonitorCondition(
    identifier: "home", latitude: 52.5, longitude: 13.4, radiusMeters: 50, exitRadiusMeters: 80,
    confirmations: 2, dwellSeconds: 5, group: "g", overlap: "nearest", assume: "satisfied")

  @Test("a decoded condition is the circle the held monitor evaluates")
  func heldCondition() {
    let expected = HeldMonitor.Condition(
      identifier: "home",
      circle: Monitor.CircularGeographicCondition(
        center: Coordinate(latitude: 52.5, longitude: 13.4), radius: 50, exitRadius: 80,
        confirmations: 2, dwellSeconds: 5, group: "g", overlap: .nearest),
      assumed: .satisfied)
    #expect(HeldMonitor.Condition(Self.home) == expected)
    // Negative check: the defaults (no overlap, unknown) are not the written ones.
    var plain = Self.home
    plain.overlap = nil
    plain.assume = "unknown"
    let held = HeldMonitor.Condition(plain)
    #expect(held != expected && held.assumed == .unknown && held.circle.overlap == nil)
  }

  @Test(
    "invalid requests name the problem",
    arguments: [
      ("", "not JSON"),
      ("hello", "not JSON"),
      (#"{"class":"POLL"} x"#, "text after the object"),
      ("[1,2]", "expected a JSON object"),
      ("42", "expected a JSON object"),
      (#"{"enable":true}"#, "missing \"class\""),
      (#"{"class":"FLY"}"#, "unknown class 'FLY'"),
      (#"{"class":"WATCH","enable":"yes"}"#, "\"enable\" must be true or false"),
      (#"{"class":"WATCH","distance":-1}"#, "distance must be >= 0"),
      (#"{"class":"WATCH","accuracy":"perfect"}"#, "unknown accuracy"),
      (#"{"class":"REQUEST","level":"never"}"#, "level must be whenInUse or always"),
      (#"{"class":"SESSION","authorization":"never"}"#, "authorization must be none, whenInUse"),
      (#"{"class":"SESSION","purpose":7}"#, "\"purpose\" must be a string"),
      (#"{"class":"ANSWER","grant":"once"}"#, "invalid \"id\""),
      (#"{"class":"ANSWER","id":1.5,"grant":"once"}"#, "invalid \"id\""),
      (#"{"class":"ANSWER","id":1,"grant":"sometimes"}"#, "grant must be"),
      (#"{"class":"MONITOR","op":"events"}"#, "MONITOR: missing \"name\""),
      (#"{"class":"MONITOR","name":"","op":"events"}"#, "the name is empty"),
      (#"{"class":"MONITOR","name":"a\u001b[2J","op":"events"}"#, "control character"),
      (#"{"class":"MONITOR","name":"a\u202eb","op":"events"}"#, "control character"),
      (#"{"class":"MONITOR","name":"a\u2028b","op":"events"}"#, "control character"),
      (#"{"class":"MONITOR","name":"t","op":"fly"}"#, "op must be"),
      (#"{"class":"MONITOR","name":"t","op":"add"}"#, "non-empty \"conditions\""),
      (#"{"class":"MONITOR","name":"t","op":"add","conditions":[]}"#, "non-empty"),
      (#"{"class":"MONITOR","name":"t","op":"add","conditions":[1]}"#, "must be an object"),
      (
        #"{"class":"MONITOR","name":"t","op":"add","conditions":[{"id":"a","lat":91,"lon":0,"#
          + #""radius":5}]}"#, "\"lat\" and \"lon\""
      ),
      (
        #"{"class":"MONITOR","name":"t","op":"add","conditions":[{"id":"a","lat":1,"lon":0,"#
          + #""radius":0}]}"#, "\"radius\""
      ),
      (
        #"{"class":"MONITOR","name":"t","op":"add","conditions":[{"id":"a","lat":1,"lon":0,"#
          + #""radius":50,"exitRadius":10}]}"#, "exitRadius"
      ),
      (
        #"{"class":"MONITOR","name":"t","op":"add","conditions":[{"id":"a","lat":1,"lon":0,"#
          + #""radius":50,"assume":"maybe"}]}"#, "assume"
      ),
      (#"{"class":"MONITOR","name":"t","op":"events","after":-1}"#, "integer >= 0"),
      (#"{"class":"MONITOR","name":"t","op":"ack"}"#, "ack needs"),
      (#"{"class":"MONITOR","name":"t","op":"remove","ids":[1]}"#, "must hold strings"),
    ])
  func invalid(_ text: String, _ fragment: String) {
    guard case .failure(let error) = parse(text) else {
      Issue.record("\(text) parsed")
      return
    }
    #expect(error.message.contains(fragment), "\(error.message)")
  }

  @Test("a MONITOR name over 64 bytes, and more than 64 conditions, are refused")
  func monitorBounds() {
    let long = String(repeating: "é", count: 33)
    guard case .failure(let error) = parse(#"{"class":"MONITOR","name":"\#(long)","op":"delete"}"#)
    else {
      Issue.record("a 66-byte name parsed")
      return
    }
    #expect(error.message.contains("longer than 64 bytes"))
    let fits = String(repeating: "é", count: 32)
    #expect(
      (try? parse(#"{"class":"MONITOR","name":"\#(fits)","op":"delete"}"#).get())
        == .monitor(name: fits, .delete))
    let circle = #"{"id":"c","lat":1,"lon":1,"radius":1}"#
    func add(_ count: Int) -> String {
      #"{"class":"MONITOR","name":"t","op":"add","conditions":["#
        + Array(repeating: circle, count: count).joined(separator: ",") + "]}"
    }
    guard case .failure(let tooMany) = parse(add(65)) else {
      Issue.record("65 conditions parsed")
      return
    }
    #expect(tooMany.message.contains("more than 64 conditions"))
    guard case .success(.monitor(_, .add(let conditions))) = parse(add(64)) else {
      Issue.record("64 conditions refused")
      return
    }
    #expect(conditions.count == 64)
  }

  @Test("a SESSION's purpose is kept to 200 scalars, cut with an ellipsis")
  func sessionPurposeIsBounded() throws {
    let purpose = String(repeating: "é", count: 150) + String(repeating: "\u{1F30D}", count: 150)
    guard
      case .session(let options) = try parse(
        #"{"class":"SESSION","purpose":"\#(purpose)"}"#
      ).get()
    else {
      Issue.record("not a session")
      return
    }
    let kept = try #require(options.purpose)
    #expect(kept.unicodeScalars.count == 200 && kept.hasSuffix("\u{1F30D}…"))
    #expect(kept.hasPrefix(String(repeating: "é", count: 150)))
    let short = try parse(#"{"class":"SESSION","purpose":"short"}"#).get()
    #expect(short == .session(.init(level: .whenInUse, purpose: "short")))
  }

  @Test("a line over 4,096 bytes is refused before it is parsed")
  func overlong() {
    let padding = String(repeating: " ", count: 4090)
    let text = #"{"class":"POLL"}"# + padding
    guard case .failure(let error) = parse(text) else {
      Issue.record("parsed")
      return
    }
    #expect(error.message.contains("longer than 4096"))
  }
}

@Suite("Broker session")
struct BrokerSessionTests {
  private let identity = PeerIdentity(uid: 1000, pid: 42, user: "alice", executable: "/usr/bin/app")

  private func location(_ latitude: Double, _ seconds: Double) -> Location {
    Location(
      coordinate: Coordinate(latitude: latitude, longitude: 4.8), horizontalAccuracy: 5,
      timestamp: Date(timeIntervalSince1970: 1_800_000_000 + seconds))
  }

  private func deliver(_ session: inout BrokerSession, _ location: Location) -> Bool {
    var release = ReducedRelease()
    return deliver(&session, location, &release)
  }

  /// Delivers through `release` (a client id's), recording what a reduced session gets.
  private func deliver(
    _ session: inout BrokerSession, _ location: Location, _ release: inout ReducedRelease
  ) -> Bool {
    guard session.shouldDeliver(location, reduced: .standard, release: release) else {
      return false
    }
    if session.isReduced { release.release(Fix(time: location.timestamp)) }
    return true
  }

  @Test("nothing is delivered without a grant or without a watch")
  func noGrant() {
    var session = BrokerSession(identity: identity)
    session.watch = .init()
    #expect(!deliver(&session, location(45, 0)))
    session.stored = AuthorizationState(status: .denied)
    #expect(!deliver(&session, location(45, 1)))
    session.stored = AuthorizationState(status: .authorizedWhenInUse)
    session.watch = nil
    #expect(!deliver(&session, location(45, 2)))
    session.watch = .init()
    #expect(deliver(&session, location(45, 3)))
  }

  @Test("a stored grant wins over once; the switch restricts everyone")
  func effective() {
    var session = BrokerSession(identity: identity)
    session.once = AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced)
    #expect(
      session.effective == AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced))
    session.stored = AuthorizationState(status: .denied)
    #expect(session.effective.status == .denied)
    session.stored = AuthorizationState(status: .authorizedAlways)
    session.servicesEnabled = false
    #expect(session.effective.status == .restricted)
  }

  @Test("the distance filter measures from the last delivered location")
  func distanceFilter() {
    var session = BrokerSession(identity: identity)
    session.stored = AuthorizationState(status: .authorizedAlways)
    session.watch = .init(distanceMeters: 100)
    #expect(deliver(&session, location(45, 0)))
    #expect(!deliver(&session, location(45.0005, 1)))  // 56 m
    #expect(!deliver(&session, location(45.0008, 2)))  // 89 m
    #expect(deliver(&session, location(45.001, 3)))  // 111 m
  }

  @Test("reduced clients get one coarse location per interval and no events")
  func reduced() {
    var session = BrokerSession(identity: identity)
    session.stored = AuthorizationState(status: .authorizedAlways, accuracy: .reduced)
    session.watch = .init(events: true)
    #expect(!session.receivesEvents)
    var release = ReducedRelease()
    #expect(deliver(&session, location(45, 0), &release))
    #expect(!deliver(&session, location(45, 599), &release))
    #expect(deliver(&session, location(45, 600), &release))
    let fix = Fix(
      time: Date(timeIntervalSince1970: 1_800_000_000), mode: .threeDimensional,
      coordinate: Coordinate(latitude: 45.123456, longitude: 4.876543), altitudeMSL: 200,
      speed: 3, track: 90, horizontalError: 4)
    let coarse = fix.coarse(Location(fix)!, policy: .standard)
    #expect(coarse.altitudeMSL == nil && coarse.speed == nil && coarse.track == nil)
    #expect(coarse.horizontalError! >= 1000)
    #expect(coarse.coordinate != fix.coordinate)
    let snappedTwice = fix.coarse(Location(coarse)!, policy: .standard)
    #expect(snappedTwice.coordinate == coarse.coordinate)
  }

  @Test("events need always with full accuracy")
  func events() {
    var session = BrokerSession(identity: identity)
    session.watch = .init(events: true)
    session.stored = AuthorizationState(status: .authorizedWhenInUse)
    #expect(!session.receivesEvents)
    session.stored = AuthorizationState(status: .authorizedAlways)
    #expect(session.receivesEvents)
  }

  @Test(
    "one rule releases each kind of position data, under every state",
    arguments: [false, true])
  func disclosureRule(isOperator: Bool) {
    // The invariant's table, written out: positions under when-in-use or always (snapped when
    // reduced), the fix time also to root, whereabouts under always with full accuracy only.
    let statuses: [AuthorizationStatus] = [
      .notDetermined, .restricted, .denied, .authorizedWhenInUse, .authorizedAlways,
    ]
    var seen: Set<String> = []
    for status in statuses {
      for accuracy in [AccuracyAuthorization.full, .reduced] {
        let state = AuthorizationState(status: status, accuracy: accuracy)
        let granted = status == .authorizedWhenInUse || status == .authorizedAlways
        let position = Disclosure.release(.position, under: state, isOperator: isOperator)
        #expect(position == (granted ? (accuracy == .full ? .full : .reduced) : .withheld))
        let time = Disclosure.release(.fixTime, under: state, isOperator: isOperator)
        #expect(time == (granted || isOperator ? .full : .withheld))
        let whereabouts = Disclosure.release(.whereabouts, under: state, isOperator: isOperator)
        #expect(
          whereabouts == (status == .authorizedAlways && accuracy == .full ? .full : .withheld))
        seen.insert("\(position) \(time) \(whereabouts)")
      }
    }
    // Positive control: the table is not one answer everywhere.
    #expect(seen.count >= 3)
    // A connection asks the same rule with its own state and uid.
    var session = BrokerSession(
      identity: PeerIdentity(
        uid: isOperator ? 0 : 1000, pid: 1, user: "u", executable: "/usr/bin/app"))
    #expect(session.disclosure(of: .fixTime) == (isOperator ? .full : .withheld))
    session.once = AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced)
    #expect(session.disclosure(of: .position) == .reduced && session.isReduced)
    #expect(session.disclosure(of: .whereabouts) == .withheld && !session.mayHoldMonitors)
  }

  @Test("visits need asking, and always with full accuracy")
  func visits() {
    var session = BrokerSession(identity: identity)
    session.stored = AuthorizationState(status: .authorizedAlways)
    session.watch = .init(events: true)
    #expect(!session.receivesVisits && session.receivesEvents)
    session.watch = .init(visits: true)
    #expect(session.receivesVisits && !session.receivesEvents)
    session.stored = AuthorizationState(status: .authorizedWhenInUse)
    #expect(!session.receivesVisits)
    session.stored = AuthorizationState(status: .authorizedAlways, accuracy: .reduced)
    #expect(!session.receivesVisits)
    session.stored = AuthorizationState(status: .authorizedAlways)
    session.watch = .init(reduced: true, visits: true)
    #expect(!session.receivesVisits)
  }

  @Test("reduced: released on interval boundaries, per client id, whatever the connection")
  func reducedBoundaries() {
    var release = ReducedRelease()
    var first = BrokerSession(identity: identity)
    first.stored = AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced)
    first.watch = .init()
    // The first position at once (5 s past a boundary); the next not 600 s later but on the
    // first boundary at least 600 s on.
    #expect(deliver(&first, location(45, 5), &release))
    #expect(!deliver(&first, location(46, 605), &release))
    #expect(!deliver(&first, location(47, 1199), &release))
    // A new connection of the same client id shares the interval.
    var second = first
    second.lastDelivered = nil
    #expect(!deliver(&second, location(48, 1190), &release))
    #expect(deliver(&second, location(48, 1200), &release))
    // The fix just released goes to the identity's other connections too.
    #expect(deliver(&first, location(48, 1200), &release))
    #expect(
      ReducedRelease.nextBoundary(after: Date(timeIntervalSince1970: 1200), interval: 600) == 1800)
  }

  @Test("a reduced client's distance filter sees snapped positions only")
  func reducedDistance() {
    var release = ReducedRelease()
    var session = BrokerSession(identity: identity)
    session.stored = AuthorizationState(status: .authorizedWhenInUse, accuracy: .reduced)
    session.watch = .init(distanceMeters: 100)
    #expect(deliver(&session, location(45, 0), &release))
    // 600 s later, 111 m on but in the same 5 km cell: the snapped position has not moved.
    #expect(!deliver(&session, location(45.001, 600), &release))
    // Another cell, on a boundary.
    #expect(deliver(&session, location(45.2, 1200), &release))
  }

  @Test("authorization changes are announced once")
  func announcements() {
    var session = BrokerSession(identity: identity)
    #expect(session.authorizationChange()?.status == .notDetermined)
    #expect(session.authorizationChange() == nil)
    session.stored = AuthorizationState(status: .authorizedWhenInUse)
    #expect(session.authorizationChange()?.status == .authorizedWhenInUse)
    #expect(session.authorizationChange() == nil)
  }
}
