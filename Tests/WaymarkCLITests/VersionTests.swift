import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// `--version` of both executables, and the one source of truth the package is checked against.
@Suite struct VersionTests {
  @Test func bothExecutablesPrintTheRelease() throws {
    let waymark = try CommandRun.waymark(["--version"])
    #expect(waymark.status == 0)
    #expect(waymark.output == "waymark \(WaymarkRelease.version)\n")
    let daemon = try CommandRun.run(Products.executable("waymarkd"), ["--version"])
    #expect(daemon.status == 0)
    #expect(daemon.output == "waymarkd \(WaymarkRelease.version)\n")
  }

  /// The changelog's upstream version (what the .deb is called) is the release the binaries
  /// print; `package-deb.sh` refuses to build when they differ.
  @Test func theChangelogNamesTheSameRelease() throws {
    let changelog = try String(
      contentsOf: Products.packageRoot.appendingPathComponent("packaging/debian/changelog"),
      encoding: .utf8)
    let first = try #require(changelog.split(separator: "\n").first)
    #expect(first.hasPrefix("waymark (\(WaymarkRelease.version)-"))
    let parts = WaymarkRelease.version.split(separator: ".")
    #expect(parts.count == 3 && parts.allSatisfy { Int($0) != nil })
  }
}
