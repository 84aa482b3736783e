import Foundation
import Testing
import WaymarkCore
import WaymarkTesting

/// Stores the daemon and the commands cannot use: one clear line naming the file and what is
/// wrong, the documented exit code (docs/guide/daemon.md), and the file left byte for byte as it was.
@Suite(.serialized) struct BadStoreTests {
  /// `setpriv`, to run the binaries as `nobody` when the tests run as root (root ignores file
  /// modes).
  static let setpriv = "/usr/bin/setpriv"
  static let canDropPrivileges = !isRoot || FileManager.default.isExecutableFile(atPath: setpriv)
  static let canMount =
    isRoot && FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")

  /// A store with places and a grant, made by the real `waymark`.
  static func goodStore(_ path: String) throws {
    let places = Products.packageRoot.appendingPathComponent("Demo/places.geojson").path
    for arguments in [
      ["places", "import", places, "--store", path],
      ["auth", "grant", "waymarkd", "always", "--store", path],
    ] {
      let run = try CommandRun.waymark(arguments)
      guard run.status == 0 else { throw TestFailure(description: run.stderr) }
    }
  }

  /// Runs `waymarkd` on `store` (no socket, an unreachable gpsd) and each reading command.
  /// Returns the exit status and standard error of each, by name.
  static func runAll(store: String, in directory: TemporaryDirectory, asNobody: Bool) throws
    -> [String: CommandRun]
  {
    let config = try directory.write(
      "waymark.conf", "gpsd = 127.0.0.1:1\nstore = \(store)\nsocket = none\n")
    chmod(config, 0o644)
    func run(_ executable: String, _ arguments: [String]) throws -> CommandRun {
      let prefix = asNobody ? ["--reuid=65534", "--regid=65534", "--clear-groups", executable] : []
      return try CommandRun.run(
        asNobody ? setpriv : executable, prefix + arguments,
        environment: [
          "PATH": "/usr/bin:/bin", "HOME": directory.path, "SWIFT_BACKTRACE": "enable=no",
        ])
    }
    var runs: [String: CommandRun] = [:]
    runs["waymarkd"] = try run(Products.executable("waymarkd"), ["--config", config])
    for command in [["visits"], ["track", "export"], ["places", "list"]] {
      runs[command.joined(separator: " ")] = try run(
        Products.executable("waymark"), command + ["--store", store])
    }
    return runs
  }

  /// As root, makes `paths` nobody's, whom the programs run as (``runAll``).
  static func giveToNobody(_ paths: String...) {
    guard isRoot else { return }
    for path in paths { chown(path, 65534, 65534) }
  }

  static func checksum(_ path: String) throws -> Data {
    try Data(contentsOf: URL(fileURLWithPath: path))
  }

