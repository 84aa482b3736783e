// libFuzzer entry point: the trust invariant as the oracle, over the real broker loop
// (BrokerLoop, driven round by round) with nine principals of different users and programs on
// real socket pairs — granted full, reduced or not at all by the operator; agents of root, of
// group waymark and of plain users, scripted or not; the decision authority (polkit) saying yes
// or no, or never answering. Each input is a sequence of steps: connect and disconnect, every
// request class (WATCH, POLL, STATUS, REQUEST, SESSION, AGENT, ANSWER, MONITOR, garbage), fixes,
// place events and visits published, operator grants, revocations and resets, the switch, time.
// Built by Fuzz/run-invariant.sh; not part of the package.
//
// The oracle keeps its own record of who decided what, apart from the broker's state:
// - a grant is legitimate when the operator wrote it, or it is the answer a privileged agent
//   (root, group waymark) gave to a question it was asked about that program, or an answer the
//   authority confirmed; the grant store refuses (traps) any other write of an authorizing grant;
// - after every step, every line each principal received is read: a position (TPV, NMEA
//   sentences) needs a stored authorizing grant of its client id or a legitimate "once" for it
//   (ended by a revocation or a reset); whereabouts (ARRIVAL, DEPARTURE, VISIT, a held monitor's
//   events) need `always` with full accuracy from one of those; a fix time in STATUS needs a
//   position's cover or root; with the services switched off nothing goes out; a line of an
//   unknown class counts as a position;
// - a client id whose only cover is reduced gets coarse TPVs (2D, no speed) and never two
//   positions closer than the reduced interval.
import FoundationEssentials
import Glibc
import Waymark
import WaymarkCore
import WaymarkIdentify

@testable import WaymarkBroker

// MARK: The oracle's record

/// Who may have what, as the oracle knows it from the steps it took.
private final class Record: @unchecked Sendable {
  /// Authorizing decisions a person or the operator made, per client id.
  var decided: [String: Set<Level>] = [:]
  /// Legitimate "once" answers per client id (any of its connections: an over-approximation).
  var once: [String: Set<Level>] = [:]
  /// Whether the services are on.
  var servicesOn = true
  /// The answer a privileged agent (root, group waymark) sent in this step, to whichever
  /// question: root may decide about any program (it may grant anything with `waymark auth`),
  /// even one whose question it was never sent (asked before it became an agent).
  var privilegedAnswer: DaemonRequest.AgentAnswer?

  struct Level: Hashable {
    var level: GrantLevel
    var accuracy: AccuracyAuthorization
  }

  func decide(_ clientID: String, _ answer: DaemonRequest.AgentAnswer) {
    switch answer {
    case .once(let accuracy):
      once[clientID, default: []].insert(Level(level: .whenInUse, accuracy: accuracy))
    case .grant(let level, let accuracy):
      guard level != .never else { return }
      decided[clientID, default: []].insert(Level(level: level, accuracy: accuracy))
      // An agent's grant past the user's quota is applied once instead.
      once[clientID, default: []].insert(Level(level: level, accuracy: accuracy))
    }
  }
}

/// Grants in memory, with a change mark and revocations as the daemon's store has; an
/// authorizing grant written by the broker must be one the record holds.
private final class OracleStore: GrantStore, @unchecked Sendable {
  let record: Record
  var grants: [String: Grant] = [:]
  var mark: Int64 = 0
  var revoked: [(mark: Int64, clientID: String)] = []

  init(record: Record) { self.record = record }

  func grant(for clientID: String) throws -> Grant? { grants[clientID] }
  func allGrants() throws -> [Grant] { grants.values.sorted { $0.clientID < $1.clientID } }
  func save(_ grant: Grant) throws {
    if grant.level != .never {
      let level = Record.Level(level: grant.level, accuracy: grant.accuracy)
      if case .grant(grant.level, grant.accuracy) = record.privilegedAnswer {
        record.decide(grant.clientID, .grant(grant.level, grant.accuracy))
      }
      precondition(
        record.decided[grant.clientID]?.contains(level) == true,
        "a grant recorded without a decision: \(grant.clientID) \(grant.level) \(grant.accuracy)")
    }
    grants[grant.clientID] = grant
    mark += 1
  }
  func operatorSave(_ grant: Grant) {
    grants[grant.clientID] = grant
    mark += 1
  }
  @discardableResult func removeGrant(for clientID: String) throws -> Bool {
    mark += 1
    revoked.append((mark, clientID))
    return grants.removeValue(forKey: clientID) != nil
  }
  func removeAll() throws {
    grants.removeAll()
    mark += 1
    revoked.append((mark, "*"))
  }
  func changeMark() throws -> Int64? { mark }
  func revocations(after mark: Int64?) throws -> GrantRevocations {
    let after = mark ?? 0
    return GrantRevocations(
      clientIDs: revoked.filter { $0.mark > after }.map(\.clientID), mark: self.mark)
  }
}

