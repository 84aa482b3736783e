import Foundation
import Testing
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
    for name in ["waymark", "waymarkd"]
    where !FileManager.default.isExecutableFile(atPath: Products.executable(name)) {
      return "no \(Products.executable(name)): swift build --build-tests"
    }
    return nil
  }

  /// The CLI links the pipeline that `waymark replay` runs and the daemon's configuration that
  /// `status` and `docs man` read, not the daemon nor its location socket: no symbol of module
  /// `WaymarkDaemon` or `WaymarkBroker` (Swift mangles a module's own declarations as
  /// `$s13WaymarkDaemon…`) is in the debug `waymark`, which links every object file of the
  /// modules it depends on.
  @Test(.enabled(if: debugImpossibility == nil, "\(debugImpossibility ?? "")"))
  func theCLIDoesNotLinkTheDaemon() throws {
    let daemonModule = "$s13WaymarkDaemon"
    let cli = try Self.symbols(Products.executable("waymark"))
    // Positive control: waymarkd carries the daemon's symbols, and the CLI those of the
    // pipeline and of the configuration, under the same mangling.
    let daemon = try Self.symbols(Products.executable("waymarkd"))
    #expect(daemon.contains { $0.hasPrefix(daemonModule) })
    #expect(cli.contains { $0.hasPrefix("$s15WaymarkPipeline") })
    #expect(cli.contains { $0.hasPrefix("$s26WaymarkDaemonConfiguration") })
    let linked = cli.filter { $0.hasPrefix(daemonModule) }
    #expect(linked.isEmpty, "\(linked.count) symbols, such as \(linked.prefix(3))")
    // Nor the location socket's server (the configuration's agent rules are WaymarkIdentify's).
    let brokerModule = "$s13WaymarkBroker"
    #expect(daemon.contains { $0.hasPrefix(brokerModule) })
    let broker = cli.filter { $0.hasPrefix(brokerModule) }
    #expect(broker.isEmpty, "\(broker.count) symbols, such as \(broker.prefix(3))")
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
