import Foundation
import Testing
import WaymarkTesting

/// The porting table (docs/guide/porting.md, and the same table in the DocC article "Porting
/// from CoreLocation"): every CoreLocation symbol of its first column must compile against
/// `WaymarkCoreLocation`, and the two copies must be the same.
@Suite(.enabled(if: CoreLocationProgram.isBuilt, "WaymarkCoreLocation is not built"))
struct PortingTableTests {
  static let guide = "docs/guide/porting.md"
  static let article = "Sources/Waymark/Waymark.docc/PortingFromCoreLocation.md"

  /// The rows of the table that starts with the `| CoreLocation (iOS 18) |` header in `path`.
  static func table(_ path: String) throws -> [String] {
    let text = try String(
      contentsOf: Products.packageRoot.appendingPathComponent(path), encoding: .utf8)
    let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    guard let header = lines.firstIndex(where: { $0.hasPrefix("| CoreLocation (iOS 18) |") })
    else { return [] }
    return Array(lines[header...].prefix { $0.hasPrefix("|") })
  }

  /// The symbols of the table's first column (a row of a group's title has none).
  static func symbols(_ rows: [String]) -> [String] {
    rows.dropFirst(2).compactMap { row in
      let cells = row.split(separator: "|", omittingEmptySubsequences: false)
      guard cells.count > 1 else { return nil }
      let cell = cells[1].trimmingCharacters(in: .whitespaces)
      guard cell.hasPrefix("`"), cell.hasSuffix("`"), cell.count > 2 else { return nil }
      return String(cell.dropFirst().dropLast())
    }
  }

  /// The ways to refer to `symbol` that compile when it exists, tried in order: a type, a
  /// protocol, a value; a member as an unapplied reference, an instance's, the type's, a
  /// protocol value's; a function called with an argument of every type (`x()`), so that
  /// overloads and actors do not matter.
  static func forms(of symbol: String) -> [(parameter: String?, statement: String)] {
    if let form = explicitForms[symbol] { return [form] }
    let openParen = symbol.firstIndex(of: "(") ?? symbol.endIndex
    guard let dot = symbol[..<openParen].lastIndex(of: ".") else {
      if symbol.contains("(") {
        return [(nil, "_ = \(symbol)")]
      }
      return [
        (nil, "let _: \(symbol).Type = \(symbol).self"),
        (nil, "let _: (any \(symbol)).Type = (any \(symbol)).self"), (nil, "_ = \(symbol)"),
      ]
    }
    let owner = String(symbol[..<dot])
    let member = String(symbol[symbol.index(after: dot)...])
    guard let paren = member.firstIndex(of: "(") else {
      if member.first?.isUppercase == true {
        return [
          (nil, "let _: \(symbol).Type = \(symbol).self"),
          (nil, "let _: (any \(symbol)).Type = (any \(symbol)).self"),
        ]
      }
      return [
        (owner, "_ = await v.\(member)"), (nil, "_ = \(symbol)"),
        ("any \(owner)", "_ = await v.\(member)"),
      ]
    }
    let name = String(member[..<paren])
    let labels = member[member.index(after: paren)...].dropLast().split(separator: ":")
      .map(String.init)
    let arguments = labels.map { $0 == "_" ? "x()" : "\($0): x()" }.joined(separator: ", ")
    if name == "init" {
      return [(nil, "_ = \(owner)(\(arguments))"), (nil, "_ = \(symbol)")]
    }
    let call = "\(name)(\(arguments))"
    return [
      (nil, "_ = \(symbol)"), (owner, "_ = try? await v.\(call)"),
      (nil, "_ = try? await \(owner).\(call)"), ("any \(owner)", "_ = try? await v.\(call)"),
    ]
  }

  /// Members whose parameter is generic (`some CLCondition`): no placeholder argument can
  /// stand for it, so the probe passes a condition.
  static let explicitForms: [String: (parameter: String?, statement: String)] = [
    "CLMonitor.add(_:identifier:assuming:)": (
      "CLMonitor",
      "await v.add(CLMonitor.CircularGeographicCondition(center: x(), radius: 1), identifier: x(), assuming: x())"
    ),
    "CLMonitor.add(_:identifier:)": (
      "CLMonitor",
      "await v.add(CLMonitor.CircularGeographicCondition(center: x(), radius: 1), identifier: x())"
    ),
  ]