/// The authority (polkit) as the input scripts it: yes, no; a "yes" is recorded as a decision.
private final class ScriptedAuthority: DecisionAuthority, @unchecked Sendable {
  let record: Record
  var nextVerdict = false
  var asked = 0

  init(record: Record) { self.record = record }

  func confirms(
    _ answer: DaemonRequest.AgentAnswer, by agent: PeerIdentity, about client: PeerIdentity
  ) -> Bool {
    asked += 1
    if nextVerdict { record.decide(client.clientID, answer) }
    return nextVerdict
  }
}

// MARK: Principals

private struct Principal {
  let identity: PeerIdentity
  let kind: BrokerClientKind
  let mayPersist: Bool
  /// The harness's end of the current connection, -1 when none.
  var end: Int32 = -1
  /// The loop's end.
  var loopEnd: Int32 = -1
  var pending: [UInt8] = []
  /// ASK ids this principal received, with the client id each asked about.
  var asked: [Int: String] = [:]
}

private let principals: [(uid_t, String, String, BrokerClientKind, Bool)] = [
  (1000, "alice", "/usr/bin/app", .broker, false),
  (1000, "alice", "/usr/bin/waymark", .broker, false),
  (1001, "bob", "/usr/bin/app", .broker, false),
  (1001, "bob", "/usr/bin/waymark", .broker, false),
  (0, "root", "/usr/bin/waymark", .broker, true),
  (1002, "carol", "/usr/bin/waymark", .broker, true),  // in group waymark
  (1000, "alice", "/usr/bin/app", .nmea, false),
  (0, "root", "/usr/bin/app", .broker, true),
  (1003, "dave", "/usr/bin/other", .broker, false),
]

private let interval = ReducedAccuracy.standard.minimumInterval
private let reason = EventReason(
  rule: "fuzz", distanceMeters: 10, horizontalAccuracyMeters: 5, enterRadiusMeters: 50,
  exitRadiusMeters: 80, confirmations: 2, dwellSeconds: 0)

// MARK: Reading what each principal received

private func classOf(_ line: Substring) -> Substring? {
  guard let start = line.firstRange(of: "\"class\":\"") else { return nil }
  let rest = line[start.upperBound...]
  guard let end = rest.firstIndex(of: "\"") else { return nil }
  return rest[..<end]
}

private func stringField(_ name: String, _ line: Substring) -> Substring? {
  guard let start = line.firstRange(of: "\"\(name)\":\"") else { return nil }
  let rest = line[start.upperBound...]
  guard let end = rest.firstIndex(of: "\"") else { return nil }
  return rest[..<end]
}

private func intField(_ name: String, _ line: Substring) -> Int? {
  guard let start = line.firstRange(of: "\"\(name)\":") else { return nil }
  return Int(line[start.upperBound...].prefix { $0.isNumber })
}

/// What a line tells of the device's position.
private enum Carries { case nothing, position, fixTime, whereabouts }

private func carries(_ line: Substring, nmea: Bool) -> Carries {
  if nmea { return line.hasPrefix("$") ? .position : .nothing }
  switch classOf(line) {
  case "VERSION", "AUTHORIZATION", "WATCH", "ERROR", "SESSION", "ASK", "DECIDED", "AGENT":
    return .nothing
  case "STATUS": return line.contains("\"lastFix\"") ? .fixTime : .nothing
  case "MONITOR":
    return line.contains("\"events\"") || line.contains("\"state\"") ? .whereabouts : .nothing
  case "ARRIVAL", "DEPARTURE", "VISIT": return .whereabouts
  default: return .position  // TPV, and anything unknown
  }
}

