import Foundation
import Testing
import WaymarkMQTT
import WaymarkTesting

@testable import WaymarkDaemonConfiguration

/// The `mqtt-*` keys that make the link safe by default.
@Suite struct MQTTConfigurationTests {
  private func parse(_ text: String) throws(DaemonConfigurationError) -> MQTTSettings? {
    try DaemonConfiguration.parse(text, path: "/etc/waymark/waymark.conf", environment: [:]).mqtt
  }

  @Test func tlsAndRemoteCommandKeys() throws {
    let plain = try #require(try parse("mqtt = broker.example.org\n"))
    #expect(plain.tls == nil && !plain.usesTLS && !plain.acceptsCommands)
    let port = try #require(try parse("mqtt = broker.example.org:8883\n"))
    #expect(port.usesTLS && port.acceptsCommands)
    let chosen = try #require(try parse("mqtt = b\nmqtt-tls = yes\nmqtt-remote-commands = on\n"))
    #expect(chosen.tls == true && chosen.usesTLS && chosen.acceptsRemoteCommands)
    let off = try #require(try parse("mqtt = b:8883\nmqtt-tls = no\n"))
    #expect(!off.usesTLS)
    #expect(throws: DaemonConfigurationError.self) { try parse("mqtt = b\nmqtt-tls = maybe\n") }
    #expect(throws: DaemonConfigurationError.self) {
      try parse("mqtt = b\nmqtt-remote-commands = sometimes\n")
    }
  }

  /// `mqtt-tls = no` with a CA file is a contradiction, reported on the `mqtt-tls` line.
  @Test func tlsOffWithACAFileIsAnError() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "mqtt-config-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let ca = directory.appendingPathComponent("ca.crt").path
    try Data("x".utf8).write(to: URL(fileURLWithPath: ca))
    do {
      _ = try parse("mqtt = b\nmqtt-cafile = \(ca)\nmqtt-tls = no\n")
      Issue.record("accepted mqtt-tls = no with mqtt-cafile")
    } catch {
      #expect(error.line == 3 && error.message.contains("contradicts"), "\(error)")
    }
  }

  /// A password file group or others may read is refused, naming the file and its mode (as ssh
  /// refuses a private key); the same file at 0600 (and 0400) is read.
  @Test func aPasswordFileOthersMayReadIsRefused() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "mqtt-config-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let file = directory.appendingPathComponent("mqtt-password").path
    try Data("s3cret\n".utf8).write(to: URL(fileURLWithPath: file))
    let text = "mqtt = b\nmqtt-username = van-7\nmqtt-password-file = \(file)\n"
    for mode: mode_t in [0o644, 0o640, 0o604, 0o620] {
      chmod(file, mode)
      do {
        _ = try parse(text)
        Issue.record("mode \(String(mode, radix: 8)) accepted")
      } catch {
        #expect(error.line == 3, "\(error)")
        #expect(error.message.contains("'\(file)'"), "\(error)")
        #expect(error.message.contains("mode 0\(String(mode, radix: 8))"), "\(error)")
        #expect(!error.message.contains("s3cret"))
      }
    }
    for mode: mode_t in [0o600, 0o400] {
      chmod(file, mode)
      #expect(try parse(text)?.password == "s3cret")
    }
  }
}

/// `waymark status` names the MQTT identity in use.
@Suite struct MQTTStatusTests {
  @Test func statusNamesTheIdentityInUse() throws {
    let directory = FileManager.default.temporaryDirectory.appendingPathComponent(
      "mqtt-status-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    defer { try? FileManager.default.removeItem(at: directory) }
    let config = directory.appendingPathComponent("waymark.conf").path
    try Data("mqtt = 127.0.0.1:1883\nmqtt-client-id = van-7\nmqtt-tid = v7\n".utf8).write(
      to: URL(fileURLWithPath: config))
    let store = directory.appendingPathComponent("none.db").path
    let arguments = ["status", "127.0.0.1:1", "--timeout", "1", "--store", store]
    let configured = try CommandRun.waymark(arguments + ["--config", config])
    let identity = MQTTIdentity.current()
    #expect(
      configured.output.contains(
        "mqtt      client id van-7, topic \(identity.topic), tid v7 (configured in \(config))"),
      "\(configured.output)")
    let missing = directory.appendingPathComponent("missing.conf").path
    let derived = try CommandRun.waymark(arguments + ["--config", missing])
    #expect(
      derived.output.contains(
        "mqtt      client id \(identity.clientID), topic \(identity.topic), tid \(identity.tid)"),
      "\(derived.output)")
    let json = try CommandRun.waymark(arguments + ["--config", config, "--json"])
    #expect(json.output.contains(#""mqttClientID":"van-7""#), "\(json.output)")
  }
}
