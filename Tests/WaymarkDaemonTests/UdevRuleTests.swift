import Foundation
import Testing
import WaymarkTesting

@Suite struct UdevRuleTests {
  static let rulePath = packageFile("udev/61-waymark.rules")

  static func rules() throws -> [String] {
    try String(contentsOfFile: rulePath, encoding: .utf8).split(separator: "\n")
      .map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
  }

  /// `vendor:product` of every rule that leads to waymarkd.
  static func matchedIDs() throws -> Set<String> {
    var ids: Set<String> = []
    for rule in try rules() where rule.hasSuffix("GOTO=\"waymark_receiver\"") {
      if let vendor = value(rule, "ATTRS{idVendor}==") {
        ids.insert("\(vendor):\(value(rule, "ATTRS{idProduct}==") ?? "*")")
      } else if let vendor = value(rule, "ENV{ID_VENDOR_ID}==") {
        ids.insert("\(vendor):*")
      }
    }
    return ids
  }

  static func value(_ rule: String, _ key: String) -> String? {
    guard let range = rule.range(of: key + "\"") else { return nil }
    return String(rule[range.upperBound...].prefix { $0 != "\"" })
  }

  @Test func sortsAfterDebiansGPSDRuleAndOnlyAppendsTheWant() throws {
    #expect("61-waymark.rules" > "60-gpsd.rules")
    let rules = try Self.rules()
    let wants = rules.filter { $0.contains("SYSTEMD_WANTS") }
    #expect(wants == ["TAG+=\"systemd\", ENV{SYSTEMD_WANTS}+=\"waymarkd.service\""])
    // It never takes the device: no ownership, mode, links, programs or name changes.
    for key in ["OWNER", "GROUP", "MODE", "SYMLINK", "RUN", "NAME", "PROGRAM", "ENV{ID_MM"] {
      #expect(!rules.contains { $0.contains(key) }, "\(key) in the rule")
    }
    #expect(rules.first == "SUBSYSTEM!=\"tty\", GOTO=\"waymark_end\"")
    #expect(rules.contains("ACTION==\"remove\", GOTO=\"waymark_end\""))
  }

