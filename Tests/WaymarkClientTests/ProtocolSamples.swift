import Foundation
import WaymarkClient
import WaymarkCore

/// Random messages of every class the daemon writes, drawn from a seeded generator, in the
/// form the wire keeps exactly: numbers at the decimals their member is written with, times in
/// whole milliseconds, strings of any scalars (quotes, controls, separators, emoji).
struct ProtocolSamples {
  var random: SeededGenerator

  init(seed: UInt64) { random = SeededGenerator(seed: seed) }

  mutating func int(_ range: ClosedRange<Int>) -> Int { Int.random(in: range, using: &random) }

  mutating func bool() -> Bool { Bool.random(using: &random) }

  mutating func maybe<T>(_ make: (inout Self) -> T) -> T? { bool() ? make(&self) : nil }

  /// A number with exactly `decimals` digits after the point, below `limit` in magnitude.
  mutating func fixed(_ decimals: Int, limit: Int, signed: Bool = false) -> Double {
    let scale = [
      1, 10, 100, 1000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000,
      1_000_000_000,
    ][decimals]
    let units = int((signed ? -limit * scale : 0)...(limit * scale))
    return Double(units) / Double(scale)
  }

  /// A time in whole milliseconds between 1970 and 2100.
  mutating func date() -> Date {
    Date(timeIntervalSince1970: Double(int(0...4_102_444_800_000)) / 1000)
  }

  private static let scalars: [Unicode.Scalar] = [
    "a", "Z", "0", " ", "\"", "\\", "/", ":", "\u{0}", "\u{1}", "\n", "\r", "\t", "\u{7F}",
    "\u{85}", "\u{9F}", "é", "ß", "\u{2028}", "\u{2029}", "\u{202E}", "\u{200B}", "\u{FEFF}",
    "中", "😀", "\u{10FFFF}",
  ]

  /// A string of 0 to 24 scalars, printable or not.
  mutating func string() -> String {
    var text = String.UnicodeScalarView()
    for _ in 0..<int(0...24) { text.append(Self.scalars[int(0...(Self.scalars.count - 1))]) }
    return String(text)
  }

  mutating func state() -> AuthorizationState {
    AuthorizationState(
      status: AuthorizationStatus.allCases.randomElement(using: &random)!,
      accuracy: AccuracyAuthorization.allCases.randomElement(using: &random)!)
  }

  mutating func coordinate(decimals: Int) -> Coordinate {
    Coordinate(
      latitude: fixed(decimals, limit: 89, signed: true),
      longitude: fixed(decimals, limit: 179, signed: true))
  }

