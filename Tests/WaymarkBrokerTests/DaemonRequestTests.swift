import Foundation
import Testing
import Waymark
import WaymarkCore

@testable import WaymarkBroker

/// The requests clients write (`DaemonRequest.line`) read by the daemon's decoder
/// (`DaemonRequest.decode`): random values of every class, with a fixed seed, arrive as the
/// request they mean.
@Suite("Client requests through the daemon's decoder")
struct DaemonRequestTests {
  private struct Draw {
    var random = SeededGenerator(seed: 0x5E55)

    mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }
    mutating func bool() -> Bool { Bool.random(using: &random) }
    mutating func fixed(_ decimals: Int, _ range: ClosedRange<Int>) -> Double {
      let scale = [
        1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
        1_000_000_000,
      ][decimals]
      return Double(int((range.lowerBound * scale)...(range.upperBound * scale))) / Double(scale)
    }
    /// A name a held monitor accepts: 1 to 64 bytes, letters, digits and a few marks.
    mutating func name() -> String {
      let letters = Array("abcXYZ019-_.éß中")
      return String((0..<int(1...16)).map { _ in letters[int(0...(letters.count - 1))] })
    }
  }

  /// One request, what the daemon must read from it, and the held monitor's conditions an
  /// `add` stands for (empty for the other requests).
  private static func pair(_ draw: inout Draw) -> (
    DaemonRequest, DaemonRequest, [HeldMonitor.Condition]
  ) {
    switch draw.int(0...10) {
    case 0:
      let distance = draw.bool() ? draw.fixed(1, 0...100_000) : nil
      let watch = DaemonRequest.Watch(
        reduced: draw.bool(), distanceMeters: distance, events: draw.bool(), visits: draw.bool())
      var read = watch
      // A zero distance is no filter.
      if distance == 0 { read.distanceMeters = nil }
      return (.watch(watch), .watch(read), [])
    case 1: return (.unwatch, .unwatch, [])
    case 2: return (.poll, .poll, [])
    case 3: return (.status, .status, [])
    case 4:
      let level: GrantLevel = draw.bool() ? .always : .whenInUse
      return (.request(level: level), .request(level: level), [])
    case 5:
      let authorization = ["none", "whenInUse", "always"][draw.int(0...2)]
      let full = draw.bool()
      let purpose = draw.bool() ? String(repeating: draw.name(), count: draw.int(1...20)) : nil
      let level = GrantLevel(rawValue: authorization)
      // The daemon keeps 200 scalars of a purpose.
      return (
        .session(.init(level: level, fullAccuracy: full, purpose: purpose)),
        .session(
          .init(
            level: level, fullAccuracy: full, purpose: purpose.map { LogText.bounded($0, to: 200) }
          )), []
      )
    case 6: return (.endSession, .endSession, [])
    case 7:
      let enable = draw.bool()
      let scripted = draw.bool()
      return (
        .agent(enable: enable, scripted: scripted), .agent(enable: enable, scripted: scripted), []
      )
    case 8:
      let id = draw.int(0...999_999_999_999_999)
      let grant = ["once", "whenInUse", "always", "never"][draw.int(0...3)]
      let accuracy: AccuracyAuthorization = draw.bool() ? .full : .reduced
      let written: DaemonRequest.AgentAnswer =
        grant == "once" ? .once(accuracy) : .grant(GrantLevel(rawValue: grant)!, accuracy)
      // `never` reads with full accuracy, whatever was written.
      let answer: DaemonRequest.AgentAnswer =
        grant == "never" ? .grant(.never, .full) : written
      return (.answer(id: id, answer: written), .answer(id: id, answer: answer), [])
    case 9:
      let name = draw.name()
      var conditions: [DaemonRequest.MonitorCondition] = []
      var expected: [HeldMonitor.Condition] = []
      for _ in 0..<draw.int(1...12) {
        // Whole thousandths, as the line carries them (a sum of two would not be).
        let radiusUnits = draw.int(1...100_000_000)
        let radius = Double(radiusUnits) / 1000
        let condition = DaemonRequest.MonitorCondition(
          identifier: draw.name(), latitude: draw.fixed(9, -90...90),
          longitude: draw.fixed(9, -180...180), radiusMeters: radius,
          exitRadiusMeters: draw.bool()
            ? Double(radiusUnits + draw.int(0...1_000_000)) / 1000 : nil,
          confirmations: draw.bool() ? draw.int(1...100) : nil,
          dwellSeconds: draw.bool() ? draw.fixed(3, 0...86_400) : nil,
          group: draw.bool() ? draw.name() : nil,
          overlap: draw.bool() ? ["all", "nearest"][draw.int(0...1)] : nil,
          assume: ["unknown", "satisfied", "unsatisfied"][draw.int(0...2)])
        conditions.append(condition)
        expected.append(
          HeldMonitor.Condition(
            identifier: condition.identifier,
            circle: Monitor.CircularGeographicCondition(
              center: Coordinate(latitude: condition.latitude, longitude: condition.longitude),
              radius: radius, exitRadius: condition.exitRadiusMeters,
              confirmations: condition.confirmations, dwellSeconds: condition.dwellSeconds,
              group: condition.group, overlap: condition.overlap.flatMap(PlaceOverlap.init)),
            assumed: Monitor.Event.State(rawValue: condition.assume)!))
      }
      return (
        .monitor(name: name, .add(conditions)), .monitor(name: name, .add(conditions)), expected
      )
    default:
      let name = draw.name()
      let sequence = draw.int(0...(1 << 52))
      switch draw.int(0...3) {
      case 0:
        let ids = (0..<draw.int(1...64)).map { _ in draw.name() }
        return (.monitor(name: name, .remove(ids)), .monitor(name: name, .remove(ids)), [])
      case 1: return (.monitor(name: name, .delete), .monitor(name: name, .delete), [])
      case 2:
        return (
          .monitor(name: name, .events(after: sequence)),
          .monitor(name: name, .events(after: sequence)), []
        )
      default:
        return (
          .monitor(name: name, .acknowledge(through: sequence)),
          .monitor(name: name, .acknowledge(through: sequence)), []
        )
      }
    }
  }

  /// 20,000 requests: each line fits the daemon's limit and parses as the request it means.
  @Test func everyRequestReadsAsWhatItMeans() throws {
    var draw = Draw()
    var classes: Set<String> = []
    for _ in 0..<20_000 {
      let (request, expected, held) = Self.pair(&draw)
      let line = request.line.closed
      classes.insert(request.className)
      #expect(line.count <= DaemonRequest.maximumLineLength || request.className == "MONITOR")
      guard line.count <= DaemonRequest.maximumLineLength else { continue }
      let parsed = DaemonRequest.decode(line)
      #expect(parsed == .success(expected), "\(String(decoding: line, as: UTF8.self))")
      if case .success(.monitor(_, .add(let conditions))) = parsed {
        #expect(conditions.map(HeldMonitor.Condition.init) == held)
      }
    }
    #expect(classes.count == 8, "\(classes.sorted())")
  }

  /// The bytes of the protocol's examples: what the clients wrote as literals before.
  @Test func bytesAreTheProtocolsOwn() {
    let cases: [(DaemonRequest, String)] = [
      (.watch(.init()), #"{"class":"WATCH","enable":true}"#),
      (.unwatch, #"{"class":"WATCH","enable":false}"#),
      (
        .watch(.init(events: true, visits: true)),
        #"{"class":"WATCH","enable":true,"events":true,"visits":true}"#
      ),
      (.poll, #"{"class":"POLL"}"#),
      (.status, #"{"class":"STATUS"}"#),
      (.request(level: .whenInUse), #"{"class":"REQUEST","level":"whenInUse"}"#),
      (.agent(enable: true, scripted: false), #"{"class":"AGENT","enable":true,"scripted":false}"#),
      (
        .answer(id: 1, answer: .grant(.whenInUse, .full)),
        #"{"class":"ANSWER","id":1,"grant":"whenInUse","accuracy":"full"}"#
      ),
      (
        .monitor(name: "trips", .acknowledge(through: 2)),
        #"{"class":"MONITOR","name":"trips","op":"ack","sequence":2}"#
      ),
    ]
    for (request, text) in cases {
      #expect(request.line.string == text)
    }
    // Negative control: a member set is written.
    #expect(DaemonRequest.watch(.init(reduced: true)).line.string != cases[0].1)
  }
}
