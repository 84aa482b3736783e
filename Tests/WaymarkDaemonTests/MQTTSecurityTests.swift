import Foundation
import Testing
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

/// `command` run to its end as the attacker's system user (through setpriv).
private func runAsAttacker(_ command: [String]) throws -> CommandRun {
  let ids = try systemUser("wmtest-mqtt")
  return try CommandRun.run(
    "/usr/bin/setpriv",
    ["--reuid=\(ids.uid)", "--regid=\(ids.gid)", "--clear-groups", "--"] + command)
}

/// This machine's first IPv4 address that is not loopback, on an interface that is up: a
/// broker there is reached by address, as a remote one would be.
private func nonLoopbackAddress() -> String? {
  var list: UnsafeMutablePointer<ifaddrs>?
  guard getifaddrs(&list) == 0, let first = list else { return nil }
  defer { freeifaddrs(list) }
  var entry: UnsafeMutablePointer<ifaddrs>? = first
  while let current = entry {
    defer { entry = current.pointee.ifa_next }
    let flags = Int32(current.pointee.ifa_flags)
    guard let address = current.pointee.ifa_addr, address.pointee.sa_family == AF_INET,
      flags & Int32(IFF_UP) != 0, flags & Int32(IFF_LOOPBACK) == 0
    else { continue }
    var text = [CChar](repeating: 0, count: Int(INET_ADDRSTRLEN))
    address.withMemoryRebound(to: sockaddr_in.self, capacity: 1) { inet in
      var raw = inet.pointee.sin_addr
      _ = inet_ntop(AF_INET, &raw, &text, socklen_t(text.count))
    }
    return String(decoding: text.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
  }
  return nil
}

/// Whether nothing listens on TCP port 8883 of 127.0.0.1 (the TLS test needs that port).
private func port8883IsFree() -> Bool {
  let descriptor = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
  guard descriptor >= 0 else { return false }
  defer { close(descriptor) }
  var reuse: Int32 = 1
  setsockopt(descriptor, SOL_SOCKET, SO_REUSEADDR, &reuse, socklen_t(MemoryLayout<Int32>.size))
  var address = sockaddr_in()
  address.sin_family = sa_family_t(AF_INET)
  address.sin_port = UInt16(8883).bigEndian
  address.sin_addr.s_addr = UInt32(0x7F00_0001).bigEndian
  return withUnsafePointer(to: &address) {
    $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
      bind(descriptor, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
    }
  }
}

/// A throw-away CA (`ca.crt`), a server certificate it signed for `addresses` (`server.crt`,
/// `server.key`), and a second, unrelated CA (`other-ca.crt`), made with `openssl` in `directory`.
func makeCertificates(in directory: String, addresses: [String]) throws {
  let names = addresses.map { "IP:\($0)" }.joined(separator: ",")
  let script = """
    set -e
    cd '\(directory)'
    openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 1 \\
      -subj /CN=waymark-test-ca 2>/dev/null
    openssl req -x509 -newkey rsa:2048 -nodes -keyout other-ca.key -out other-ca.crt -days 1 \\
      -subj /CN=waymark-other-ca 2>/dev/null
    openssl req -newkey rsa:2048 -nodes -keyout server.key -out server.csr \\
      -subj /CN=\(addresses[0]) 2>/dev/null
    printf 'subjectAltName=\(names)' > san.ext
    openssl x509 -req -in server.csr -CA ca.crt -CAkey ca.key -CAcreateserial \\
      -out server.crt -days 1 -extfile san.ext 2>/dev/null
    chmod 0644 ca.crt other-ca.crt server.crt server.key
    """
  let made = try CommandRun.run("/bin/sh", ["-c", script])
  guard made.status == 0 else { throw TestFailure(description: "openssl: \(made.stderr)") }
}

/// The line a daemon writes when its MQTT link came up, or the first one that says it failed.
private func linkOutcome(_ daemon: DaemonProcess) async throws -> String {
  try await daemon.waitForLine(timeout: .seconds(30)) {
    $0.contains("MQTT: connected") || ($0.contains("MQTT:") && $0.contains("retrying"))
  }
}

/// The MQTT link is safe by default (issue 20, point 7): each attack is a real process of its
/// own against the real daemon and a real mosquitto.
@Suite(
  .serialized,
  .enabled(if: gpsdInstalled, "gpsd is not installed (/usr/sbin/gpsd)"),
  .enabled(
    if: mosquittoInstalled, "needs Debian's mosquitto and mosquitto-clients (install-deps.sh)"),
  .enabled(if: isRoot, "runs the attacker as a system user (setpriv) and mosquitto as root"))
struct MQTTSecurityTests {
  static let topic = "owntracks/test/secure"

  /// Port 8883 means TLS, verified. An impostor listening in plaintext on 8883 gets nothing (it
  /// used to get the user name and password in the clear and every position); a TLS broker is
  /// refused when its certificate is not signed by the system's CAs (the default) or by a wrong
  /// `mqtt-cafile`, and accepted with the right one, where a TLS subscriber receives the places.
  @Test(.enabled(if: port8883IsFree(), "TCP port 8883 of 127.0.0.1 is in use"))
  func port8883IsTLSVerifiedAgainstTheSystemStore() async throws {
    let directory = try TemporaryDirectory()
    let d = directory.path
    try makeCertificates(in: d, addresses: ["127.0.0.1"])
    let rig = try await DaemonRig.start(places: [("home", "Home", Commute.home)])
    defer { rig.stop() }
    try directory.write("password", "s3cret\n")
    chmod(directory.file("password"), 0o600)
    func launch(_ extra: String) throws -> DaemonProcess {
      try rig.directory.write(
        "waymark.conf",
        "gpsd = 127.0.0.1:\(rig.gpsd.port)\nsave-interval = 3600\nmqtt = 127.0.0.1:8883\n"
          + "mqtt-topic = \(Self.topic)\nmqtt-username = fleet\n"
          + "mqtt-password-file = \(d)/password\n" + extra)
      return try rig.launch()
    }
    func stop(_ daemon: DaemonProcess) async throws {
      daemon.signal(SIGTERM)
      #expect(try await daemon.waitForExit() == 0)
    }

    // An impostor on 8883 that speaks plaintext MQTT.
    let impostorDirectory = try TemporaryDirectory()
    // (mosquitto_sub itself speaks TLS to 8883: the eavesdropper reads on a second listener.)
    let side = try GPSDHarness.freePort()
    let impostor = try await Mosquitto(
      directory: impostorDirectory, port: 8883,
      extra: "allow_anonymous true\nlistener \(side) 127.0.0.1")
    let eavesdropper = try subscribe(port: side, topic: "#", id: "sub-impostor")
    try await impostor.process.waitForLine { $0.contains("sub-impostor") }
    let fooled = try launch("")
    let outcome = try await linkOutcome(fooled)
    #expect(!outcome.contains("MQTT: connected"), "\(outcome)")
    #expect(!impostor.process.log.contains { $0.contains("u'fleet'") }, "credentials in clear")
    try await stop(fooled)
    #expect(!eavesdropper.log.contains { $0.hasPrefix(Self.topic) }, "\(eavesdropper.logText)")
    eavesdropper.signal(SIGTERM)
    try await impostor.stop()

    // A TLS broker on 8883 with a certificate of a throw-away CA.
    let broker = try await Mosquitto(
      directory: directory, port: 8883,
      extra: """
        allow_anonymous true
        cafile \(d)/ca.crt
        certfile \(d)/server.crt
        keyfile \(d)/server.key
        """)
    // No mqtt-cafile: the system's CA store does not know that CA.
    let untrusted = try launch("")
    #expect(try await !linkOutcome(untrusted).contains("MQTT: connected"))
    try await stop(untrusted)
    // A CA file of another CA.
    let wrong = try launch("mqtt-cafile = \(d)/other-ca.crt\n")
    #expect(try await !linkOutcome(wrong).contains("MQTT: connected"))
    try await stop(wrong)
    #expect(!broker.process.log.contains { $0.contains("u'fleet'") })

    // The right CA: connected, and a TLS subscriber receives the places.
    let subscriber = try subscribe(
      port: 8883, topic: Self.topic + "/#", id: "sub-tls8883", options: "--cafile \(d)/ca.crt")
    try await broker.process.waitForLine { $0.contains("sub-tls8883") }
    let trusted = try launch("mqtt-cafile = \(d)/ca.crt\n")
    let trustedOutcome = try await linkOutcome(trusted)
    #expect(trustedOutcome.contains("MQTT: connected to 127.0.0.1:8883"), "\(trusted.logText)")
    try await subscriber.waitForLine { $0.hasPrefix(Self.topic + "/waypoints ") }
    #expect(trusted.log.contains { $0.contains("over TLS") })
    #expect(broker.process.log.contains { $0.contains("u'fleet'") })
    try await stop(trusted)
    subscriber.signal(SIGTERM)
    try await broker.stop()
  }

  /// A password file other users may read is refused at start (exit 78, naming the file and its
  /// mode): another local user reads it at 0644; at 0600 they cannot, and the daemon connects.
  @Test func aPasswordFileOthersMayReadIsRefusedAtStart() async throws {
    let directory = try TemporaryDirectory()
    let d = directory.path
    chmod(d, 0o755)
    let made = try CommandRun.run(
      "/usr/bin/mosquitto_passwd", ["-b", "-c", "\(d)/passwd", "fleet", "s3cret"])
    try #require(made.status == 0, "\(made.stderr)")
    let broker = try await Mosquitto(
      directory: directory, extra: "allow_anonymous false\npassword_file \(d)/passwd")
    let password = try directory.write("mqtt-password", "s3cret\n")
    chmod(password, 0o644)
    let rig = try await DaemonRig.start(
      places: [("home", "Home", Commute.home)],
      extraConfig: "mqtt = 127.0.0.1:\(broker.port)\nmqtt-topic = \(Self.topic)\n"
        + "mqtt-username = fleet\nmqtt-password-file = \(password)\n")
    defer { rig.stop() }

    // The attack: another user reads the password.
    let stolen = try runAsAttacker(["/bin/cat", password])
    #expect(stolen.status == 0 && stolen.output.contains("s3cret"))
    let refused = try rig.launch()
    let status = try? await refused.waitForExit(timeout: .seconds(15))
    #expect(status == 78, "\(refused.logText)")
    #expect(
      refused.log.contains { $0.contains("'\(password)'") && $0.contains("mode 0644") },
      "\(refused.logText)")
    #expect(!refused.logText.contains("s3cret"))
    if status == nil { refused.signal(SIGKILL) }

    chmod(password, 0o600)
    let denied = try runAsAttacker(["/bin/cat", password])
    #expect(denied.status != 0 && !denied.output.contains("s3cret"))
    let daemon = try rig.launch()
    try await daemon.waitForLine { $0.contains("MQTT: connected to 127.0.0.1:\(broker.port)") }
    daemon.signal(SIGTERM)
    #expect(try await daemon.waitForExit() == 0)
    try await broker.stop()
  }

  /// Plaintext to a broker at a non-loopback address: a warning at start, once, and a
  /// `setWaypoints` that another user publishes there is ignored and logged (it used to become a
  /// place); over TLS to the same address the same command is taken, with no warning.
  @Test(.enabled(if: nonLoopbackAddress() != nil, "no non-loopback IPv4 address is up"))
  func plaintextToARemoteBrokerWarnsAndTakesNoCommand() async throws {
    let address = try #require(nonLoopbackAddress())
    let directory = try TemporaryDirectory()
    let d = directory.path
    try makeCertificates(in: d, addresses: [address])
    let tlsPort = try GPSDHarness.freePort()
    let broker = try await Mosquitto(
      directory: directory, address: address,
      extra: """
        allow_anonymous true
        listener \(tlsPort) \(address)
        cafile \(d)/ca.crt
        certfile \(d)/server.crt
        keyfile \(d)/server.key
        """)
    let rig = try await DaemonRig.start(places: [])
    defer { rig.stop() }
    func launch(_ extra: String) throws -> DaemonProcess {
      try rig.directory.write(
        "waymark.conf",
        "gpsd = 127.0.0.1:\(rig.gpsd.port)\nsave-interval = 3600\nmqtt-topic = \(Self.topic)\n"
          + "mqtt-interval = 3600\n" + extra)
      return try rig.launch()
    }
    func forge(_ name: String, _ options: [String]) throws {
      let payload =
        #"{"_type":"cmd","action":"setWaypoints","waypoints":{"_type":"waypoints","waypoints":[{"_type":"waypoint","desc":"\#(name)","lat":52.5,"lon":13.4,"rad":50,"rid":"\#(name.lowercased())"}]}}"#
      let run = try runAsAttacker(
        [
          "/usr/bin/mosquitto_pub", "-h", address, "-q", "1", "-t", Self.topic + "/cmd", "-m",
          payload,
        ]
          + options)
      #expect(run.status == 0, "\(run.stderr)")
    }
    func places() throws -> [String] {
      try Database(path: rig.store).read { try PlaceRepository($0).all() }.map(\.name)
    }

    let plain = try launch("mqtt = \(address):\(broker.port)\n")
    try await plain.waitForLine { $0.contains("MQTT: connected to \(address):\(broker.port)") }
    #expect(plain.log.filter { $0.contains("plaintext to \(address):\(broker.port)") }.count == 1)
    try forge("Forged", ["-p", "\(broker.port)"])
    let verdict = try await plain.waitForLine {
      $0.contains("MQTT: ignored a command") || $0.contains("from setWaypoints")
    }
    #expect(verdict.contains("MQTT: ignored a command on \(Self.topic)/cmd"), "\(verdict)")
    #expect(try places() == [])
    plain.signal(SIGTERM)
    #expect(try await plain.waitForExit() == 0)

    let tls = try launch("mqtt = \(address):\(tlsPort)\nmqtt-cafile = \(d)/ca.crt\n")
    try await tls.waitForLine { $0.contains("MQTT: connected to \(address):\(tlsPort)") }
    try forge("Office", ["-p", "\(tlsPort)", "--cafile", "\(d)/ca.crt"])
    try await tls.waitForLine { $0.contains("1 place(s) from setWaypoints") }
    #expect(try places() == ["Office"])
    #expect(!tls.logText.contains("plaintext to"))
    #expect(!tls.logText.contains("ignored a command"))
    tls.signal(SIGTERM)
    #expect(try await tls.waitForExit() == 0)
    try await broker.stop()
  }
}
