import Foundation
import Testing
import WaymarkTesting

/// docs/architecture.md is true of `Sources/`: every type it names in a code span is declared
/// in the module it says (a `struct`, `class`, `enum`, `actor`, `protocol` or `typealias` of that
/// name in `Sources/<Module>/`), every thread it names is a name the code gives a thread, and
/// every module it names is a directory of `Sources/`. And the package's API is `public` only in
/// what an application imports: a module that is no library product (nor re-exported by one)
/// declares its API `package`.
///
/// Where the document says a type lives:
/// - "`T` (module `M`)" and "`T`, module `M`", anywhere;
/// - "in `M`, `T` and `U`", up to the next `;` or `)`;
/// - the table *Where each concept lives*: each type of the *type* cell that is not inside
///   parentheses or after a colon (those are remarks) lives in one of the *module* cell's
///   modules;
/// - the table *Modules*: each type of a row lives in the row's module, or in a module that one
///   imports (a row says what its module is built from, `LocationManager` for the pipeline).
///
/// Every other type-like code span must be declared somewhere in `Sources/`, or be a module, a
/// test suite of `Tests/`, a source file (`BrokerLoop+Agents`), or one of ``externalNames``. A
/// member (`StorePath.resolve(option:environment:for:)`) must be declared too (a `func`, `var`,
/// `let` or `case` of that name) where the type is.
///
/// The diagram (the code block) names types without code spans: each capitalized name with a
/// second capital (`GPSDReader`, `PipelineInbox.push`) must be declared somewhere in `Sources/`.
///
/// The threads: the first column of the table *Threads and tasks* (a row that says "(a
/// process)" names an executable target instead), `[thread x]` and `: thread x` in the diagram,
/// and a lowercase code span right after the word "thread" or before "thread(s)" in the text.
/// The names the code gives threads are the literals of `DetachedThread.start(name:)` and of
/// `threadName:` arguments and defaults; an interpolation in one (`replay-job-\(worker)`)
/// matches any text (`replay-job-k`).
@Suite struct ArchitectureDocTests {
  /// Names the document uses that are not the package's (the standard library's, Foundation's,
  /// GeoClue): nothing to check them against.
  static let externalNames: Set<String> = [
    "AsyncStream", "FoundationEssentials", "GeoClue", "NSLock", "NotificationCenter", "Process",
    "String",
  ]

  /// A type the document names, with where it says the type lives.
  struct TypeClaim: Hashable, CustomStringConvertible {
    /// The code span as written: `GPSDReader`, `DaemonRuntime.run()`, `BrokerLoop+Agents`.
    var span: String
    /// The modules, one of which declares it; empty: anywhere in `Sources/`.
    var modules: [String]
    /// Whether a module that one of `modules` imports may declare it instead.
    var orImported = false
    /// The document's line.
    var line: Int

    var description: String {
      let place =
        modules.isEmpty
        ? "in Sources"
        : "in \(modules.joined(separator: " or "))\(orImported ? " or its imports" : "")"
      return "line \(line): `\(span)` \(place)"
    }
  }

  /// A thread the document names.
  struct ThreadClaim: Hashable, CustomStringConvertible {
    /// The thread's name, `waymark-broker`.
    var name: String
    /// Whether the document says it is a process, not a thread.
    var isProcess = false
    /// The document's line.
    var line: Int

    var description: String { "line \(line): \(isProcess ? "process" : "thread") `\(name)`" }
  }

  /// What the document claims.
  struct Claims {
    var types: [TypeClaim] = []
    var threads: [ThreadClaim] = []
    /// The tables found, by their first header cell.
    var tables: Set<String> = []
  }

