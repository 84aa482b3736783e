import Foundation
import Testing
import WaymarkClient
import WaymarkCore
import WaymarkTesting

/// docs/protocol.md, without its code blocks (a transcript line is no table).
private let specification: String = {
  let url = Products.packageRoot.appendingPathComponent("docs/protocol.md")
  let text = (try? String(contentsOf: url, encoding: .utf8)) ?? ""
  var prose: [Substring] = []
  var inCode = false
  for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
    if line.hasPrefix("```") {
      inCode.toggle()
    } else if !inCode {
      prose.append(line)
    }
  }
  return prose.joined(separator: "\n")
}()

/// The text of the section whose heading starts with `## <number>.`, up to the next one.
private func section(_ number: Int) -> String {
  guard let start = specification.range(of: "\n## \(number). ") else { return "" }
  let rest = specification[start.upperBound...]
  return String(rest[..<(rest.range(of: "\n## ")?.lowerBound ?? rest.endIndex)])
}

/// The names in backticks in `text` that can be members or classes (letters and `_` only).
private func names(in text: some StringProtocol) -> Set<String> {
  var found: Set<String> = []
  for (index, part) in text.split(separator: "`", omittingEmptySubsequences: false).enumerated()
  where index % 2 == 1 && !part.isEmpty && part.allSatisfy({ $0.isLetter || $0 == "_" }) {
    found.insert(String(part))
  }
  return found
}

/// The cells of a table's rows in `text` (`| a | b |` → `["a", "b"]`), separator rows left out.
private func rows(in text: String) -> [[String]] {
  text.split(separator: "\n").filter { $0.hasPrefix("|") && !$0.hasPrefix("|---") }.map {
    $0.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast().map {
      $0.trimmingCharacters(in: .whitespaces)
    }
  }
}

/// The members of one object line, with those of the objects nested in it (a `reason`, a
/// `MONITOR`'s conditions), `class` left out.
private func members(of line: some Collection<UInt8>) -> Set<String> {
  var reader = JSONReader(Array(line))
  guard let value = try? reader.value() else { return [] }
  var found: Set<String> = []
  func visit(_ value: JSONValue) {
    switch value {
    case .object(let pairs):
      for pair in pairs where pair.key != "class" {
        found.insert(pair.key)
        visit(pair.value)
      }
    case .array(let items): items.forEach(visit)
    default: break
    }
  }
  visit(value)
  return found
}

/// Words that section 6's paragraphs put in backticks as values, not as members.
private let documentedValues: Set<String> = [
  "full", "reduced", "true", "false", "null", "none", "whenInUse", "always", "never", "once",
  "inside", "outside", "satisfied", "unsatisfied", "unknown",
]

/// Every request a client writes, with every optional member set: what `DaemonRequest` says.
private let typedRequests: [String: Set<String>] = {
  let condition = DaemonRequest.MonitorCondition(
    identifier: "home", latitude: 52.52, longitude: 13.405, radiusMeters: 50,
    exitRadiusMeters: 80, confirmations: 3, dwellSeconds: 10, group: "g", overlap: "all",
    assume: "satisfied")
  let requests: [DaemonRequest] = [
    .watch(.init(reduced: true, distanceMeters: 25, events: true, visits: true)), .unwatch,
    .poll, .status, .request(level: .always),
    .session(.init(level: .always, fullAccuracy: true, purpose: "p")), .endSession,
    .agent(enable: true, scripted: true), .answer(id: 1, answer: .once(.full)),
    .monitor(name: "m", .add([condition])), .monitor(name: "m", .remove(["home"])),
    .monitor(name: "m", .delete), .monitor(name: "m", .events(after: 1)),
    .monitor(name: "m", .acknowledge(through: 1)),
  ]
  return requests.reduce(into: [:]) {
    $0[$1.className, default: []].formUnion(members(of: $1.line.closed))
  }
}()

/// Every message the daemon writes, with every optional member set: what `DaemonMessage` says
/// (a `VISIT` at a place with all its descriptive fields, as the daemon writes it).
private let typedMessages: [String: Set<String>] = {
  var samples = ProtocolSamples(seed: 37)
  var found: [String: Set<String>] = [:]
  for index in 0..<2000 {
    let message = samples.message(kind: index % 16)
    if case .unknown = message { continue }
    found[message.className, default: []].formUnion(members(of: message.line.dropLast()))
  }
  let place = PlaceSnapshot(
    name: "Home", coordinate: Coordinate(latitude: 1, longitude: 2), category: "c", subtitle: "s",
    address: "a", town: "t", url: "u", image: "i", detail: "d")
  let stay = Stay(
    arrivalDate: Date(timeIntervalSince1970: 0), departureDate: Date(timeIntervalSince1970: 60),
    observedDepartureDate: Date(timeIntervalSince1970: 30),
    coordinate: Coordinate(latitude: 1, longitude: 2), horizontalAccuracy: 3, fixCount: 4,
    placeID: "home", source: "waymarkd")
  found["VISIT", default: []].formUnion(
    members(of: stay.visitLine(place: place, source: stay.source).closed))
  return found
}()