  /// The exclusive profile's rule sorts after Debian's and ours, takes exactly the devices
  /// that either gives to gpsd or waymarkd (by the want they set), and makes them gpsd's, mode
  /// 0600: it changes nothing else (no links, programs or names). What it does to a node is
  /// tested with udev's engine in `ExclusiveProfileTests.theReceiverIsGPSDsAlone`.
  @Test func theExclusiveRuleGivesTheReceiversToGPSDAlone() throws {
    #expect("62-waymark-exclusive.rules" > "61-waymark.rules")
    let rules = try String(
      contentsOfFile: packageFile("udev/62-waymark-exclusive.rules"), encoding: .utf8
    )
    .split(separator: "\n").map(String.init).filter { !$0.hasPrefix("#") && !$0.isEmpty }
    #expect(rules.first == "SUBSYSTEM!=\"tty\", GOTO=\"waymark_exclusive_end\"")
    #expect(
      rules.contains(
        "ENV{SYSTEMD_WANTS}==\"*gpsdctl@*\", GOTO=\"waymark_exclusive_receiver\""))
    #expect(
      rules.contains(
        "ENV{SYSTEMD_WANTS}==\"*waymarkd.service*\", GOTO=\"waymark_exclusive_receiver\""))
    #expect(
      rules.filter { $0.contains("MODE") } == ["OWNER=\"gpsd\", GROUP=\"root\", MODE=\"0600\""])
    for key in ["SYMLINK", "RUN", "NAME", "PROGRAM", "SYSTEMD_WANTS}+=", "SYSTEMD_WANTS}=\""] {
      #expect(!rules.contains { $0.contains(key) }, "\(key) in the rule")
    }
  }

  @Test func theReceiverTableCoversTheKnownChipsAndMatchesItsComments() throws {
    let ids = try Self.matchedIDs()
    let required: Set<String> = [
      "1546:01a5", "1546:01a6", "1546:01a7", "1546:01a8", "1546:01a9",  // u-blox 5…9
      "067b:2303",  // Prolific PL2303 (GlobalSat BU-353, SiRF)
      "091e:0003",  // Garmin
      "10c4:ea60",  // CP210x
      "0e8d:3329",  // MediaTek
      "2c7c:*",  // Quectel
    ]
    #expect(required.isSubset(of: ids), "missing \(required.subtracting(ids))")
    // Every id in the documented table has a rule, and every rule is documented.
    let text = try String(contentsOfFile: Self.rulePath, encoding: .utf8)
    var documented: Set<String> = []
    for line in text.split(separator: "\n") where line.hasPrefix("# ") {
      let word = line.dropFirst(2).prefix { !$0.isWhitespace }
      let parts = word.split(separator: ":")
      if parts.count == 2, parts[0].count == 4, parts[0].allSatisfy(\.isHexDigit) {
        documented.insert(String(word))
      }
    }
    #expect(documented == ids)
    // Each documented id names its source.
    for line in text.split(separator: "\n")
    where documented.contains(
      String(line.dropFirst(2).prefix { !$0.isWhitespace }))
    {
      #expect(line.contains("["), "no source: \(line)")
    }
  }

  /// Debian's rule for every device we match also exists (so gpsd takes it), except the ones
  /// Debian leaves out (Quectel, which gpsd does not know).
  @Test(
    .enabled(
      if: FileManager.default.fileExists(atPath: "/lib/udev/rules.d/60-gpsd.rules"),
      "Debian's 60-gpsd.rules is not installed"))
  func gpsdsRuleKnowsTheSameReceivers() throws {
    let gpsd = try String(contentsOfFile: "/lib/udev/rules.d/60-gpsd.rules", encoding: .utf8)
    var gpsdIDs: Set<String> = []
    for line in gpsd.split(separator: "\n") where !line.hasPrefix("#") {
      if let vendor = Self.value(String(line), "ATTRS{idVendor}=="),
        let product = Self.value(String(line), "ATTRS{idProduct}==")
      {
        gpsdIDs.insert("\(vendor):\(product)")
      }
    }
    let ours = try Self.matchedIDs().filter { !$0.hasSuffix(":*") }
    #expect(ours == gpsdIDs, "ours only: \(ours.subtracting(gpsdIDs))")
  }

  /// `udevadm test` with Debian's rules and ours, on fake sysfs devices, in a private mount
  /// namespace (bookworm has no `udevadm verify`).
  @Test(
    .enabled(if: getuid() == 0, "needs root for a private mount namespace over /sys"),
    .enabled(
      if: ["/usr/bin/udevadm", "/usr/bin/unshare"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: $0)
      }, "needs /usr/bin/udevadm and /usr/bin/unshare"))
  func udevadmWantsGPSDAndWaymarkdForAReceiverOnly() throws {
    let cases: [(String, String, String, String, Bool, Bool)] = [
      // kernel name, vendor, product, interface, gpsd wanted, waymarkd wanted
      ("ttyACM0", "1546", "01a8", "00", true, true),  // u-blox 8
      ("ttyUSB0", "10c4", "ea60", "00", true, true),  // CP210x
      ("ttyUSB1", "2c7c", "0125", "01", false, true),  // Quectel EC25, NMEA port
      ("ttyUSB2", "2c7c", "0125", "02", false, false),  // Quectel EC25, AT port
      ("ttyUSB3", "0403", "6001", "00", false, false),  // FTDI: not a GPS by id
    ]
    for (index, item) in cases.enumerated() {
      let properties = try Self.udevadmTest(
        kernel: item.0, vendor: item.1, product: item.2, interface: item.3, minor: index)
      let wants = (properties["SYSTEMD_WANTS"] ?? "").split(separator: " ").map(String.init)
      #expect(
        wants.contains("gpsdctl@\(item.0).service") == item.4, "\(item): \(wants)")
      #expect(wants.contains("waymarkd.service") == item.5, "\(item): \(wants)")
      if item.5 { #expect(properties["TAGS"]?.contains(":systemd:") == true) }
    }
  }

  /// Builds a USB serial device in a fake sysfs and runs `udevadm test` on it with /sys,
  /// /run/udev and /etc/udev/rules.d replaced inside a private mount namespace.
  static func udevadmTest(
    kernel: String, vendor: String, product: String, interface: String, minor: Int
  ) throws -> [String: String] {
    let root = try TemporaryDirectory()
    let device = "devices/pci0000:00/0000:00:14.0/usb1/1-1"
    let usbInterface = "\(device)/1-1:1.\(interface)"
    let tty = "\(usbInterface)/tty/\(kernel)"
    let manager = FileManager.default
    for directory in [tty, "bus/usb", "class/tty", "rules"] {
      try manager.createDirectory(
        atPath: root.file(directory), withIntermediateDirectories: true)
    }
    try root.write("\(device)/idVendor", vendor + "\n")
    try root.write("\(device)/idProduct", product + "\n")
    try root.write("\(device)/manufacturer", "Test\n")
    try root.write("\(device)/product", "Receiver\n")
    try root.write("\(device)/uevent", "DEVTYPE=usb_device\n")
    try root.write("\(usbInterface)/bInterfaceNumber", interface + "\n")
    try root.write(
      "\(usbInterface)/bInterfaceClass", kernel.hasPrefix("ttyACM") ? "02\n" : "ff\n")
    try root.write("\(usbInterface)/uevent", "DEVTYPE=usb_interface\n")
    let major = kernel.hasPrefix("ttyACM") ? 166 : 188
    try root.write("\(tty)/uevent", "MAJOR=\(major)\nMINOR=\(minor)\nDEVNAME=\(kernel)\n")
    try root.write("\(tty)/dev", "\(major):\(minor)\n")
    try manager.createSymbolicLink(
      atPath: root.file("\(device)/subsystem"), withDestinationPath: root.file("bus/usb"))
    try manager.createSymbolicLink(
      atPath: root.file("\(usbInterface)/subsystem"), withDestinationPath: root.file("bus/usb"))
    try manager.createSymbolicLink(
      atPath: root.file("\(tty)/subsystem"), withDestinationPath: root.file("class/tty"))
    // Relative links, as in the real sysfs, once the tree is mounted on /sys.
    for link in ["\(device)/subsystem", "\(usbInterface)/subsystem", "\(tty)/subsystem"] {
      let target = try manager.destinationOfSymbolicLink(atPath: root.file(link))
      let relative =
        String(repeating: "../", count: link.split(separator: "/").count - 1)
        + String(target.dropFirst(root.path.count + 1))
      try manager.removeItem(atPath: root.file(link))
      try manager.createSymbolicLink(atPath: root.file(link), withDestinationPath: relative)
    }
    let script = """
      set -e
      mount --make-rprivate /
      mount -t tmpfs tmpfs /run/udev 2>/dev/null || { mkdir -p /run/udev; mount -t tmpfs tmpfs /run/udev; }
      cp '\(rulePath)' '\(root.file("rules"))/'
      mount --bind '\(root.file("rules"))' /etc/udev/rules.d
      mount --bind '\(root.path)' /sys
      SYSTEMD_DEVICE_VERIFY_SYSFS=0 udevadm test --action=add '/sys/\(tty)'
      """
    let run = try CommandRun.run("/usr/bin/unshare", ["--mount", "/bin/sh", "-c", script])
    guard run.status == 0 else {
      throw TestFailure(description: "udevadm test failed (\(run.status)): \(run.stderr)")
    }
    var properties: [String: String] = [:]
    for line in run.output.split(separator: "\n") {
      guard let equals = line.firstIndex(of: "="), line.first?.isUppercase == true else {
        continue
      }
      properties[String(line[..<equals])] = String(line[line.index(after: equals)...])
    }
    return properties
  }
}

