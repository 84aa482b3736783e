import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// Links planted where the CLI writes: a member of group `waymark` can create files in the
/// group-writable `/var/lib/waymark`; root then runs `waymark auth grant … --store
/// /var/lib/waymark/waymark.db`, as the install script tells them to. The link is refused, its
/// target never created or truncated; the same commands on the real paths work (the controls).
@Suite(.serialized) struct PlantedLinkTests {
  /// A group-writable state directory (as `/var/lib/waymark` is) with a dangling link named
  /// `waymark.db` pointing at a file that must not come to exist.
  @Test func aDanglingStoreLinkIsRefusedNotFollowed() throws {
    let directory = try TemporaryDirectory()
    let state = directory.file("state")
    try FileManager.default.createDirectory(atPath: state, withIntermediateDirectories: false)
    chmod(state, 0o2775)
    let target = directory.file("nologin")
    let link = state + "/waymark.db"
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    let run = try CommandRun.waymark([
      "auth", "grant", "root:/usr/bin/true", "always", "--store", link,
    ])
    #expect(run.status == 74, "\(run.status) \(run.stderr)")
    #expect(run.stderr.contains("is a symbolic link"), "\(run.stderr)")
    #expect(!FileManager.default.fileExists(atPath: target), "the link's target was created")
    // The control: the store at its own path is created and written.
    let real = state + "/real.db"
    let control = try CommandRun.waymark(
      ["auth", "grant", "root:/usr/bin/true", "always", "--store", real])
    #expect(control.status == 0, "\(control.stderr)")
    #expect(FileManager.default.fileExists(atPath: real))
  }

  /// `--output` through a link is refused (the target keeps its bytes); a new output file, which
  /// holds positions, is created 0600 (before: 0644, and the link followed).
  @Test func anOutputLinkIsRefusedAndNewOutputsAreOwnerOnly() throws {
    let directory = try TemporaryDirectory()
    let route = Products.packageRoot.appendingPathComponent("Demo/drive.route").path
    let target = try directory.write("precious", "keep me\n")
    let link = directory.file("log.nmea")
    try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: target)
    let refused = try CommandRun.waymark(["synthesize", route, "--output", link])
    #expect(refused.status == 74, "\(refused.status) \(refused.stderr)")
    #expect(refused.stderr.contains("it is a symbolic link"), "\(refused.stderr)")
    #expect(try String(contentsOfFile: target, encoding: .utf8) == "keep me\n")
    let output = directory.file("own.nmea")
    let written = try CommandRun.waymark(["synthesize", route, "--output", output])
    #expect(written.status == 0, "\(written.stderr)")
    var status = stat()
    #expect(stat(output, &status) == 0)
    #expect(status.st_mode & 0o777 == 0o600, "mode \(String(status.st_mode & 0o777, radix: 8))")
    #expect(status.st_size > 10_000)
  }
}