/// docs/protocol.md's message tables against the typed values: every class and member the
/// document names exists in `DaemonRequest` or `DaemonMessage`, and every one they write is in
/// the document.
@Suite("Protocol document")
struct ProtocolDocTests {
  /// Section 5's table (and section 14's `op` table for `MONITOR`): classes and members.
  @Test func requestTableMatchesDaemonRequest() throws {
    var documented: [String: Set<String>] = [:]
    var current = ""
    for cells in rows(in: section(5)) where cells.count >= 2 && cells[0] != "class" {
      if !cells[0].isEmpty { current = try #require(names(in: cells[0]).first) }
      documented[current, default: []].formUnion(names(in: cells[1]))
    }
    // `MONITOR`'s members: `name`, `op` (section 5), each op's members and a condition's.
    let held = section(14)
    for cells in rows(in: held) where cells.count >= 2 && cells[0] != "`op`" {
      documented["MONITOR", default: []].formUnion(
        names(in: cells[1].split(separator: ":").first ?? ""))
    }
    let conditionText = try #require(held.range(of: "A condition object:"))
    let conditionEnd = try #require(
      held[conditionText.upperBound...].range(of: "`name`, `id` and `group` are"))
    documented["MONITOR", default: []].formUnion(
      names(in: held[conditionText.upperBound..<conditionEnd.lowerBound]).subtracting(
        documentedValues))
    // Positive control: the table was read.
    #expect(documented.count >= 8 && documented["WATCH"]?.contains("distance") == true)
    #expect(Set(documented.keys) == Set(typedRequests.keys))
    for (className, members) in typedRequests {
      #expect(documented[className] == members, "\(className)")
    }
  }

  /// Section 6's (and 14's) paragraph of each class, and the `TPV` table: every member a typed
  /// message writes is named there, and every name there is a member, a class or a value.
  @Test func messageParagraphsMatchDaemonMessage() throws {
    let text = section(6) + "\n\n" + section(14)
    // Each paragraph that starts with a class in bold: the classes it describes, the names in it.
    var paragraphs: [(classes: Set<String>, names: Set<String>)] = []
    for paragraph in text.components(separatedBy: "\n\n") where paragraph.hasPrefix("**`") {
      let classes = paragraph.components(separatedBy: "**`").dropFirst().compactMap {
        (part: String) -> String? in
        part.range(of: "`**").map { String(part[..<$0.lowerBound]) }
      }
      paragraphs.append((Set(classes), names(in: paragraph)))
    }
    // The `TPV` table's keys; `MONITOR`'s answers are in section 14's table and reading rules.
    let tpvKeys = rows(in: section(6)).compactMap(\.first).flatMap { names(in: $0) }
    paragraphs.append((["TPV"], Set(tpvKeys).subtracting(["class"])))
    paragraphs.append((["MONITOR"], names(in: section(14))))
    let classes = Set(typedMessages.keys)
    #expect(classes.count == 15, "\(classes.sorted())")
    for className in classes {
      let named = paragraphs.filter { $0.classes.contains(className) }.reduce(
        into: Set<String>()
      ) { $0.formUnion($1.names) }
      #expect(!named.isEmpty, "docs/protocol.md describes no \(className)")
      let written = typedMessages[className] ?? []
      #expect(written.isSubset(of: named), "\(className): \(written.subtracting(named).sorted())")
    }
    // The reverse: a name in a class's paragraph is a member one of its classes writes (or
    // nests), a class, or one of the values the paragraphs name. (Section 14 as a whole names
    // requests too: it is read one way only.)
    for paragraph in paragraphs.dropLast() {
      let members = paragraph.classes.reduce(into: Set<String>()) {
        $0.formUnion(typedMessages[$1] ?? [])
      }
      let unknown = paragraph.names.subtracting(members).subtracting(classes).subtracting(
        documentedValues)
      #expect(unknown.isEmpty, "\(paragraph.classes.sorted()): \(unknown.sorted())")
    }
    // Positive control: the paragraphs were found.
    #expect(paragraphs.count >= 14)
  }
}
