import Foundation
import Testing
import WaymarkTesting

private let exclusiveTools = [
  "/usr/sbin/nft", "/usr/bin/unshare", "/usr/bin/gpspipe", "/usr/sbin/gpsd",
]
.allSatisfy { FileManager.default.isExecutableFile(atPath: $0) }

@Suite(
  .enabled(if: isRoot, "needs root: network namespace, nftables, users"),
  .enabled(if: exclusiveTools, "needs nft, unshare, gpsd and gpspipe (Scripts/install-deps.sh)"))
struct ExclusiveProfileTests {
  /// `install.sh --exclusive` installs the nftables rule and its unit; loaded in a private
  /// network namespace with a real gpsd on port 2947 of every address (`-G`), a process of
  /// another user gets nothing from gpsd, over loopback or over another address of the machine
  /// (before: only loopback was closed), while user `waymark` (waymarkd) and root do.
  @Test func onlyWaymarkdReachesGPSD() throws {
    let destination = try TemporaryDirectory()
    let install = try CommandRun.run(
      "/bin/bash",
      [
        packageFile("Scripts/install.sh"), "--destdir", destination.path, "--build-dir",
        Products.buildDirectory.path, "--exclusive",
      ])
    #expect(install.status == 0, "\(install.stderr)")
    let rules = destination.path + "/etc/waymark/exclusive.nft"
    let unit = destination.path + "/etc/systemd/system/waymark-exclusive.service"
    #expect(FileManager.default.fileExists(atPath: unit))
    // With the drop-ins that keep gpsd (and its socket) down without the rule, and the rule that
    // makes the receiver gpsd's alone.
    for path in [
      "/etc/systemd/system/gpsd.service.d/waymark-exclusive.conf",
      "/etc/systemd/system/gpsd.socket.d/waymark-exclusive.conf",
      "/etc/udev/rules.d/62-waymark-exclusive.rules",
    ] {
      #expect(FileManager.default.fileExists(atPath: destination.path + path), "\(path)")
    }
    for user in [daemonUserName, "wmtest-b"] { _ = try systemUser(user) }
    let control = destination.file("gpsd.sock")
    // In a fresh network namespace: loopback up, the rule loaded, gpsd listening, then one
    // connection attempt per user (exit status and first line printed for each).
    let script = """
      set -u
      ip link set lo up
      ip addr add 10.254.0.1/32 dev lo || exit 4
      nft -f '\(rules)' || exit 3
      gpsd -N -n -G -S 2947 -F '\(control)' 2>/dev/null &
      gpsd=$!
      for try in $(seq 50); do gpspipe -w -n 1 127.0.0.1:2947 >/dev/null 2>&1 && break; sleep 0.1; done
      for user in wmtest-b waymark root; do
        for endpoint in 127.0.0.1 ::1 10.254.0.1; do
          line=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \\
            timeout 5 gpspipe -w -n 1 "[$endpoint]:2947" 2>/dev/null | head -n 1 | tr -d '\\r')
          echo "$user-$endpoint ${line:-nothing}"
        done
      done
      kill "$gpsd"
      """
    let run = try CommandRun.run("/usr/bin/unshare", ["--net", "/bin/sh", "-c", script])
    #expect(run.status == 0, "\(run.stderr)")
    let results = Dictionary(
      run.output.split(separator: "\n").compactMap { line -> (String, String)? in
        guard let space = line.firstIndex(of: " ") else { return nil }
        return (String(line[..<space]), String(line[line.index(after: space)...]))
      }, uniquingKeysWith: { $1 })
    // Over IPv4 and IPv6 loopback and another address of the machine alike: the other user gets
    // nothing where waymarkd's user and root (the positive controls, which show gpsd serves that
    // address) get gpsd's greeting.
    for endpoint in ["127.0.0.1", "::1", "10.254.0.1"] {
      #expect(results["wmtest-b-\(endpoint)"] == "nothing", "\(run.output)")
      for user in ["waymark", "root"] {
        #expect(
          results["\(user)-\(endpoint)"]?.hasPrefix(#"{"class":"VERSION""#) == true,
          "\(user) over \(endpoint): \(run.output)")
      }
    }
  }

  /// The receiver while exclusive: udev's own rule engine (`udevadm test`, which applies the
  /// node's owner and mode) runs on a real tty (ttyS0) in a private mount namespace with a
  /// private /dev and /run, with a stand-in for the match of Debian's 60-gpsd.rules (which
  /// needs a USB receiver); with 62-waymark-exclusive.rules the node is gpsd's, mode 0600,
  /// and a process of a dialout user cannot open it; without it (the positive control) the
  /// node is root:dialout 0660 and the same process opens it.
  @Test(
    .enabled(
      if: FileManager.default.fileExists(atPath: "/sys/class/tty/ttyS0")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/udevadm")
        && getpwnam("gpsd") != nil,
      "needs /sys/class/tty/ttyS0, udevadm and gpsd's user"))
  func theReceiverIsGPSDsAlone() throws {
    func receiver(exclusive: Bool) throws -> String {
      let rule = packageFile("udev/62-waymark-exclusive.rules")
      let script = """
        set -eu
        mount --make-rprivate /
        mount -t tmpfs tmpfs /dev
        mknod -m 0666 /dev/null c 1 3
        mknod -m 0600 /dev/ttyS0 c 4 64
        mount -t tmpfs tmpfs /run
        mkdir -p /run/udev/rules.d
        printf 'SUBSYSTEM=="tty", KERNEL=="ttyS0", ENV{SYSTEMD_WANTS}="gpsdctl@%%k.service"\\n' \\
          > /run/udev/rules.d/60-waymark-test-receiver.rules
        if [ \(exclusive ? 1 : 0) = 1 ]; then
          cp '\(rule)' /run/udev/rules.d/62-waymark-exclusive.rules
        fi
        udevadm test --action=add /sys/class/tty/ttyS0 >/dev/null 2>&1
        printf '%s ' "$(stat -c '%U:%G:%a' /dev/ttyS0)"
        setpriv --reuid=nobody --regid=dialout --clear-groups /usr/bin/python3 -c \\
          'import os; os.close(os.open("/dev/ttyS0", os.O_RDONLY | os.O_NONBLOCK | os.O_NOCTTY))' \\
          2>/dev/null && echo opened || echo refused
        """
      let run = try CommandRun.run("/usr/bin/unshare", ["--mount", "/bin/sh", "-c", script])
      #expect(run.status == 0, "\(run.stderr)")
      return run.output.trimmingCharacters(in: .whitespacesAndNewlines)
    }
    #expect(try receiver(exclusive: true) == "gpsd:root:600 refused")
    #expect(try receiver(exclusive: false) == "root:dialout:660 opened")
  }

  /// The unit passes `systemd-analyze verify` without a word.
  @Test(.enabled(if: hasSystemdAnalyze, "systemd-analyze is not installed"))
  func theUnitVerifiesCleanly() throws {
    let run = try runTool(
      systemdAnalyze, ["verify", "--man=no", packageFile("systemd/waymark-exclusive.service")])
    #expect(run.status == 0)
    #expect(run.stderr.isEmpty && run.output.isEmpty, "\(run.stderr)\(run.output)")
  }
}