  @Test("a file of garbage bytes: exit 65, 'not a database', the file untouched")
  func garbage() throws {
    let directory = try TemporaryDirectory()
    var generator = SeededGenerator(seed: 13)
    let bytes = (0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) }
    let store = directory.file("waymark.db")
    try Data(bytes).write(to: URL(fileURLWithPath: store))
    for (name, run) in try Self.runAll(store: store, in: directory, asNobody: false) {
      #expect(run.status == 65, "\(name): \(run.stderr)")
      #expect(run.stderr.contains("not a database") && run.stderr.contains(store), "\(name)")
      #expect(run.stderr.split(separator: "\n").count == 1, "\(name): \(run.stderr)")
    }
    #expect(try Self.checksum(store) == Data(bytes))
  }

  @Test("a store of a newer schema version: exit 65, both versions named, the file untouched")
  func newerSchema() throws {
    let directory = try TemporaryDirectory()
    let store = directory.file("waymark.db")
    try Self.goodStore(store)
    let sqlite = try CommandRun.run("/usr/bin/sqlite3", [store, "PRAGMA user_version = 999"])
    #expect(sqlite.status == 0)
    let before = try Self.checksum(store)
    for (name, run) in try Self.runAll(store: store, in: directory, asNobody: false) {
      #expect(run.status == 65, "\(name): \(run.stderr)")
      #expect(run.stderr.contains("schema version 999") && run.stderr.contains(store), "\(name)")
    }
    #expect(try Self.checksum(store) == before)
  }

  @Test(
    "a read-only store file: the daemon exits 74 before writing, the commands still read it",
    .enabled(if: canDropPrivileges, "as root, needs setpriv to run as nobody"))
  func readOnlyFile() throws {
    let directory = try TemporaryDirectory()
    let store = directory.file("waymark.db")
    try Self.goodStore(store)
    Self.giveToNobody(store, directory.path)
    chmod(store, 0o444)
    let before = try Self.checksum(store)
    let runs = try Self.runAll(store: store, in: directory, asNobody: isRoot)
    let daemon = try #require(runs["waymarkd"])
    #expect(daemon.status == 74, "\(daemon.stderr)")
    #expect(daemon.stderr.contains("\(store) is read-only for this user"), "\(daemon.stderr)")
    for name in ["visits", "track export", "places list"] {
      #expect(runs[name]?.status == 0, "\(name): \(runs[name]?.stderr ?? "")")
    }
    #expect(try Self.checksum(store) == before)
  }

  @Test(
    "a store in a read-only directory: exit 74, the directory named, the file untouched",
    .enabled(if: canDropPrivileges, "as root, needs setpriv to run as nobody"))
  func readOnlyDirectory() throws {
    let directory = try TemporaryDirectory()
    let folder = directory.file("state")
    try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
    let store = folder + "/waymark.db"
    try Self.goodStore(store)
    Self.giveToNobody(store, folder)
    chmod(folder, 0o555)
    defer { chmod(folder, 0o755) }
    let before = try Self.checksum(store)
    for (name, run) in try Self.runAll(store: store, in: directory, asNobody: isRoot) {
      #expect(run.status == 74, "\(name): \(run.stderr)")
      #expect(run.stderr.contains("in a directory this user cannot write (\(folder))"), "\(name)")
    }
    #expect(try Self.checksum(store) == before)
  }

  @Test(
    "a store on a read-only file system: exit 74, 'read-only file system', the file untouched",
    .enabled(if: canMount, "needs root and unshare(1) for a private read-only tmpfs"))
  func readOnlyFileSystem() throws {
    let directory = try TemporaryDirectory()
    let good = directory.file("good.db")
    try Self.goodStore(good)
    let mount = directory.file("ro")
    // In a private mount namespace: a tmpfs with the store, remounted read-only, then each
    // program; its exit status and standard error are printed one line each.
    let script = """
      set -e
      mkdir -p "$1" && mount -t tmpfs -o size=4m tmpfs "$1" && cp "$2" "$1/waymark.db"
      sha256sum "$1/waymark.db" > "$1.before"
      mount -o remount,ro "$1"
      printf 'gpsd = 127.0.0.1:1\\nstore = %s\\nsocket = none\\n' "$1/waymark.db" > "$1.conf"
      set +e
      "$3" --config "$1.conf" 2> "$1.err"; echo "waymarkd $? $(head -n 1 "$1.err")"
      "$4" visits --store "$1/waymark.db" 2> "$1.err" > /dev/null; echo "visits $? $(head -n 1 "$1.err")"
      sha256sum "$1/waymark.db" | cmp -s - "$1.before" && echo "unchanged"
      """
    let run = try CommandRun.run(
      "/usr/bin/unshare",
      [
        "-m", "--propagation", "private", "/bin/sh", "-c", script, "sh", mount, good,
        Products.executable("waymarkd"), Products.executable("waymark"),
      ])
    let lines = run.output.split(separator: "\n").map(String.init)
    #expect(lines.count == 3, "\(run.output)\(run.stderr)")
    for (line, name) in zip(lines, ["waymarkd", "visits"]) {
      #expect(line.hasPrefix("\(name) 74 "), "\(line)")
      #expect(line.contains("\(mount)/waymark.db is on a read-only file system"), "\(line)")
    }
    #expect(lines.last == "unchanged")
  }
}