  /// Type-checks one probe function per symbol; returns the symbols whose probe failed.
  static func failing(
    _ probes: [(symbol: String, parameter: String?, statement: String)], in directory: URL
  ) throws -> Set<String> {
    var source = "import WaymarkCoreLocation\n\nfunc x<T>() -> T { fatalError() }\n"
    var lineOf: [Int: String] = [:]
    for (index, probe) in probes.enumerated() {
      let parameter = probe.parameter.map { "_ v: \($0)" } ?? ""
      source += "\n"
      // The probe's three lines: its declaration (an unknown parameter type fails there), its
      // statement and its end.
      let first = source.split(separator: "\n", omittingEmptySubsequences: false).count
      for line in first..<first + 3 { lineOf[line] = probe.symbol }
      source += "@MainActor func probe\(index)(\(parameter)) async {\n"
      source += "  \(probe.statement)\n}\n"
    }
    let file = directory.appendingPathComponent("probes.swift")
    try Data(source.utf8).write(to: file)
    let run = try CommandRun.run(
      "/usr/bin/env",
      [
        "swiftc", "-typecheck", "-swift-version", "6", "-module-cache-path",
        directory.appendingPathComponent("module-cache").path, "-I",
        Products.buildDirectory.appendingPathComponent("Modules").path, "-I",
        Products.packageRoot.appendingPathComponent("Sources/CGPS").path, file.path,
      ], timeout: .seconds(600))
    var failed: Set<String> = []
    for line in run.stderr.split(separator: "\n") where line.contains(": error:") {
      let parts = line.split(separator: ":")
      guard parts.count > 2, parts[0].hasSuffix("probes.swift"), let number = Int(parts[1])
      else { continue }
      if let symbol = lineOf[number] { failed.insert(symbol) }
    }
    #expect(
      run.status == 0 || !failed.isEmpty,
      "the probes failed outside any probe:\n\(run.stderr.prefix(3000))")
    return failed
  }

  @Test func theGuideAndTheDocCArticleHaveTheSameTable() throws {
    let guide = try Self.table(Self.guide)
    #expect(guide.count > 300, "\(Self.guide): \(guide.count) rows")
    #expect(try Self.table(Self.article) == guide)
  }

  @Test func everySymbolOfTheTableCompilesWithWaymarkCoreLocation() throws {
    let symbols = Self.symbols(try Self.table(Self.guide))
    // The table covers CoreLocation's types (a sample of each group).
    for type in [
      "CLLocationManager", "CLLocationManagerDelegate", "CLLocation", "CLMonitor",
      "CLLocationUpdate", "CLServiceSession", "CLBackgroundActivitySession", "CLGeocoder",
      "CLPlacemark", "CLBeaconRegion", "CLHeading", "CLError", "CLVisit", "CLCircularRegion",
    ] {
      #expect(symbols.contains(type), "\(type) is not in the table")
    }
    #expect(Set(symbols).count == symbols.count, "a symbol is listed twice")
    // Controls: symbols CoreLocation does not have must fail every form.
    let controls = [
      "CLNotAType", "CLLocationManager.startTeleporting()", "CLLocation.warpFactor",
      "CLGeocoder.geocodeMood(_:completionHandler:)",
    ]
    let scratch = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-porting-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: scratch) }

    var pending = symbols + controls
    var attempt = 0
    while !pending.isEmpty {
      let probes = pending.compactMap { symbol in
        let forms = Self.forms(of: symbol)
        return attempt < forms.count
          ? (symbol, forms[attempt].parameter, forms[attempt].statement) : nil
      }
      guard !probes.isEmpty else { break }
      let failed = try Self.failing(probes, in: scratch)
      pending = pending.filter { failed.contains($0) || Self.forms(of: $0).count <= attempt }
      attempt += 1
    }
    #expect(Set(pending) == Set(controls), "symbols of the table that do not compile: \(pending)")
  }
}
