import Foundation
import Testing
import WaymarkSimulation
import WaymarkTesting

/// A local user squatting the endpoint of a broker on this machine (its port while it is down,
/// the other address family of `localhost`, a socket file): waymarkd sends it nothing, not even
/// the password; the real broker, held by root or `mqtt-broker-user`, is used.
@Suite(
  .serialized,
  .enabled(if: isRoot, "runs the squatter as another system user (setpriv, as root)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"))
struct LocalBrokerTests {
  static let squatterName = "wmtest-squat"
  static let password = "s3cret-squat"

  /// `Tests/Fixtures/hostile/squatter.py` with `arguments`, as the squatter's user, once bound.
  static func squat(_ arguments: [String]) async throws -> DaemonProcess {
    let user = try systemUser(squatterName)
    // A copy the squatter's user may read (the checkout may be under a directory only root
    // enters); python has read it once the squatter listens, so it may go with this function.
    let scripts = try TemporaryDirectory()
    chmod(scripts.path, 0o755)
    let script = scripts.file("squatter.py")
    try FileManager.default.copyItem(
      atPath: Products.packageRoot.appendingPathComponent("Tests/Fixtures/hostile/squatter.py")
        .path, toPath: script)
    chmod(script, 0o644)
    let squatter = try DaemonProcess(
      executable: "/usr/bin/setpriv",
      arguments: [
        "--reuid=\(user.uid)", "--regid=\(user.gid)", "--clear-groups", "/usr/bin/python3",
        script,
      ] + arguments,
      environment: ["PATH": "/usr/bin:/bin"])
    try await squatter.waitForLine { $0 == "listening" }
    return squatter
  }

  /// waymarkd with MQTT to `endpoint` (a user name and a password), its other `extra` lines,
  /// and a gpsd that is not there (MQTT connects regardless).
  static func daemon(_ directory: TemporaryDirectory, mqtt endpoint: String, extra: String = "")
    throws -> DaemonProcess
  {
    try grantAlways(directory: directory.path)
    let passwordFile = try directory.write("password", password + "\n")
    chmod(passwordFile, 0o600)
    let config = try directory.write(
      "waymark.conf",
      """
      gpsd = 127.0.0.1:\(try GPSDHarness.freePort())
      mqtt = \(endpoint)
      mqtt-topic = owntracks/local/dev
      mqtt-username = fleet
      mqtt-password-file = \(passwordFile)
      \(extra)
      """)
    return try DaemonProcess(
      arguments: ["--config", config], environment: daemonEnvironment(state: directory.path))
  }

  /// The password as it crosses the wire (hex, as the squatter prints what it received).
  static var passwordHex: String { password.utf8.map { String(format: "%02x", $0) }.joined() }

  /// A squatter on 127.0.0.1:<port> while no broker is there: waymarkd refuses it, names it in
  /// its log, and the squatter is never connected to. The control: with the squatter's user
  /// configured as the broker's (`mqtt-broker-user`), the same daemon connects and the squatter
  /// receives the password — the check is what kept it out. Before, every daemon connected.
  @Test func aSquatterOnTheBrokersPortGetsNothingNotEvenThePassword() async throws {
    let port = try GPSDHarness.freePort()
    let squatter = try await Self.squat(["tcp", "127.0.0.1", String(port)])
    defer { squatter.signal(SIGKILL) }

    let refused = try TemporaryDirectory()
    let daemon = try Self.daemon(refused, mqtt: "127.0.0.1:\(port)")
    defer { if daemon.isRunning { daemon.signal(SIGKILL) } }
    try await daemon.waitForLine {
      $0.contains(
        "not connecting to 127.0.0.1:\(port): 127.0.0.1:\(port) is held by \(Self.squatterName)")
    }
    // Three attempts (1 s, then 2 s of backoff): none reached the squatter.
    try await Task.sleep(for: .seconds(4))
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0, "\(daemon.logText)")
    #expect(!squatter.log.contains("accepted"), "\(squatter.logText)")

