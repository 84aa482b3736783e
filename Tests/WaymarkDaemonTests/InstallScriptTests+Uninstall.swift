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
  /// all, and keeps every edited file (the configuration and the store until `--purge`, an
  /// edited drop-in or a replaced binary even then).
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

    // Only a file with the checksum install.sh recorded goes: an operator's edited drop-in and
    // a binary replaced by a link stay, even with --purge, and are named; the control, the
    // same drop-in unedited, goes.
    let dropIn = "/etc/systemd/system/geoclue.service.d/waymark.conf"
    #expect(try Self.installScript(destination, build + ["--geoclue"]).status == 0)
    let installed = Self.files(under: destination)
    #expect(installed.contains(dropIn) && installed.contains("/usr/local/bin/waymark"))
    try destination.write(String(dropIn.dropFirst()), "[Service]\nEnvironment=OPERATOR=1\n")
    try FileManager.default.removeItem(atPath: destination.file("usr/local/bin/waymark"))
    try FileManager.default.createSymbolicLink(
      atPath: destination.file("usr/local/bin/waymark"), withDestinationPath: "/bin/true")
    let edited = try Self.installScript(destination, ["--uninstall", "--purge"])
    #expect(edited.status == 0, "\(edited.stderr)")
    #expect(edited.output.contains("kept: \(dropIn) (edited)"), "\(edited.output)")
    #expect(edited.output.contains("kept: /usr/local/bin/waymark (edited)"), "\(edited.output)")
    #expect(Self.files(under: destination) == [dropIn, "/usr/local/bin/waymark"])
    #expect(
      (try? FileManager.default.destinationOfSymbolicLink(
        atPath: destination.file("usr/local/bin/waymark"))) == "/bin/true")
    try FileManager.default.removeItem(atPath: destination.file(String(dropIn.dropFirst())))
    try FileManager.default.removeItem(atPath: destination.file("usr/local/bin/waymark"))
    #expect(try Self.installScript(destination, build + ["--geoclue"]).status == 0)
    let unedited = try Self.installScript(destination, ["--uninstall", "--purge"])
    #expect(!unedited.output.contains("(edited)"), "\(unedited.output)")
    #expect(Self.files(under: destination).isEmpty)

    let nothing = try Self.installScript(destination, ["--uninstall"])
    #expect(nothing.status == 66)
    #expect(nothing.stderr.contains("install-manifest missing"))
    #expect(try Self.installScript(destination, ["--purge"]).status == 64)
  }
}