  /// One message of the class numbered `kind` (0 to 15, every class once).
  mutating func message(kind: Int) -> DaemonMessage {
    switch kind {
    case 0:
      return .version(
        .init(release: string(), protocolMajor: int(0...99), protocolMinor: int(0...99_999)))
    case 1:
      return .authorization(.init(clientID: string(), state: state()))
    case 2:
      guard bool() else { return .watch(.init(enabled: false)) }
      return .watch(
        .init(
          enabled: true, accuracy: AccuracyAuthorization.allCases.randomElement(using: &random),
          distanceMeters: maybe { $0.fixed(1, limit: 100_000) }.flatMap { $0 > 0 ? $0 : nil },
          events: bool(), visits: bool()))
    case 3:
      return .agent(enabled: bool())
    case 4:
      return .status(
        .init(
          release: string(), clients: int(0...100_000), watchers: int(0...100_000),
          nmeaClients: int(0...100_000), lastFix: maybe { $0.date() }))
    case 5:
      return .location(fix())
    case 6:
      return .placeEvent(placeEvent())
    case 7:
      return .visit(stay())
    case 8:
      guard bool() else { return .session(.ended) }
      return .session(
        .init(
          authorization: ["none", "whenInUse", "always"][int(0...2)], fullAccuracy: bool(),
          state: state(), servicesEnabled: bool(), requestInProgress: bool()))
    case 9:
      if bool() {
        return .heldMonitor(
          .init(name: string(), operation: string(), conditionCount: int(0...64)))
      }
      return .heldMonitor(
        .init(
          name: string(), operation: "events", last: int(0...1 << 52), lost: int(0...1000),
          more: bool(), next: int(1...1 << 52)))
    case 10:
      return .heldMonitorEvent(
        .init(
          name: string(), sequence: int(1...1 << 52), identifier: string(),
          isSatisfied: bool(), date: date()))
    case 11:
      return .ask(
        .init(
          id: int(1...999_999_999_999_999), clientID: string(), processID: int(1...4_194_304),
          level: [GrantLevel.whenInUse, .always][int(0...1)], purpose: maybe { $0.string() }))
    case 12:
      return .decided(
        .init(
          id: int(1...999_999_999_999_999), clientID: string(),
          grant: DaemonMessage.Decided.Outcome.allCases.randomElement(using: &random)!,
          recorded: bool(), reason: maybe { $0.string() }))
    case 13:
      return .error(message: string())
    case 14:
      let name = "LATER_" + String(int(0...999))
      var line = JSONLine(class: name)
      line.add("text", string())
      line.add("count", int(-1000...1000))
      return .unknown(class: name, raw: line.string)
    default:
      return .placeEvent(placeEvent())
    }
  }

  /// A usable fix with every member the `TPV` writes set or not.
  mutating func fix() -> Fix {
    let mode: FixMode = bool() ? .threeDimensional : .twoDimensional
    return Fix(
      time: date(), mode: mode,
      status: [FixStatus.gps, .dgps, .rtkFixed, .rtkFloat, .deadReckoning][int(0...4)],
      coordinate: coordinate(decimals: 9), altitudeMSL: maybe { $0.fixed(3, limit: 9000) },
      geoidSeparation: maybe { $0.fixed(3, limit: 100, signed: true) },
      speed: maybe { $0.fixed(3, limit: 500) }, track: maybe { $0.fixed(4, limit: 359) },
      climb: maybe { $0.fixed(3, limit: 50, signed: true) },
      horizontalError: maybe { $0.fixed(3, limit: 10_000) },
      verticalError: maybe { $0.fixed(3, limit: 10_000) })
  }

  mutating func placeEvent() -> PlaceEvent {
    let reason = EventReason(
      rule: ["inside", "outside", "pass-through"][int(0...2)],
      distanceMeters: fixed(1, limit: 100_000),
      horizontalAccuracyMeters: maybe { $0.fixed(1, limit: 5000) },
      enterRadiusMeters: fixed(1, limit: 100_000), exitRadiusMeters: fixed(1, limit: 200_000),
      confirmations: int(1...100), dwellSeconds: fixed(3, limit: 86_400))
    let timeMilliseconds = int(86_400_000...4_102_444_800_000)
    let time = Date(timeIntervalSince1970: Double(timeMilliseconds) / 1000)
    guard bool() else {
      return .arrival(
        .init(
          time: time, placeID: string(), placeName: string(), coordinate: coordinate(decimals: 9),
          reason: reason))
    }
    return .departure(
      .init(
        time: time, placeID: string(), placeName: string(), coordinate: coordinate(decimals: 9),
        arrival: Date(timeIntervalSince1970: Double(timeMilliseconds - int(0...86_400_000)) / 1000),
        reason: reason))
  }

  mutating func stay() -> Stay {
    let arrival = date()
    let departure = maybe { $0.date() }
    return Stay(
      arrivalDate: arrival, departureDate: departure,
      observedDepartureDate: departure == nil ? nil : maybe { $0.date() },
      coordinate: coordinate(decimals: 7), horizontalAccuracy: fixed(1, limit: 1000),
      fixCount: int(1...100_000), placeID: maybe { $0.string() }, source: "waymarkd")
  }
}
