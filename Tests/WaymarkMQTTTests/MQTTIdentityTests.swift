import Foundation
import Testing

@testable import WaymarkMQTT

private func hex(_ text: String) -> String { MQTTIdentity.hex(SHA256.hash(Array(text.utf8))) }

private let systemdID128 = "/usr/bin/systemd-id128"

@Suite struct MQTTIdentityTests {
  /// FIPS 180-4's examples and RFC 4231's second HMAC case.
  @Test func sha256AndHMACMatchThePublishedVectors() {
    #expect(hex("") == "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
    #expect(hex("abc") == "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
    #expect(
      hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")
        == "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
    let mac = SHA256.hmac(
      key: Array("Jefe".utf8), message: Array("what do ya want for nothing?".utf8))
    #expect(
      MQTTIdentity.hex(mac) == "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843")
  }

  /// The application-specific id is systemd's: the same as `systemd-id128 machine-id
  /// --app-specific=<id>` prints for this machine.
  @Test(
    .enabled(
      if: FileManager.default.isExecutableFile(atPath: systemdID128)
        && MQTTIdentity.machineID() != nil, "needs systemd-id128 and /etc/machine-id"))
  func appSpecificIDIsSystemds() throws {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: systemdID128)
    process.arguments = ["machine-id", "--app-specific=\(MQTTIdentity.applicationID)"]
    let pipe = Pipe()
    process.standardOutput = pipe
    try process.run()
    let output = pipe.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let expected = String(decoding: output, as: UTF8.self).trimmingCharacters(
      in: .whitespacesAndNewlines)
    let machineID = try #require(MQTTIdentity.machineID())
    let ours = try #require(MQTTIdentity.appSpecificID(machineID: machineID))
    #expect(MQTTIdentity.hex(ours) == expected)
    let identity = MQTTIdentity.current()
    #expect(identity.isFromMachineID)
    #expect(identity.device.hasSuffix("-" + expected.prefix(12)))
  }

  /// Two machines with one host name (a fleet flashed from one image) get different names,
  /// client ids and topics; the machine id never appears in them; the host name is the prefix.
  @Test func identicalHostsGetDifferentIdentities() {
    let first = "0123456789abcdef0123456789abcdef"
    let second = "fedcba9876543210fedcba9876543210"
    let a = MQTTIdentity(hostname: "raspberrypi", machineID: first)
    let b = MQTTIdentity(hostname: "raspberrypi", machineID: second)
    #expect(a.device != b.device && a.clientID != b.clientID && a.topic != b.topic)
    #expect(a.device.hasPrefix("raspberrypi-") && a.device.count == "raspberrypi-".count + 12)
    #expect(a.clientID == "waymark-\(a.device)")
    #expect(a.topic == "owntracks/waymark/\(a.device)")
    #expect(a.tid.count == 2 && a.tid.allSatisfy { $0.isLowercase || $0.isNumber })
    for identity in [a, b] {
      for text in [identity.device, identity.clientID, identity.topic] {
        #expect(!text.contains(first.prefix(12)) && !text.contains(second.prefix(12)))
      }
    }
    // The same machine always gets the same identity.
    #expect(MQTTIdentity(hostname: "raspberrypi", machineID: first) == a)
  }

  /// Without a machine id the host name alone, as before; what a topic level cannot hold is
  /// replaced.
  @Test func withoutAMachineIDTheHostName() {
    let plain = MQTTIdentity(hostname: "van-7", machineID: nil)
    #expect(plain.device == "van-7" && plain.tid == "va" && !plain.isFromMachineID)
    #expect(MQTTIdentity(hostname: "van-7", machineID: "not an id").device == "van-7")
    #expect(MQTTIdentity(hostname: "a/b+c#d e", machineID: nil).device == "a-b-c-d-e")
    #expect(MQTTIdentity(hostname: "", machineID: nil).device == "waymark")
  }
}
