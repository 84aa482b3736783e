import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// The `waymark` CLI links FoundationEssentials only, like the daemon: full Foundation brings
/// CoreFoundation and ICU, which made the static CLI about 60 MB of the package's 73.
@Suite struct CLIFootprintTests {
  /// The static-runtime release binary that `Scripts/test.sh` builds and the .deb ships.
  static let releaseCLI = Products.packageRoot.appendingPathComponent(".build/release/waymark")
    .path

  /// Why the release binary cannot be checked, or `nil`.
  static var releaseImpossibility: String? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/nm") else {
      return "/usr/bin/nm is missing (binutils, Scripts/install-deps.sh)"
    }
    guard FileManager.default.isExecutableFile(atPath: releaseCLI) else {
      return "no \(releaseCLI): swift build -c release -j 2 --static-swift-stdlib (Scripts/test.sh)"
    }
    if (try? CommandRun.run("/usr/bin/ldd", [releaseCLI]).output.contains("libswiftCore")) != false
    {
      return "\(releaseCLI) uses the shared Swift runtime (build it with --static-swift-stdlib)"
    }
    return nil
  }

  /// Whether a symbol of a static binary comes from full Foundation, CoreFoundation or ICU
  /// (rather than FoundationEssentials): the Swift module `Foundation` or
  /// `FoundationInternationalization`, CoreFoundation's runtime, ICU's C++ namespace or C API.
  static func isHeavy(_ symbol: Substring) -> Bool {
    symbol.hasPrefix("$s10Foundation") || symbol.hasPrefix("$s30FoundationInternationalization")
      || symbol.hasPrefix("_CFRuntime") || symbol.hasPrefix("CFRetain")
      || symbol.contains("icu_") || symbol.hasPrefix("ucol_") || symbol.hasPrefix("udat_")
  }

  /// The names in `nm`'s symbol table of `path`.
  static func symbols(_ path: String) throws -> [Substring] {
    let run = try CommandRun.run("/usr/bin/nm", [path])
    try #require(run.status == 0, "nm \(path) failed: \(run.stderr)")
    return run.output.split(separator: "\n").compactMap { $0.split(separator: " ").last }
  }

  @Test func theCLILinksNeitherFoundationNorICU() throws {
    let run = try CommandRun.run("/usr/bin/ldd", [Products.executable("waymark")])
    try #require(run.status == 0, "ldd failed: \(run.stderr)")
    // Positive control: the debug CLI links the Swift runtime dynamically, FoundationEssentials
    // among it, so ldd does list Foundation's libraries.
    #expect(run.output.contains("libFoundationEssentials.so"))
    for heavy in [
      "libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
      "libFoundationNetworking.so", "libFoundationXML.so",
    ] {
      #expect(!run.output.contains(heavy), "waymark links \(heavy)")
    }
  }

  /// The shipped binary, built from scratch with the static runtime: not one symbol of
  /// Foundation, CoreFoundation or ICU. (Object files left from an older build can keep an
  /// autolink entry for Foundation; this reads the symbols actually linked.)
  @Test(.enabled(if: releaseImpossibility == nil, "\(releaseImpossibility ?? "")"))
  func theStaticCLICarriesNoFoundationOrICU() throws {
    let linked = try Self.symbols(Self.releaseCLI)
    // Positive control: the symbol table is there (not stripped) and holds FoundationEssentials.
    #expect(linked.contains { $0.hasPrefix("$s20FoundationEssentials") })
    let heavy = linked.filter(Self.isHeavy)
    #expect(heavy.isEmpty, "\(heavy.count) symbols, such as \(heavy.prefix(3))")
  }

  /// The release link lays the functions waymarkd runs once it is up side by side, in the order
  /// of `Sources/waymark/code-order.txt` (docs/architecture.md, "Code laid out by use"): most of
  /// those the binary holds lie in one window of 2 MB of its 14 MB of code (87 % measured; 44 %
  /// in a link without the order). Control: as many of the binary's other functions, taken
  /// evenly, are spread out. Fewer than 1,000 of the listed names found means the list is stale
  /// (`Scripts/code-order.sh` writes it again).
  @Test(.enabled(if: releaseImpossibility == nil, "\(releaseImpossibility ?? "")"))
  func theDaemonsRunningCodeIsLaidOutTogether() throws {
    let list = Products.packageRoot.appendingPathComponent("Sources/waymark/code-order.txt")
    let listed = Set(
      try String(contentsOf: list, encoding: .utf8).split(separator: "\n").map {
        $0.dropFirst(".text.".count)
      })
    let run = try CommandRun.run("/usr/bin/nm", [Self.releaseCLI])
    try #require(run.status == 0, "nm failed: \(run.stderr)")
    var ordered: [UInt64] = []
    var others: [UInt64] = []
    for line in run.output.split(separator: "\n") {
      let fields = line.split(separator: " ")
      guard fields.count == 3, ["t", "T", "w", "W"].contains(fields[1]),
        let address = UInt64(fields[0], radix: 16)
      else { continue }
      if listed.contains(fields[2]) { ordered.append(address) } else { others.append(address) }
    }
    #expect(ordered.count > 1_000, "\(ordered.count) of the \(listed.count) listed functions")
    /// The largest share of `addresses` within any 2 MB.
    func densestShare(_ addresses: [UInt64]) -> Double {
      let sorted = addresses.sorted()
      var best = 0
      var start = 0
      for end in sorted.indices {
        while sorted[end] - sorted[start] > 2 << 20 { start += 1 }
        best = max(best, end - start + 1)
      }
      return sorted.isEmpty ? 0 : Double(best) / Double(sorted.count)
    }
    let step = max(1, others.count / max(1, ordered.count))
    let sample = stride(from: 0, to: others.count, by: step).map { others[$0] }
    #expect(densestShare(ordered) > 0.75)
    #expect(densestShare(sample) < 0.5)
  }

  /// Why the debug executables' symbols cannot be read, or `nil`.
  static var debugImpossibility: String? {
    guard FileManager.default.isExecutableFile(atPath: "/usr/bin/nm") else {
      return "/usr/bin/nm is missing (binutils, Scripts/install-deps.sh)"
    }
    if !FileManager.default.isExecutableFile(atPath: Products.executable("waymark")) {
      return "no \(Products.executable("waymark")): swift build --build-tests"
    }
    return nil
  }

  /// `waymark` and `waymarkd` are one executable (the multi-call binary of the target
  /// `waymark`): it carries the daemon and the commands (the modules `WaymarkDaemon`,
  /// `WaymarkBroker` and `WaymarkCLI`, mangled `$s13WaymarkDaemon…` and so on), and the name it
  /// runs under chooses the program: `waymarkd` the daemon, any other the CLI
  /// (docs/architecture.md, "One executable").
  @Test(.enabled(if: debugImpossibility == nil, "\(debugImpossibility ?? "")"))
  func oneExecutableRunsTheProgramOfItsName() throws {
    let linked = try Self.symbols(Products.executable("waymark"))
    for module in ["$s13WaymarkDaemon", "$s13WaymarkBroker", "$s10WaymarkCLI"] {
      #expect(linked.contains { $0.hasPrefix(module) }, "no symbol of \(module)")
    }
    let directory = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymark-names-\(getpid())-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let executable = URL(fileURLWithPath: Products.executable("waymark")).resolvingSymlinksInPath()
    for (name, program) in [
      ("waymarkd", "waymarkd"), ("waymark", "waymark"), ("waymarkd-old", "waymark"),
      ("my-waymark", "waymark"),
    ] {
      let path = directory.appendingPathComponent(name).path
      try FileManager.default.createSymbolicLink(
        atPath: path, withDestinationPath: executable.path)
      let run = try CommandRun.run(path, ["--version"])
      #expect(run.status == 0, "\(name): \(run.stderr)")
      #expect(run.output == "\(program) \(WaymarkRelease.version)\n", "\(name)")
    }
  }

  /// The predicate above recognizes symbols of the libraries it must keep out (taken from the
  /// toolchain's static libFoundation.a and lib_FoundationICU.a) and passes ours.
  @Test func theHeavySymbolPredicateMatchesFoundationAndICU() {
    for (symbol, heavy) in [
      ("$s10Foundation10FileHandleC10_readBytes4into6lengthSiSpys5UInt8VG_SitKF", true),
      ("_ZN6icu_7610Appendable12appendStringEPKDsi", true),
      ("ucol_open_76", true),
      ("CFRetain", true),
      ("$s20FoundationEssentials4DataV5countSivg", false),
      ("$s11WaymarkCore3FixV4timeAA9TimestampVvg", false),
    ] {
      #expect(Self.isHeavy(symbol[...]) == heavy, "\(symbol)")
    }
  }
}
