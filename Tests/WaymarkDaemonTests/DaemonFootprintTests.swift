import Foundation
import Testing
import WaymarkTesting

/// waymarkd's memory goal rests on linking FoundationEssentials only: full Foundation brings
/// CoreFoundation and ICU (about 5 MB more RSS with a static runtime, more with a dynamic one).
@Suite struct DaemonFootprintTests {
  static let heavyLibraries = [
    "libFoundation.so", "libFoundationInternationalization.so", "lib_FoundationICU.so",
    "libCoreFoundation", "libFoundationNetworking", "libFoundationXML",
  ]

  @Test func waymarkdLinksNeitherFoundationNorICU() throws {
    let run = try runTool("/usr/bin/ldd", [Products.executable("waymarkd")])
    try #require(run.status == 0, "ldd failed: \(run.stderr)")
    let libraries = run.output.split(separator: "\n").map {
      $0.trimmingCharacters(in: .whitespaces)
    }
    #expect(libraries.contains { $0.hasPrefix("libgps.so") })
    #expect(libraries.contains { $0.hasPrefix("libsqlite3.so") })
    for heavy in Self.heavyLibraries {
      #expect(!libraries.contains { $0.hasPrefix(heavy) }, "waymarkd links \(heavy)")
    }
  }

  /// libmosquitto (and the OpenSSL it brings) and libcurl are loaded when MQTT or Traccar start
  /// (dlopen), not linked: a daemon without them maps none of it. That they load when configured
  /// is what the MQTT and Traccar tests show.
  @Test func waymarkdLinksNeitherMosquittoNorOpenSSLNorCurl() throws {
    let run = try runTool("/usr/bin/ldd", [Products.executable("waymarkd")])
    try #require(run.status == 0, "ldd failed: \(run.stderr)")
    #expect(run.output.contains("libsqlite3.so"), "the control: ldd lists what is linked")
    for loaded in ["libmosquitto", "libssl", "libcrypto", "libcurl"] {
      #expect(!run.output.contains(loaded), "waymarkd links \(loaded)")
    }
  }

  /// Guards the check above against a silent ldd: the test runner itself imports Foundation,
  /// and ldd does list it there.
  @Test func lddDoesListFoundationWhereItIsLinked() throws {
    let runner = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
    let run = try runTool("/usr/bin/ldd", [runner])
    try #require(run.status == 0, "ldd failed: \(run.stderr)")
    #expect(run.output.contains("libFoundation.so"))
  }
}
