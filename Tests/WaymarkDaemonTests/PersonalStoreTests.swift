import Foundation
import Testing
import WaymarkStore
import WaymarkTesting

/// The permission bits of `path`, or `nil` when it does not exist.
private func mode(_ path: String) -> mode_t? {
  var status = stat()
  return stat(path, &status) == 0 ? status.st_mode & 0o7777 : nil
}

/// `waymark <arguments>` under `umask` (the usual 022 of a login shell), with `HOME` set.
private func waymark(_ arguments: [String], home: String, umask mask: String = "022") throws
  -> CommandRun
{
  let quoted = ([Products.executable("waymark")] + arguments).map { "'\($0)'" }
  return try CommandRun.run(
    "/bin/sh", ["-c", "umask \(mask); exec \(quoted.joined(separator: " "))"],
    environment: ["PATH": "/usr/bin:/bin", "HOME": home])
}

/// A personal store (visits, tracks: where a person has been) is the user's alone (issue 20,
/// point 8): 0600 in a 0700 directory, its `-wal` and `-shm` files too, whatever the umask.
@Suite struct PersonalStoreTests {
  private let addPlace = [
    "places", "add", "--name", "Home", "--lat", "52.52", "--lon", "13.405", "--radius", "50",
  ]

  @Test func aNewPersonalStoreIsTheUsersAlone() throws {
    let home = try TemporaryDirectory()
    let run = try waymark(addPlace, home: home.path)
    #expect(run.status == 0, "\(run.stderr)")
    let directory = home.path + "/.local/state/waymark"
    let store = directory + "/waymark.db"
    #expect(mode(directory) == 0o700)
    #expect(mode(store) == 0o600)
    // SQLite's -wal and -shm files exist while a connection is open; they take the store's mode.
    let database = try Database(path: store, createIfMissing: false)
    _ = try database.read { try PlaceRepository($0).all() }
    #expect(mode(store + "-wal") == 0o600)
    #expect(mode(store + "-shm") == 0o600)
    _ = database
    // `--store` elsewhere: the file is the user's alone as well.
    let elsewhere = home.file("elsewhere/visits.db")
    #expect(try waymark(addPlace + ["--store", elsewhere], home: home.path).status == 0)
    #expect(mode(elsewhere) == 0o600)
    #expect(mode(home.file("elsewhere")) == 0o700)
  }

  /// A store made by an earlier release (0644 in a 0755 directory) is tightened when written.
  @Test func anOlderPersonalStoreIsTightened() throws {
    let home = try TemporaryDirectory()
    let directory = home.path + "/.local/state/waymark"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let store = directory + "/waymark.db"
    _ = try Database(path: store)
    chmod(directory, 0o755)
    chmod(store, 0o644)
    #expect(mode(store) == 0o644)
    #expect(try waymark(addPlace, home: home.path).status == 0)
    #expect(mode(directory) == 0o700)
    #expect(mode(store) == 0o600)
  }

  /// The control: in a directory shared with its group (as waymarkd's `/var/lib/waymark`,
  /// 0770), a new store follows the umask (SQLite's 0644 less 007), so that the group can read
  /// it as before.
  @Test func aStoreInAGroupSharedDirectoryFollowsTheUmask() throws {
    let home = try TemporaryDirectory()
    let shared = home.file("shared")
    try FileManager.default.createDirectory(atPath: shared, withIntermediateDirectories: true)
    chmod(shared, 0o770)
    let store = shared + "/waymark.db"
    #expect(try waymark(addPlace + ["--store", store], home: home.path, umask: "007").status == 0)
    #expect(mode(store) == 0o640)
    #expect(mode(shared) == 0o770)
  }
}