/// Lines checked, by what they carried (position, fix time, whereabouts), and inputs run:
/// printed when the run ends, so that a run shows the oracle had something to judge.
nonisolated(unsafe) private var checkedLines = [0, 0, 0]
nonisolated(unsafe) private var reportRegistered = false

@_cdecl("LLVMFuzzerTestOneInput")
public func fuzzBrokerInvariant(_ data: UnsafePointer<UInt8>, _ size: Int) -> CInt {
  if !reportRegistered {
    reportRegistered = true
    atexit {
      let text =
        "invariant oracle: checked \(checkedLines[0]) positions, \(checkedLines[1]) fix times, "
        + "\(checkedLines[2]) whereabouts\n"
      _ = text.withCString { write(2, $0, strlen($0)) }
    }
  }
  let bytes = Array(UnsafeBufferPointer(start: data, count: size))
  var index = 0
  func next() -> Int {
    defer { index += 1 }
    return index < bytes.count ? Int(bytes[index]) : 0
  }
  let record = Record()
  let store = OracleStore(record: record)
  let authority = ScriptedAuthority(record: record)
  let servicesOn = Locked(true)
  var configuration = BrokerServer.Configuration(path: nil)
  configuration.linesPerSecond = 1e9
  configuration.lineBurst = 1e9
  configuration.agentTimeoutSeconds = 3600
  configuration.agents = [AgentRule(user: nil, executable: "/usr/bin/waymark")]
  configuration.maximumAgentGrantsPerUser = 3
  guard
    let server = try? BrokerServer(
      configuration: configuration, grants: store,
      services: LocationServicesSwitch { servicesOn.withLock { $0 } },
      decisionAuthority: authority, heldMonitors: nil, log: { _, _ in }, runsLoop: false),
    let loop = server.loop
  else { fatalError("no broker") }
  loop.asksAuthorityInline = true
  loop.refreshGrants(force: true)  // as the loop's run() starts: the revocation mark is set
  var peers = principals.enumerated().map { offset, entry in
    Principal(
      identity: PeerIdentity(
        uid: entry.0, pid: pid_t(100 + offset), user: entry.1, executable: entry.2,
        startTime: 1),
      kind: entry.3, mayPersist: entry.4)
  }
  var fixTime = Date(timeIntervalSince1970: 1_800_000_000)
  var published: [Substring: Date] = [:]
  var latestPublished: Date?
  var reducedSeen: [String: Date] = [:]

  func round() {
    var entries = [pollfd(fd: server.wakeDescriptor, events: Int16(POLLIN), revents: 0)]
    for client in loop.clients.values {
      entries.append(pollfd(fd: client.descriptor, events: Int16(POLLIN), revents: Int16(POLLIN)))
    }
    _ = loop.round(entries, pollFailure: 0)
  }

  func covers(_ clientID: String, whereabouts: Bool) -> (full: Bool, any: Bool) {
    var levels: [Record.Level] = []
    if let grant = store.grants[clientID], grant.level != .never {
      levels.append(Record.Level(level: grant.level, accuracy: grant.accuracy))
    }
    levels += record.once[clientID] ?? []
    if whereabouts {
      let yes = levels.contains { $0.level == .always && $0.accuracy == .full }
      return (yes, yes)
    }
    return (levels.contains { $0.accuracy == .full }, !levels.isEmpty)
  }

  /// Reads what every principal received and checks it against the record.
  func check() {
    for i in peers.indices where peers[i].end >= 0 {
      var buffer = [UInt8](repeating: 0, count: 65536)
      while true {
        let count = read(peers[i].end, &buffer, buffer.count)
        guard count > 0 else { break }
        peers[i].pending += buffer[..<count]
      }
      while let newline = peers[i].pending.firstIndex(of: 0x0A) {
        let text = String(decoding: peers[i].pending[..<newline], as: UTF8.self)
        peers[i].pending.removeFirst(newline + 1)
        let line = text[...]
        let identity = peers[i].identity
        let clientID = identity.clientID
        if classOf(line) == "ASK", let id = intField("id", line),
          let about = stringField("client", line)
        {
          peers[i].asked[id] = String(about)
        }
        // A privileged agent's answer applied once (it is told which program it was about).
        if peers[i].mayPersist, classOf(line) == "DECIDED", !line.contains("\"recorded\":true"),
          stringField("grant", line) != "never", let about = stringField("client", line),
          let answer = record.privilegedAnswer
        {
          record.decide(String(about), answer)
        }
        let nmea = peers[i].kind == .nmea
        let what = carries(line, nmea: nmea)
        guard what != .nothing else { continue }
        precondition(
          record.servicesOn || (what == .fixTime && identity.uid == 0),
          "\(clientID) received \(line.prefix(60)) with the services off")
        switch what {
        case .nothing: break
        case .fixTime:
          checkedLines[1] += 1
          precondition(
            identity.uid == 0 || covers(clientID, whereabouts: false).any,
            "\(clientID) received a fix time without a decision")
        case .whereabouts:
          checkedLines[2] += 1
          precondition(
            covers(clientID, whereabouts: true).full,
            "\(clientID) received whereabouts without always/full: \(line.prefix(80))")
        case .position:
          checkedLines[0] += 1
          let cover = covers(clientID, whereabouts: false)
          precondition(cover.any, "\(clientID) received a position without a decision")
          guard !cover.full else { continue }
          // Reduced only: coarse, and one position per interval per client id.
          let time = nmea ? latestPublished : stringField("time", line).flatMap { published[$0] }
          if !nmea {
            precondition(
              line.contains("\"mode\":2") && !line.contains("\"speed\""),
              "a reduced client got a precise TPV")
          }
          if let time {
            if let last = reducedSeen[clientID], last != time {
              precondition(
                abs(time.timeIntervalSince(last)) >= interval,
                "reduced positions \(time.timeIntervalSince(last)) s apart for \(clientID)")
            }
            reducedSeen[clientID] = time
          }
        }
      }
    }
  }

  func send(_ i: Int, _ text: String) {
    guard peers[i].end >= 0 else { return }
    let line = Array((text + "\n").utf8)
    // MSG_NOSIGNAL: the loop may have closed its end (a refused or revoked NMEA peer).
    _ = line.withUnsafeBytes {
      Glibc.send(peers[i].end, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL))
    }
  }

  while index < bytes.count {
    record.privilegedAnswer = nil
    let op = next() % 19
    let who = next() % peers.count
    switch op {
    case 0:  // connect
      guard peers[who].end < 0 else { break }
      var ends: [Int32] = [0, 0]
      guard socketpair(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0, &ends) == 0 else { break }
      for end in ends { _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK) }
      peers[who].end = ends[0]
      peers[who].loopEnd = ends[1]
      peers[who].pending = []
      peers[who].asked = [:]
      loop.adopt(
        ends[1], kind: peers[who].kind, identity: peers[who].identity,
        mayPersist: peers[who].mayPersist)
      if loop.clients[ends[1]] == nil {  // an NMEA peer without a grant is closed at once
        close(ends[0])
        peers[who].end = -1
      }
    case 1:  // disconnect: the loop sees the end of the stream
      guard peers[who].end >= 0 else { break }
      close(peers[who].end)
      peers[who].end = -1
    case 2:
      let flags = next()
      send(
        who,
        "{\"class\":\"WATCH\",\"enable\":true"
          + (flags & 1 != 0 ? ",\"accuracy\":\"reduced\"" : "")
          + (flags & 2 != 0 ? ",\"events\":true" : "") + (flags & 4 != 0 ? ",\"visits\":true" : "")
          + (flags & 8 != 0 ? ",\"distance\":\(flags)" : "") + "}")
    case 3: send(who, #"{"class":"WATCH","enable":false}"#)
    case 4: send(who, #"{"class":"POLL"}"#)
    case 5: send(who, #"{"class":"STATUS"}"#)
    case 6: send(who, "{\"class\":\"REQUEST\",\"level\":\"\(next() % 2 == 0 ? "always" : "whenInUse")\"}")
    case 7:
      let flags = next()
      send(
        who,
        "{\"class\":\"SESSION\",\"authorization\":\"\(["none", "whenInUse", "always"][flags % 3])\""
          + ",\"full_accuracy\":\(flags & 4 != 0)}")
    case 8:
      let flags = next()
      send(
        who,
        "{\"class\":\"AGENT\",\"enable\":\(flags & 1 == 0),\"scripted\":\(flags & 2 != 0)}")
    case 9:  // ANSWER, to a question this principal was asked or a guess
      let known = peers[who].asked.keys.sorted()
      let id = known.isEmpty || next() % 4 == 0 ? next() % 8 : known[next() % known.count]
      let answer = fuzzAnswer(next())
      authority.nextVerdict = next() % 2 == 0
      // The record: a privileged agent's answer decides (for the question it was asked, here;
      // for any other, when the store is written or DECIDED names the program).
      if peers[who].mayPersist, peers[who].end >= 0 {
        record.privilegedAnswer = answer
        if let about = peers[who].asked[id] { record.decide(about, answer) }
      }
      // The line says exactly what the record holds.
      let (grant, said): (String, AccuracyAuthorization) =
        switch answer {
        case .once(let accuracy): ("once", accuracy)
        case .grant(let level, let accuracy): (level.rawValue, accuracy)
        }
      send(
        who,
        "{\"class\":\"ANSWER\",\"id\":\(id),\"grant\":\"\(grant)\",\"accuracy\":\""
          + "\(said.rawValue)\"}")
    case 10:
      send(who, #"{"class":"MONITOR","name":"m","op":"events","after":0}"#)
    case 11:  // a fix
      fixTime = fixTime.addingTimeInterval(Double(1 + next() * 3))
      let fix = Fix(
        time: fixTime, mode: .threeDimensional,
        coordinate: Coordinate(
          latitude: 52 + Double(next()) / 1000, longitude: 13 + Double(next()) / 1000),
        altitudeMSL: 40, speed: 3, track: 90, horizontalError: 5)
      let tpv = String(decoding: EncodedFix.bytes(fix, for: .broker), as: UTF8.self)
      if let time = stringField("time", tpv[...]) { published[time] = fixTime }
      latestPublished = fixTime
      server.publish(fix)
    case 12:  // a place event
      let arrival = PlaceEvent.Arrival(
        time: fixTime, placeID: "home", placeName: "Home",
        coordinate: Coordinate(latitude: 52, longitude: 13), reason: reason)
      server.publish(
        next() % 2 == 0
          ? .arrival(arrival)
          : .departure(
            PlaceEvent.Departure(
              time: fixTime, placeID: "home", placeName: "Home", coordinate: arrival.coordinate,
              arrival: fixTime.addingTimeInterval(-60), reason: reason)))
    case 13:  // a visit
      server.publish(
        Stay(
          arrivalDate: fixTime.addingTimeInterval(-600), departureDate: fixTime,
          coordinate: Coordinate(latitude: 52, longitude: 13), horizontalAccuracy: 10,
          fixCount: 60),
        place: nil)
    case 14:  // the operator grants
      let level: GrantLevel = [.whenInUse, .always, .never][next() % 3]
      let accuracy: AccuracyAuthorization = next() % 2 == 0 ? .full : .reduced
      let clientID = peers[who].identity.clientID
      store.operatorSave(
        Grant(clientID: clientID, level: level, accuracy: accuracy, grantedAt: fixTime))
      if level != .never {
        record.decided[clientID, default: []].insert(
          Record.Level(level: level, accuracy: accuracy))
      }
      loop.refreshGrants(force: true)
    case 15:  // the operator revokes one, or resets all; "once" answers end too
      if next() % 4 == 0 {
        try? store.removeAll()
        record.once.removeAll()
      } else {
        let clientID = peers[who].identity.clientID
        _ = try? store.removeGrant(for: clientID)
        record.once[clientID] = nil
      }
      loop.refreshGrants(force: true)
    case 16:  // questions run out of time
      loop.expireQuestions(now: loop.clock.now + .seconds(7200))
    case 17:  // the switch
      let on = next() % 3 != 0
      servicesOn.withLock { $0 = on }
      record.servicesOn = on
      loop.refreshGrants(force: true)
    default:  // garbage
      var junk = ""
      for _ in 0..<(next() % 16) { junk.append(Character(UnicodeScalar(UInt8(next() % 94 + 32)))) }
      send(who, junk)
    }
    round()
    round()  // what the first round queued (a decision) is delivered by the second
    check()
  }
  // Leave nothing open for the next input.
  for peer in peers where peer.end >= 0 { close(peer.end) }
  for client in loop.clients.values { close(client.descriptor) }
  loop.clients.removeAll()
  server.loopEnded()
  return 0
}