@Suite struct InstallScriptTests {
  @Test func installsEverythingUnderADestdir() throws {
    let destination = try TemporaryDirectory()
    let build = Products.buildDirectory.path
    let run = try CommandRun.run(
      "/bin/bash",
      [packageFile("Scripts/install.sh"), "--destdir", destination.path, "--build-dir", build])
    #expect(run.status == 0, "\(run.stderr)")
    let manager = FileManager.default
    for path in [
      "/usr/local/bin/waymark", "/usr/local/bin/waymarkd",
      "/etc/systemd/system/waymarkd.service", "/usr/lib/sysusers.d/waymark.conf",
      "/etc/udev/rules.d/61-waymark.rules", "/etc/waymark/waymark.conf",
      "/usr/local/share/doc/waymark/README.md",
    ] {
      #expect(manager.fileExists(atPath: destination.path + path), "missing \(path)")
    }
    #expect(manager.isExecutableFile(atPath: destination.path + "/usr/local/bin/waymarkd"))
    // An edited configuration survives a reinstall.
    try destination.write("etc/waymark/waymark.conf", "client = mine\n")
    let again = try CommandRun.run(
      "/bin/bash",
      [packageFile("Scripts/install.sh"), "--destdir", destination.path, "--build-dir", build])
    #expect(again.status == 0)
    let kept = try String(
      contentsOfFile: destination.file("etc/waymark/waymark.conf"), encoding: .utf8)
    #expect(kept == "client = mine\n")
    let usage = try CommandRun.run("/bin/bash", [packageFile("Scripts/install.sh"), "--bogus"])
    #expect(usage.status == 64)
  }
}
