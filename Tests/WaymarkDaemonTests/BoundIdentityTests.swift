import Foundation
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkTesting

/// Identity is bound to the file the kernel ran, not to a path: a program in a user and mount
/// namespace of its own that bind-mounts its code over a granted path and execs it reads as
/// that path in `/proc/<pid>/exe`, but it is not the granted file.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(if: isRoot, "runs the programs as a system user (setpriv, as root)"),
  .enabled(
    if: FileManager.default.isExecutableFile(atPath: "/usr/bin/unshare")
      && FileManager.default.isExecutableFile(atPath: "/usr/bin/yes"),
    "needs unshare (util-linux) and /usr/bin/yes (coreutils)"))
struct BoundIdentityTests {
  static let user = "wmtest-bind"

  /// `command` run by `/bin/sh` as the test user in a user and mount namespace of its own
  /// (`unshare -Urm`: root inside, the user outside).
  static func inOwnNamespace(_ command: String) throws -> DaemonProcess {
    let ids = try systemUser(user)
    return try DaemonProcess(
      executable: "/usr/bin/setpriv",
      arguments: [
        "--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "/usr/bin/unshare",
        "-Urm", "/bin/sh", "-c", command + " 1>&2",
      ],
      environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
  }

  /// `/usr/bin/yes` is granted `whenInUse` to the test user, and so is the `waymark` binary.
  /// The attacker bind-mounts `waymark` over `/usr/bin/yes` in its own namespace and runs it
  /// as `/usr/bin/yes watch …`: its connection is refused (the peer cannot be identified) and it
  /// receives no position (before: served as the granted `/usr/bin/yes`, every fix of the
  /// drive). The control, in the same kind of namespace, runs `waymark` from its real path and
  /// receives the drive.
  @Test func aBindMountOverAGrantedPathGetsNothing() async throws {
    let socketPath = try TemporaryDirectory.socketDirectory() + "/waymark.sock"
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home)], extraConfig: "socket = \(socketPath)\n")
    defer { rig.stop() }
    // A copy other users may reach (the checkout may be under a directory only root enters;
    // inside a user namespace root's rights over it are gone).
    let programs = try TemporaryDirectory()
    chmod(programs.path, 0o755)
    let waymark = programs.file("waymark")
    try FileManager.default.copyItem(atPath: Products.executable("waymark"), toPath: waymark)
    chmod(waymark, 0o755)
    try grant("\(Self.user):/usr/bin/yes", "whenInUse", store: rig.store)
    try grant("\(Self.user):\(waymark)", "whenInUse", store: rig.store)
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.hasPrefix("<5>location socket ") }
    try await rig.gpsd.waitForWatchers(1)

    let watch = "watch --daemon --socket '\(socketPath)' --json"
    let attacker = try Self.inOwnNamespace(
      "mount --bind '\(waymark)' /usr/bin/yes && exec /usr/bin/yes \(watch)")
    defer { attacker.signal(SIGKILL) }
    let control = try Self.inOwnNamespace("exec '\(waymark)' \(watch)")
    defer { control.signal(SIGKILL) }
    try await control.waitForLine { $0.contains(#""status":"authorizedWhenInUse""#) }
    // The attacker is turned away at connect (before: told authorizedWhenInUse) and ends.
    try await daemon.waitForLine {
      $0.contains("refused a connection") && $0.contains("does not run the file")
    }
    _ = try await attacker.waitForExit(timeout: .seconds(20))

    let epochs = Commute.epochs(homeStay: 10, officeStay: 10)
    try await rig.send(epochs)
    let last = Timestamp.format(epochs.last!.time)
    try await control.waitForLine { $0.hasPrefix(#"{"class":"TPV""#) && $0.contains(last) }
    #expect(
      !attacker.log.contains { $0.hasPrefix(#"{"class":"TPV""#) }, "\(attacker.logText)")
    #expect(
      !attacker.log.contains { $0.contains(#""status":"authorizedWhenInUse""#) },
      "\(attacker.logText)")
  }
}