  /// What `Sources/` and `Tests/` declare.
  struct SourceIndex {
    /// The modules: the directories of `Sources/`.
    var modules: Set<String> = []
    /// Type name → the modules that declare a type of that name.
    var types: [String: Set<String>] = [:]
    /// Member name (`func`, `var`, `let`, `case`) → the modules that declare one.
    var members: [String: Set<String>] = [:]
    /// Source file name without `.swift` → its modules.
    var files: [String: Set<String>] = [:]
    /// Module → the modules its files import (and those re-export).
    var imports: [String: Set<String>] = [:]
    /// The names given to threads, each split at its interpolations.
    var threadNames: [[String]] = []
    /// The types declared in `Tests/` (test suites).
    var testTypes: Set<String> = []
    /// The names of the package's products and targets (`waymark-bench`, `waymark-identify`).
    var productNames: Set<String> = []
  }

  // MARK: - Reading the document

  /// A type, `Type`, with a file suffix (`Type+Agents`), members (`Type.member`) and arguments.
  static func typeLike() throws -> Regex<AnyRegexOutput> {
    try Regex(
      #"^([A-Z][A-Za-z0-9]*)(\+[A-Z][A-Za-z0-9]*)?((?:\.[A-Za-z_][A-Za-z0-9_]*)*)(\(.*\))?$"#)
  }

  /// A thread's name: lowercase words joined by hyphens.
  static func isThreadLike(_ span: String) -> Bool {
    (try? Regex(#"^[a-z][a-z0-9]*(-[a-z0-9]+)*$"#).wholeMatch(in: span)) != nil
  }

  /// Whether a span is checked only for existing somewhere, wherever it stands: a module, a
  /// test suite, a name from outside the package.
  static func isLoose(_ span: String, modules: Set<String>) -> Bool {
    modules.contains(span) || span.hasSuffix("Tests") || externalNames.contains(span)
  }

  /// The code spans of `text`, each with whether it stands outside parentheses and before the
  /// first colon (a remark starts at either).
  static func spans(_ text: Substring) -> [(span: String, leading: Bool)] {
    var found: [(span: String, leading: Bool)] = []
    var depth = 0
    var afterColon = false
    var current: String?
    var previous: Character = " "
    for character in text {
      if var span = current {
        if character == "`" {
          found.append((span, depth == 0 && !afterColon))
          current = nil
        } else {
          span.append(character)
          current = span
        }
      } else if character == "`" {
        current = ""
      } else if character == "(" {
        depth += 1
      } else if character == ")" {
        depth = max(0, depth - 1)
      } else if character == " ", previous == ":", depth == 0 {
        afterColon = true
      }
      previous = character
    }
    return found
  }

  /// The cells of a table row, `| a | b |`.
  static func cells(_ row: Substring) -> [Substring] {
    var trimmed = row.drop { $0 == " " }
    if trimmed.hasPrefix("|") { trimmed = trimmed.dropFirst() }
    if trimmed.hasSuffix("|") { trimmed = trimmed.dropLast() }
    return trimmed.split(separator: "|", omittingEmptySubsequences: false).map {
      $0.trimmingCharacters(in: .whitespaces)[...]
    }
  }

  /// A piece of the document read as one: a paragraph (its lines joined), a table row, or a
  /// line of a code block.
  struct Unit {
    enum Kind { case paragraph, tableRow, code }
    var kind: Kind
    var text: String
    /// The line the unit starts on.
    var line: Int
    /// The first cell of the table's header, for a table row (the header included).
    var table: String = ""
    /// Whether the unit is the header row of its table.
    var isHeader = false
  }

  /// The document's paragraphs, table rows and code lines, in order.
  static func units(of document: String) -> [Unit] {
    var units: [Unit] = []
    var paragraph: Unit?
    var inCode = false
    var table = ""
    var previousIsTable = false
    func endParagraph() {
      if let done = paragraph { units.append(done) }
      paragraph = nil
    }
    for (index, line) in document.split(separator: "\n", omittingEmptySubsequences: false)
      .enumerated()
    {
      let number = index + 1
      defer { previousIsTable = !inCode && line.hasPrefix("|") }
      if line.hasPrefix("```") {
        endParagraph()
        inCode.toggle()
      } else if inCode {
        units.append(Unit(kind: .code, text: String(line), line: number))
      } else if line.hasPrefix("|") {
        endParagraph()
        let isHeader = !previousIsTable
        if isHeader { table = String(cells(line).first ?? "") }
        units.append(
          Unit(kind: .tableRow, text: String(line), line: number, table: table, isHeader: isHeader))
      } else if line.trimmingCharacters(in: .whitespaces).isEmpty || line.hasPrefix("#") {
        endParagraph()
      } else if var open = paragraph {
        open.text += " " + line
        paragraph = open
      } else {
        paragraph = Unit(kind: .paragraph, text: String(line), line: number)
      }
    }
    endParagraph()
    return units
  }

  /// The claims of a Markdown document, given the package's module names.
  static func claims(of document: String, modules: Set<String>) throws -> Claims {
    var claims = Claims()
    let diagramThread = try Regex(#"(?:\[|: )thread ([a-z][a-z0-9-]*[a-z0-9])"#)
    // A type in the diagram: a capitalized name with a lowercase letter and a second capital
    // (`GPSDReader`, `PipelineInbox.push`), not an acronym (`TPV`) or a word (`Clock`).
    let diagramType = try Regex(
      #"\b(?=\w*[a-z])[A-Z][a-z0-9]*[A-Z][A-Za-z0-9]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?('?)"#)
    for unit in units(of: document) {
      switch unit.kind {
      case .code:
        for match in unit.text.matches(of: diagramThread) {
          if let name = match.output[1].substring {
            claims.threads.append(ThreadClaim(name: String(name), line: unit.line))
          }
        }
        for match in unit.text.matches(of: diagramType) {
          var name = String(match.output[0].substring ?? "")
          // A plural possessive, `PreMonitorSinks'`: the type is the singular.
          if name.hasSuffix("s'") { name.removeLast(2) }
          if name.hasSuffix("'") { name.removeLast() }
          claims.types.append(TypeClaim(span: name, modules: [], line: unit.line))
        }
        continue
      case .tableRow:
        let row = cells(unit.text[...])
        if unit.isHeader {
          claims.tables.insert(unit.table)
        } else if !row.allSatisfy({ $0.allSatisfy { "-: ".contains($0) } }) {
          switch unit.table {
          case "thread or task": claims.threads += threadRow(row, line: unit.line)
          case "module": claims.types += moduleRow(row, line: unit.line, modules: modules)
          case "concept": claims.types += conceptRow(row, line: unit.line, modules: modules)
          default: break
          }
        }
      case .paragraph:
        break
      }
      claims.types += try proseClaims(unit, modules: modules)
      if unit.table != "thread or task" { claims.threads += try proseThreads(unit) }
    }
    return claims
  }

  /// A row of *Threads and tasks*: its first cell's name, unless the row is a task.
  static func threadRow(_ row: [Substring], line: Int) -> [ThreadClaim] {
    guard let first = row.first, let name = spans(first).first?.span, isThreadLike(name)
    else { return [] }
    return [ThreadClaim(name: name, isProcess: first.contains("(a process)"), line: line)]
  }

  /// A row of *Modules*: its types live in its module or in what that imports.
  static func moduleRow(_ row: [Substring], line: Int, modules: Set<String>) -> [TypeClaim] {
    guard row.count >= 2 else { return [] }
    let named = spans(row[0]).map(\.span)
    return spans(row[1]).compactMap { span, _ in
      guard isTypeLike(span) else { return nil }
      return isLoose(span, modules: modules)
        ? TypeClaim(span: span, modules: [], line: line)
        : TypeClaim(span: span, modules: named, orImported: true, line: line)
    } + named.map { TypeClaim(span: $0, modules: [], line: line) }
  }

  /// A row of *Where each concept lives*: the leading types of its type cell live in one of the
  /// modules of its module cell.
  static func conceptRow(_ row: [Substring], line: Int, modules: Set<String>) -> [TypeClaim] {
    guard row.count >= 3 else { return [] }
    let named = spans(row[2]).map(\.span)
    return spans(row[1]).compactMap { span, leading in
      guard isTypeLike(span) else { return nil }
      let strict = leading && !isLoose(span, modules: modules)
      return TypeClaim(span: span, modules: strict ? named : [], line: line)
    } + named.map { TypeClaim(span: $0, modules: [], line: line) }
  }

  /// The claims of a paragraph or a table row: "`T` (module `M`)", "`T`, module `M`",
  /// "in `M`, `T` …", and every other type-like span (anywhere in Sources).
  static func proseClaims(_ unit: Unit, modules: Set<String>) throws -> [TypeClaim] {
    let moduleOf = try Regex(#"`([^`]+)`(?: \(module |, module )`([A-Za-z]+)`"#)
    let inModule = try Regex(#"in `([A-Za-z]+)`, ([^;)]*)"#)
    var claims: [TypeClaim] = []
    for match in unit.text.matches(of: moduleOf) {
      guard let span = match.output[1].substring, let module = match.output[2].substring
      else { continue }
      claims.append(TypeClaim(span: String(span), modules: [String(module)], line: unit.line))
    }
    for match in unit.text.matches(of: inModule) {
      guard let module = match.output[1].substring, modules.contains(String(module)),
        let list = match.output[2].substring
      else { continue }
      for (span, _) in spans(list) where isTypeLike(span) {
        claims.append(TypeClaim(span: span, modules: [String(module)], line: unit.line))
      }
    }
    for (span, _) in spans(unit.text[...]) where isTypeLike(span) {
      claims.append(TypeClaim(span: span, modules: [], line: unit.line))
    }
    return claims
  }

  /// The threads a paragraph or a table row names: a lowercase code span a few words after
  /// "thread", or right before " thread(s)".
  static func proseThreads(_ unit: Unit) throws -> [ThreadClaim] {
    let after = try Regex(#"thread[^`|]{0,20}`([a-z][a-z0-9-]*)`"#)
    let before = try Regex(#"`([a-z][a-z0-9-]*)` threads?\b"#)
    var claims: [ThreadClaim] = []
    for regex in [after, before] {
      for match in unit.text.matches(of: regex) {
        if let name = match.output[1].substring {
          claims.append(ThreadClaim(name: String(name), line: unit.line))
        }
      }
    }
    return claims
  }

  /// Whether a code span names a type (a pattern such as `…Repository` and a file name such as
  /// `Package.swift` do not).
  static func isTypeLike(_ span: String) -> Bool {
    !span.contains("…") && !span.hasSuffix(".swift")
      && (try? typeLike().wholeMatch(in: span)) != nil
  }

  // MARK: - Reading the sources

  /// Every `*.swift` file under `directory`, relative to it.
  static func swiftFiles(under directory: URL) -> [String] {
    guard
      let walker = FileManager.default.enumerator(
        at: directory, includingPropertiesForKeys: nil, options: [.skipsHiddenFiles])
    else { return [] }
    var found: [String] = []
    for case let url as URL in walker where url.pathExtension == "swift" {
      found.append(String(url.path.dropFirst(directory.path.count + 1)))
    }
    return found.sorted()
  }

  /// The declarations, imports and thread names of `root`'s `Sources/` and `Tests/`.
  static func index(of root: URL) throws -> SourceIndex {
    var index = SourceIndex()
    let sources = root.appendingPathComponent("Sources")
    let declaration = try Regex(
      #"\b(?:struct|class|enum|actor|protocol|typealias)\s+([A-Za-z_][A-Za-z0-9_]*)"#)
    let member = try Regex(#"\b(?:func|var|let|case)\s+`?([A-Za-z_][A-Za-z0-9_]*)"#)
    let importLine = try Regex(#"^\s*(@_exported\s+)?import\s+([A-Za-z_][A-Za-z0-9_]*)"#)
    let threadName = try Regex(
      #"(?:DetachedThread\.start\(\s*name|threadName)\s*:\s*(?:String\s*=\s*)?"([^"]*)""#)
    let interpolation = try Regex(#"\\\([^)]*\)"#)
    var reexports: [String: Set<String>] = [:]
    for name in try FileManager.default.contentsOfDirectory(atPath: sources.path) {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(
        atPath: sources.appendingPathComponent(name).path, isDirectory: &isDirectory),
        isDirectory.boolValue
      {
        index.modules.insert(name)
      }
    }
    for file in swiftFiles(under: sources) {
      let module = String(file.prefix { $0 != "/" })
      let text = try String(contentsOf: sources.appendingPathComponent(file), encoding: .utf8)
      let base = URL(fileURLWithPath: file).deletingPathExtension().lastPathComponent
      index.files[base, default: []].insert(module)
      for line in text.split(separator: "\n") {
        let code = line.trimmingCharacters(in: .whitespaces)
        if code.hasPrefix("//") { continue }
        for match in code.matches(of: declaration) {
          if let name = match.output[1].substring {
            index.types[String(name), default: []].insert(module)
          }
        }
        for match in code.matches(of: member) {
          if let name = match.output[1].substring {
            index.members[String(name), default: []].insert(module)
          }
        }
        if let match = code.firstMatch(of: importLine), let imported = match.output[2].substring {
          index.imports[module, default: []].insert(String(imported))
          if match.output[1].substring != nil {
            reexports[module, default: []].insert(String(imported))
          }
        }
      }
      for match in text.matches(of: threadName) {
        if let name = match.output[1].substring {
          index.threadNames.append(
            name.split(separator: interpolation, omittingEmptySubsequences: false).map(
              String.init))
        }
      }
    }
    for (module, imported) in index.imports {
      index.imports[module] = imported.union(imported.flatMap { reexports[$0] ?? [] })
    }
    let tests = root.appendingPathComponent("Tests")
    for file in swiftFiles(under: tests) {
      let text = try String(contentsOf: tests.appendingPathComponent(file), encoding: .utf8)
      for match in text.matches(of: declaration) {
        if let name = match.output[1].substring { index.testTypes.insert(String(name)) }
      }
    }
    let manifest = try String(
      contentsOf: root.appendingPathComponent("Package.swift"), encoding: .utf8)
    for match in manifest.matches(of: try Regex(#"name: "([^"]+)""#)) {
      if let name = match.output[1].substring { index.productNames.insert(String(name)) }
    }
    return index
  }

  // MARK: - Checking

  /// Whether `name` matches a thread name split at its interpolations (each matches any text).
  static func matches(_ name: String, _ pattern: [String]) -> Bool {
    guard let first = pattern.first else { return false }
    if pattern.count == 1 { return name == first }
    guard name.hasPrefix(first) else { return false }
    var rest = name.dropFirst(first.count)
    for (offset, part) in pattern.dropFirst().enumerated() {
      let isLast = offset == pattern.count - 2
      if isLast {
        return rest.count > part.count && rest.hasSuffix(part)
      }
      guard let range = rest.dropFirst().range(of: part) else { return false }
      rest = rest[range.upperBound...]
    }
    return true
  }

  /// What the claims get wrong about the sources: one line per wrong claim.
  static func problems(types: [TypeClaim], threads: [ThreadClaim], in index: SourceIndex)
    -> [String]
  {
    var found: [String] = []
    for claim in types {
      if let problem = problem(claim, index) { found.append(problem) }
    }
    for claim in threads {
      if claim.isProcess {
        if !index.modules.contains(claim.name) {
          found.append("\(claim): no executable target Sources/\(claim.name)")
        }
      } else if !index.threadNames.contains(where: { matches(claim.name, $0) }) {
        found.append("\(claim): no thread of that name is started in Sources")
      }
    }
    return found
  }

  static func problem(_ claim: TypeClaim, _ index: SourceIndex) -> String? {
    for module in claim.modules
    where !index.modules.contains(module) && !index.productNames.contains(module) {
      return "\(claim): no module Sources/\(module)"
    }
    if claim.modules.isEmpty,
      index.modules.contains(claim.span)
        || index.productNames.contains(claim.span) || externalNames.contains(claim.span)
        || index.testTypes.contains(claim.span)
    {
      return nil
    }
    guard let match = try? typeLike().wholeMatch(in: claim.span),
      let type = match.output[1].substring.map(String.init)
    else { return "\(claim): not a type, a module or a thread" }
    var allowed: Set<String>? = claim.modules.isEmpty ? nil : Set(claim.modules)
    if claim.orImported, let named = allowed {
      allowed = named.union(named.flatMap { index.imports[$0] ?? [] })
    }
    if let file = match.output[2].substring {
      let declaring = index.files[type + file] ?? []
      if declaring.isEmpty || allowed.map({ declaring.isDisjoint(with: $0) }) == true {
        return "\(claim): no file \(type)\(file).swift there"
      }
      return nil
    }
    let declaring = index.types[type] ?? []
    let there = allowed.map { declaring.intersection($0) } ?? declaring
    guard !there.isEmpty else {
      let elsewhere = declaring.sorted().joined(separator: ", ")
      return "\(claim): \(type) is declared \(declaring.isEmpty ? "nowhere" : "in \(elsewhere)")"
    }
    if let path = match.output[3].substring, let name = path.split(separator: ".").first,
      name.first?.isLowercase == true
    {
      let members = index.members[String(name)] ?? []
      let owners = there.union(allowed ?? []).union(there.flatMap { index.imports[$0] ?? [] })
      let inScope = claim.modules.isEmpty ? members : members.intersection(owners)
      if inScope.isEmpty { return "\(claim): no member `\(name)` declared with \(type)" }
    }
    return nil
  }

  static let root = Products.packageRoot

  static func document() throws -> String {
    try String(
      contentsOf: root.appendingPathComponent("docs/architecture.md"), encoding: .utf8)
  }

  // MARK: - Tests

  @Test func everyTypeAndThreadItNamesIsWhereItSays() throws {
    let index = try Self.index(of: Self.root)
    let claims = try Self.claims(of: try Self.document(), modules: index.modules)
    // The checks are not vacuous: the three tables were found and read.
    #expect(claims.tables.isSuperset(of: ["thread or task", "module", "concept"]))
    #expect(
      claims.types.contains { $0.span == "GPSDReader" && $0.modules == ["GPSD"] },
      "the threads table's GPSDReader, module GPSD, was not read")
    #expect(claims.types.filter { !$0.modules.isEmpty }.count >= 100)
    let threads = Set(claims.threads.map(\.name))
    #expect(
      threads.isSuperset(of: [
        "gpsd-reader", "waymark-broker", "waymark-store", "waymarkd-main", "mqtt",
        "replay-outputs", "replay-job-k", "waymark-identify",
      ]))
    for problem in Self.problems(types: claims.types, threads: claims.threads, in: index) {
      Issue.record("docs/architecture.md, \(problem)")
    }
  }

  /// The positive control: a made-up type in a made-up module, a real type in a module that
  /// does not declare it, a made-up member and a made-up thread are each reported; the real
  /// ones and an interpolated thread name are not.
  @Test func theCheckerReportsWhatIsWrong() throws {
    let index = try Self.index(of: Self.root)
    let wrong = [
      TypeClaim(span: "ImaginaryRouter", modules: ["WaymarkNowhere"], line: 1),
      TypeClaim(span: "ImaginaryRouter", modules: [], line: 2),
      TypeClaim(span: "GPSDReader", modules: ["WaymarkCore"], line: 3),
      TypeClaim(span: "DaemonRuntime.imaginaryMember()", modules: ["WaymarkDaemon"], line: 4),
      TypeClaim(span: "BrokerLoop+Imaginary", modules: [], line: 5),
    ]
    let wrongThreads = [
      ThreadClaim(name: "made-up-thread", line: 6),
      ThreadClaim(name: "waymark-nowhere", isProcess: true, line: 7),
    ]
    let reported = Self.problems(types: wrong, threads: wrongThreads, in: index)
    #expect(reported.count == wrong.count + wrongThreads.count, "\(reported)")
    for line in 1...7 {
      #expect(reported.contains { $0.hasPrefix("line \(line):") }, "line \(line) not reported")
    }
    let right = [
      TypeClaim(span: "GPSDReader", modules: ["GPSD"], line: 1),
      TypeClaim(span: "LocationManager", modules: ["WaymarkPipeline"], orImported: true, line: 2),
      TypeClaim(span: "DaemonRuntime.run()", modules: ["WaymarkDaemon"], line: 3),
      TypeClaim(span: "BrokerLoop+Agents", modules: ["WaymarkBroker"], line: 4),
    ]
    let rightThreads = [
      ThreadClaim(name: "replay-job-3", line: 5), ThreadClaim(name: "gpsd-reader", line: 6),
    ]
    #expect(Self.problems(types: right, threads: rightThreads, in: index) == [])
  }

  /// The same document with a wrong row planted in each of its tables (a made-up type in a
  /// made-up module, a made-up thread): each planted row is reported, and nothing else.
  @Test func aWrongRowPlantedInTheDocumentIsReported() throws {
    let index = try Self.index(of: Self.root)
    var lines = try Self.document().split(separator: "\n", omittingEmptySubsequences: false)
      .map(String.init)
    let planted: [(header: String, row: String)] = [
      (
        "| thread or task |",
        "| `made-up-thread` | `ImaginaryRouter` (module `WaymarkNowhere`) | x |"
      ),
      ("| module |", "| `WaymarkCore` | the router (`ImaginaryRouter`) | Essentials |"),
      ("| concept |", "| routing | `GPSDReader`, `ImaginaryRouter` | `WaymarkNowhere` | — |"),
    ]
    var plantedLines: Set<Int> = []
    for (header, row) in planted {
      let at = try #require(lines.firstIndex { $0.hasPrefix(header) }) + 2
      lines.insert(row, at: at)
      plantedLines = Set(plantedLines.map { $0 >= at + 1 ? $0 + 1 : $0 })
      plantedLines.insert(at + 1)
    }
    let claims = try Self.claims(of: lines.joined(separator: "\n"), modules: index.modules)
    let reported = Self.problems(types: claims.types, threads: claims.threads, in: index)
    let reportedLines = Set(
      reported.compactMap { Int($0.dropFirst("line ".count).prefix { $0.isNumber }) })
    #expect(reportedLines == plantedLines, "\(reported)")
    #expect(reported.contains { $0.contains("`made-up-thread`") })
    #expect(reported.contains { $0.contains("`ImaginaryRouter` in WaymarkCore or its imports") })
    #expect(reported.contains { $0.contains("`GPSDReader` in WaymarkNowhere") })
  }

  /// The reader finds the claims where the document's structure puts them.
  @Test func theReaderFindsEachKindOfClaim() throws {
    let document = """
      ```
       x [thread alpha-one]   [waymarkd: thread beta-two; replay: thread gamma]
      ```
      The `Alpha` (module `ModA`) runs on a thread of its own, `delta-four`; N `eps-k` threads.
      In both (`Sink`: in `ModB`, `BetaSink` and `GammaSink`, which; in `ModC`, `DeltaSink`).

      | thread or task | type | what |
      |---|---|---|
      | `zeta` | `Zeta` (module `ModA`) | x |
      | `helper` (a process) | `ModB` | x |

      | module | what it holds | Foundation |
      |---|---|---|
      | `ModB` | the thing (`Eta`, `Theta.run()`), `ModA` | x |

      | concept | type | module | guide |
      |---|---|---|---|
      | c | `Iota` (remark `Kappa`), `Mu`: more `Lambda`; `Nu` | `ModC`, `ModA` | — |
      """
    let claims = try Self.claims(of: document, modules: ["ModA", "ModB", "ModC"])
    let threads = claims.threads.map { "\($0.name)\($0.isProcess ? " process" : "")" }
    #expect(
      Set(threads) == [
        "alpha-one", "beta-two", "gamma", "delta-four", "eps-k", "zeta", "helper process",
      ])
    let strict = claims.types.filter { !$0.modules.isEmpty }.map {
      "\($0.span) \($0.modules.joined(separator: ","))\($0.orImported ? "+" : "")"
    }
    #expect(
      Set(strict) == [
        "Alpha ModA", "BetaSink ModB", "GammaSink ModB", "DeltaSink ModC", "Zeta ModA",
        "Eta ModB+", "Theta.run() ModB+", "Iota ModC,ModA", "Mu ModC,ModA",
      ])
    let loose = Set(claims.types.filter { $0.modules.isEmpty }.map(\.span))
    #expect(loose.isSuperset(of: ["Kappa", "Lambda", "Nu", "Sink"]))
  }

  // MARK: - public only in products

  /// The declarations of a Swift file's text that are `public` or `open`, as their lines.
  static func publicDeclarations(in text: String) throws -> [String] {
    let regex = try Regex(
      #"^\s*(?:@[A-Za-z_]+(?:\([^)]*\))?\s+|nonisolated(?:\(unsafe\))?\s+)*(?:public|open)\s+(?!=)"#
    )
    return text.split(separator: "\n").filter { $0.firstMatch(of: regex) != nil }.map(
      String.init)
  }

  /// The modules whose `public` an application can see: the library products' targets, and
  /// what those re-export (`@_exported import`).
  static func publicModules(manifest: String, index: SourceIndex) throws -> Set<String> {
    let library = try Regex(#"\.library\(\s*name:\s*"[^"]+",\s*targets:\s*\[([^\]]*)\]"#)
    var modules: Set<String> = []
    for match in manifest.matches(of: library) {
      for target in (match.output[1].substring ?? "").split(separator: ",") {
        modules.insert(target.trimmingCharacters(in: CharacterSet(charactersIn: "\" ")))
      }
    }
    let sources = root.appendingPathComponent("Sources")
    for module in modules {
      for file in swiftFiles(under: sources.appendingPathComponent(module)) {
        let text = try String(
          contentsOf: sources.appendingPathComponent(module).appendingPathComponent(file),
          encoding: .utf8)
        for match in text.matches(of: try Regex(#"@_exported\s+import\s+([A-Za-z_]+)"#)) {
          if let name = match.output[1].substring { modules.insert(String(name)) }
        }
      }
    }
    return modules
  }

  @Test func onlyWhatAnApplicationImportsIsPublic() throws {
    // Two declarations; an assignment to a variable named `open` is none.
    let planted = "  public func a()\n@inlinable public var b = 1\n    open = b"
    #expect(
      try Self.publicDeclarations(in: planted) == [
        "  public func a()", "@inlinable public var b = 1",
      ])
    #expect(
      try Self.publicDeclarations(
        in: "/// public docs\n  package func c()\n  nonisolated(unsafe) public static let d = 1")
        == ["  nonisolated(unsafe) public static let d = 1"])
    let index = try Self.index(of: Self.root)
    let manifest = try String(
      contentsOf: Self.root.appendingPathComponent("Package.swift"), encoding: .utf8)
    let visible = try Self.publicModules(manifest: manifest, index: index)
    #expect(visible.isSuperset(of: ["Waymark", "WaymarkCore", "WaymarkClient", "GPSD"]))
    #expect(!visible.contains("WaymarkBroker"))
    let sources = Self.root.appendingPathComponent("Sources")
    for module in index.modules.subtracting(visible).sorted() {
      for file in Self.swiftFiles(under: sources.appendingPathComponent(module)) {
        let text = try String(
          contentsOf: sources.appendingPathComponent(module).appendingPathComponent(file),
          encoding: .utf8)
        for line in try Self.publicDeclarations(in: text) {
          Issue.record(
            "Sources/\(module)/\(file): \(line.trimmingCharacters(in: .whitespaces)): \(module) is no library product: declare it package"
          )
        }
      }
    }
  }
}
