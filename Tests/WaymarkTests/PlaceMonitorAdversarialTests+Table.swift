import Foundation
import Testing
import Waymark
import WaymarkTesting

/// The README's table of adversarial drives ("| scenario | bound | worst error | the rules
/// before these |"): each row's bound is the one its test asserts, its worst errors and control
/// counts are measured here over the row's seeds, and the table in the documentation must be
/// this one, line for line. `Scripts/adversarial-table.sh` prints it (this test writes it to
/// the file `WAYMARK_ADVERSARIAL_TABLE` names).
extension PlaceMonitorAdversarialTests {
  /// One scenario of the table.
  struct Row: Sendable {
    /// The scenario, as the table names it.
    var title: String
    var seeds: [UInt64]
    /// The largest arrival or departure error the scenario's test accepts, seconds.
    var bound: Double
    var build: @Sendable (UInt64) -> AdversarialScenario
    /// Places whose errors the table gives apart (label, place id, a note after the figures);
    /// empty: every real place together.
    var parts: [Part] = []
    /// Whether the table counts the false arrivals of the rules before these (`unguarded`).
    var countsControl = true

    struct Part: Sendable {
      var label: String
      var placeID: String
      var note: String = ""
    }
  }

  /// The table's rows, in its order. Each bound is about twice the worst error the scenario
  /// measured over its seeds (the figures in the comments; the table prints them), and never
  /// more than the 3 s (5 s under heavy noise) asserted before the measurement.
  enum Rows {
    /// Worst 0.85 / 0.95 s.
    static let multipath = Row(
      title: "multipath bursts (5–15 s, 150–250 m off, reported 30–40 m) beside places",
      seeds: [1, 2, 3, 4, 5], bound: 2, build: { PlaceMonitorAdversarialTests.multipath(seed: $0) })
    /// Worst 1.10 / 1.05 s.
    static let jumps = Row(
      title: "single jumps whose segment crosses a place, 1 Hz",
      seeds: [11, 12, 13, 14, 15], bound: 2.2,
      build: { PlaceMonitorAdversarialTests.jumps(seed: $0) })
    /// Worst 0.17 / 0.10 s.
    static let sparse = Row(
      title: "single jumps at a fix every 8 s, with a real pass-through",
      seeds: [51, 52, 53, 54, 55], bound: 0.35,
      build: { PlaceMonitorAdversarialTests.sparse(seed: $0) })
    /// Worst 2.15 / 1.85 s: 3 s (1.4 times) is kept.
    static let urban = Row(
      title: "urban noise, accuracy 15–25 m, noise half of it per axis",
      seeds: [21, 22, 23, 24, 25], bound: 3,
      build: { PlaceMonitorAdversarialTests.urban(seed: $0, noisePerAccuracy: 0.5) },
      countsControl: false)
    /// Worst 2.15 / 3.75 s: 5 s (1.3 times) is kept.
    static let heavyNoise = Row(
      title: "urban noise as large as the accuracy",
      seeds: [21, 22, 23, 24, 25], bound: 5,
      build: { PlaceMonitorAdversarialTests.urban(seed: $0, noisePerAccuracy: 1) },
      countsControl: false)
    /// Worst 1.85 s (the car park's departure): 3 s (1.6 times) is kept.
    static let carPark = Row(
      title: "underground car park, 3–6 min without fixes",
      seeds: [31, 32, 33, 34, 35], bound: 3,
      build: { PlaceMonitorAdversarialTests.carPark(seed: $0) },
      parts: [
        .init(label: "car park", placeID: "car-park", note: " (`fix-loss`)"),
        .init(label: "next place", placeID: "office"),
      ],
      countsControl: false)
    /// Worst 0.15 / 0.15 s.
    static let tenHertz = Row(
      title: "10 Hz at 130 km/h past and through small places",
      seeds: [41, 42, 43, 44, 45], bound: 0.3,
      build: { PlaceMonitorAdversarialTests.tenHertz(seed: $0) })

    static let all = [multipath, jumps, sparse, urban, heavyNoise, carPark, tenHertz]
  }

  static let tableHeader = "| scenario | bound | worst error | the rules before these |"

  /// The table as the scenarios measure it: header, rule and a line per row.
  static func measuredTable() -> String {
    var lines = [tableHeader, "|---|---|---|---|"]
    for row in Rows.all {
      var worst: [String: AdversarialScenario.Errors] = [:]
      var together = AdversarialScenario.Errors()
      var falseArrivals: [Int] = []
      var allPassThroughs = true
      for seed in row.seeds {
        let scenario = row.build(seed)
        for (id, errors) in scenario.measure() {
          worst[id, default: .init()].widen(errors)
          together.widen(errors)
        }
        guard row.countsControl else { continue }
        let fooled = scenario.falseArrivalEvents(configuration: unguarded)
        falseArrivals.append(fooled.count)
        allPassThroughs = allPassThroughs && fooled.allSatisfy { $0.reason.rule == "pass-through" }
      }
      let errors =
        row.parts.isEmpty
        ? figures(together)
        : row.parts.map { "\($0.label) \(figures(worst[$0.placeID] ?? .init()))\($0.note)" }
          .joined(separator: ", ")
      let control = row.countsControl ? controlText(falseArrivals, allPassThroughs) : "—"
      lines.append("| \(row.title) | \(seconds(row.bound)) s | \(errors) | \(control) |")
    }
    return lines.joined(separator: "\n")
  }

  /// "0.85 / 0.95 s": the worst arrival and departure errors.
  static func figures(_ errors: AdversarialScenario.Errors) -> String {
    String(format: "%.2f / %.2f s", errors.arrival, errors.departure)
  }

  /// A bound without a trailing ".0".
  static func seconds(_ value: Double) -> String {
    value == value.rounded() ? String(Int(value)) : String(value)
  }

  /// "7 false arrivals per seed", "1–3 false pass-throughs per seed".
  static func controlText(_ counts: [Int], _ allPassThroughs: Bool) -> String {
    let low = counts.min() ?? 0
    let high = counts.max() ?? 0
    let noun = allPassThroughs ? "pass-through" : "arrival"
    let number = low == high ? "\(low)" : "\(low)–\(high)"
    return "\(number) false \(noun)\(high == 1 ? "" : "s") per seed"
  }

  /// The table in the documentation: the lines from its header to the first line that is not
  /// a table line, in README.md or a Markdown file under docs/.
  static func documentedTable() throws -> (file: String, table: String)? {
    let root = Products.packageRoot
    var files = ["README.md"]
    let docs = root.appendingPathComponent("docs")
    if let walker = FileManager.default.enumerator(atPath: docs.path) {
      for case let path as String in walker where path.hasSuffix(".md") {
        files.append("docs/" + path)
      }
    }
    for file in files {
      let text = try String(
        contentsOf: root.appendingPathComponent(file), encoding: .utf8)
      let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
      guard let start = lines.firstIndex(where: { $0 == tableHeader }) else { continue }
      let table = lines[start...].prefix { $0.hasPrefix("|") }
      return (file, table.joined(separator: "\n"))
    }
    return nil
  }

  @Test func readmeTableIsWhatTheScenariosMeasure() throws {
    let measured = Self.measuredTable()
    if let path = ProcessInfo.processInfo.environment["WAYMARK_ADVERSARIAL_TABLE"] {
      try measured.write(toFile: path, atomically: true, encoding: .utf8)
    }
    let documented = try #require(try Self.documentedTable(), "no adversarial table in the docs")
    #expect(
      documented.table == measured,
      "\(documented.file) says:\n\(documented.table)\n\nthe scenarios measure:\n\(measured)")
  }
}
