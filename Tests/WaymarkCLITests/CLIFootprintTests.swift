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
