import Foundation
import Testing
import WaymarkMQTT

@Suite struct MQTTSettingsTests {
  @Test(arguments: [
    ("localhost", true), ("LOCALHOST", true), ("127.0.0.1", true), ("127.1.2.3", true),
    ("::1", true), ("[::1]", true), ("::ffff:127.0.0.1", true),
    ("192.0.2.2", false), ("10.0.0.1", false), ("128.0.0.1", false), ("::2", false),
    ("::ffff:10.0.0.1", false), ("broker.example.org", false), ("localhost.example.org", false),
    ("127.0.0.1.example.org", false),
  ])
  func loopbackIsDecidedFromTheLiteralHost(host: String, loopback: Bool) {
    #expect(MQTTSettings.isLoopback(host: host) == loopback, "\(host)")
  }

  /// TLS on 8883, with a CA file or `mqtt-tls = yes`; `mqtt-tls = no` wins over the port.
  @Test func tlsByPortCAFileOrChoice() {
    #expect(!MQTTSettings(host: "b", port: 1883).usesTLS)
    #expect(MQTTSettings(host: "b", port: 8883).usesTLS)
    var settings = MQTTSettings(host: "b", port: 1883)
    settings.caFile = "/ca.crt"
    #expect(settings.usesTLS)
    settings = MQTTSettings(host: "b", port: 1883)
    settings.tls = true
    #expect(settings.usesTLS)
    settings = MQTTSettings(host: "b", port: 8883)
    settings.tls = false
    #expect(!settings.usesTLS)
  }

  /// Without a CA file the broker is verified against the system's store; a CA file replaces it.
  @Test func trustAnchorsAreTheSystemStoreUnlessACAFileIsGiven() {
    var settings = MQTTSettings(host: "b", port: 8883)
    let system = settings.trustAnchors
    if FileManager.default.isReadableFile(atPath: MQTTSettings.systemCAFile) {
      #expect(system.file == MQTTSettings.systemCAFile && system.directory == nil)
    } else {
      #expect(system.file == nil && system.directory == MQTTSettings.systemCAPath)
    }
    settings.caFile = "/etc/waymark/ca.crt"
    #expect(settings.trustAnchors.file == "/etc/waymark/ca.crt")
    #expect(settings.trustAnchors.directory == nil)
  }

  /// The warning and the command gate: plaintext to a remote broker is warned about and takes no
  /// command unless `mqtt-remote-commands`; TLS or loopback is quiet and takes commands.
  @Test func plaintextToARemoteBrokerIsWarnedAboutAndTakesNoCommand() throws {
    var remote = MQTTSettings(host: "192.0.2.2", port: 1883)
    let warning = try #require(remote.plaintextWarning)
    #expect(warning.contains("plaintext to 192.0.2.2:1883") && warning.contains("the positions"))
    #expect(!warning.contains("password"))
    #expect(!remote.acceptsCommands)
    remote.password = "secret"
    #expect(remote.plaintextWarning?.contains("the password and the positions") == true)
    #expect(remote.plaintextWarning?.contains("secret") == false)
    remote.acceptsRemoteCommands = true
    #expect(remote.acceptsCommands)
    #expect(remote.plaintextWarning != nil)

    let tls = MQTTSettings(host: "192.0.2.2", port: 8883)
    #expect(tls.plaintextWarning == nil && tls.acceptsCommands)
    let loopback = MQTTSettings(host: "127.0.0.1", port: 1883)
    #expect(loopback.plaintextWarning == nil && loopback.acceptsCommands)
    var named = MQTTSettings(host: "broker.example.org", port: 8883)
    named.tls = false
    #expect(named.plaintextWarning != nil && !named.acceptsCommands)
  }
}
