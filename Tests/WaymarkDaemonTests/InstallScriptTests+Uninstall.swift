import Foundation
import Testing
import WaymarkTesting

extension InstallScriptTests {
  /// Runs `Scripts/install.sh` with `arguments` into `destination`.
  static func installScript(_ destination: TemporaryDirectory, _ arguments: [String]) throws
    -> CommandRun
  {
    try CommandRun.run(
      "/bin/bash",
      [packageFile("Scripts/install.sh"), "--destdir", destination.path] + arguments)
  }

  /// Every regular file under `directory`, relative to it, with a leading slash.
  static func files(under directory: TemporaryDirectory) -> Set<String> {
    guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return [] }
    var files: Set<String> = []
    for case let entry as String in walker {
      var isDirectory: ObjCBool = false
      if FileManager.default.fileExists(atPath: directory.file(entry), isDirectory: &isDirectory),
        !isDirectory.boolValue
      {
        files.insert("/" + entry)
      }
    }
    return files
  }

  /// The manifest lists exactly the installed files (itself aside); `--uninstall` removes them
  /// all, and keeps an edited configuration and the store until `--purge`.
  @Test func uninstallRemovesWhatWasInstalledAndKeepsTheOperatorsData() throws {
    let destination = try TemporaryDirectory()
    let build = ["--build-dir", Products.buildDirectory.path]
    let manifestPath = "/usr/local/share/waymark/install-manifest"

    #expect(try Self.installScript(destination, build).status == 0)
    let manifest = try String(
      contentsOfFile: destination.path + manifestPath, encoding: .utf8)
    let listed = Set(
      manifest.split(separator: "\n").compactMap { $0.split(separator: " ").last }
        .map(String.init))
    #expect(listed.count == 17)
    #expect(Self.files(under: destination) == listed.union([manifestPath]))
    let uninstall = try Self.installScript(destination, ["--uninstall"])
    #expect(uninstall.status == 0, "\(uninstall.stderr)")
    #expect(uninstall.output.contains("removed 17 files"), "\(uninstall.output)")
    #expect(Self.files(under: destination).isEmpty)
    for directory in ["etc/waymark", "usr/local/share/waymark", "usr/local/share/doc/waymark"] {
      #expect(!FileManager.default.fileExists(atPath: destination.file(directory)), "\(directory)")
    }

    // An operator's edit and the store (here from --geoclue's grant) stay; the drop-in that
    // --geoclue added goes, though the second run did not repeat --geoclue.
    #expect(try Self.installScript(destination, build + ["--geoclue"]).status == 0)
    try destination.write("etc/waymark/waymark.conf", "client = mine\n")
    #expect(try Self.installScript(destination, build).status == 0)
    let keep = try Self.installScript(destination, ["--uninstall"])
    #expect(keep.status == 0, "\(keep.stderr)")
    #expect(keep.output.contains("kept: /etc/waymark/waymark.conf (edited)"), "\(keep.output)")
    #expect(keep.output.contains("kept: /var/lib/waymark"), "\(keep.output)")
    #expect(
      Self.files(under: destination) == [
        "/etc/waymark/waymark.conf", "/var/lib/waymark/waymark.db",
      ])

    // --geoclue's own line is not an edit; --purge removes the kept data.
    try FileManager.default.removeItem(atPath: destination.file("etc/waymark/waymark.conf"))
    #expect(try Self.installScript(destination, build + ["--geoclue"]).status == 0)
    let geoclue = try Self.installScript(destination, ["--uninstall"])
    #expect(!geoclue.output.contains("waymark.conf (edited)"), "\(geoclue.output)")
    #expect(Self.files(under: destination) == ["/var/lib/waymark/waymark.db"])
    #expect(try Self.installScript(destination, build).status == 0)
    let purge = try Self.installScript(destination, ["--uninstall", "--purge"])
    #expect(purge.status == 0, "\(purge.stderr)")
    #expect(!purge.output.contains("kept:"), "\(purge.output)")
    #expect(Self.files(under: destination).isEmpty)

    let nothing = try Self.installScript(destination, ["--uninstall"])
    #expect(nothing.status == 66)
    #expect(nothing.stderr.contains("install-manifest missing"))
    #expect(try Self.installScript(destination, ["--purge"]).status == 64)
  }
}