    let trusting = try TemporaryDirectory()
    let control = try Self.daemon(
      trusting, mqtt: "127.0.0.1:\(port)", extra: "mqtt-broker-user = \(Self.squatterName)")
    defer { if control.isRunning { control.signal(SIGKILL) } }
    try await squatter.waitForLine(timeout: .seconds(20)) { $0.hasPrefix("received") }
    #expect(squatter.log.contains { $0.contains(Self.passwordHex) }, "\(squatter.logText)")
    control.signal(SIGTERM)
    _ = try await control.waitForExit()
  }

  /// The broker listens on ::1 only, a squatter on 127.0.0.1 (the address `localhost` resolves
  /// to first here): `mqtt = localhost:<port>` reaches the broker over ::1, and the squatter is
  /// never connected to. Before, libmosquitto resolved the name itself and sent the password
  /// to 127.0.0.1.
  @Test(
    .enabled(
      if: (try? String(contentsOfFile: "/proc/net/if_inet6", encoding: .utf8))?
        .contains("00000000000000000000000000000001") == true,
      "needs the IPv6 loopback address ::1"))
  func localhostGoesToTheAddressWhoseListenerIsTheBrokers() async throws {
    let directory = try TemporaryDirectory()
    let broker = try await Mosquitto(
      directory: directory, address: "::1", extra: "allow_anonymous true")
    defer { broker.process.signal(SIGKILL) }
    let squatter = try await Self.squat(["tcp", "127.0.0.1", String(broker.port)])
    defer { squatter.signal(SIGKILL) }

    let daemon = try Self.daemon(directory, mqtt: "localhost:\(broker.port)")
    defer { if daemon.isRunning { daemon.signal(SIGKILL) } }
    try await daemon.waitForLine { $0.contains("MQTT: connected to localhost:\(broker.port)") }
    try await broker.process.waitForLine { $0.contains("New client connected from ::1") }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0, "\(daemon.logText)")
    #expect(!squatter.log.contains("accepted"), "\(squatter.logText)")
  }

  /// `mqtt = unix:<path>`: mosquitto's socket (`listener 0 <path>`, in a directory of root's)
  /// carries the daemon's messages; a socket a squatter made in a world-writable sticky
  /// directory is refused by its owner, and the squatter is never connected to.
  @Test func aUnixSocketIsTheBrokersOrRefused() async throws {
    let directory = try TemporaryDirectory()
    let socket = directory.file("mosquitto.sock")
    let broker = try await Mosquitto(
      directory: directory, extra: "listener 0 \(socket)\nallow_anonymous true")
    defer { broker.process.signal(SIGKILL) }
    let subscriber = try subscribe(
      port: broker.port, topic: "owntracks/local/dev/waypoints", id: "sub-unix")
    defer { subscriber.signal(SIGKILL) }
    try await broker.process.waitForLine { $0.contains("sub-unix") }
    let daemon = try Self.daemon(directory, mqtt: "unix:\(socket)")
    defer { if daemon.isRunning { daemon.signal(SIGKILL) } }
    try await daemon.waitForLine { $0.contains("MQTT: connected to unix:\(socket)") }
    // The places message (retained, sent at each start) arrived through the socket.
    try await subscriber.waitForLine { $0.contains(#""_type":"waypoints""#) }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0, "\(daemon.logText)")

    let shared = try TemporaryDirectory()
    chmod(shared.path, 0o1777)
    let planted = shared.file("mosquitto.sock")
    let squatter = try await Self.squat(["unix", planted])
    defer { squatter.signal(SIGKILL) }
    let refused = try TemporaryDirectory()
    let second = try Self.daemon(refused, mqtt: "unix:\(planted)")
    defer { if second.isRunning { second.signal(SIGKILL) } }
    try await second.waitForLine {
      $0.contains("not connecting to unix:\(planted): \(planted) is owned by \(Self.squatterName)")
    }
    try await Task.sleep(for: .seconds(2))
    second.signal(SIGTERM)
    #expect(try await second.waitForExit() == 0, "\(second.logText)")
    #expect(!squatter.log.contains("accepted"), "\(squatter.logText)")
  }
}
