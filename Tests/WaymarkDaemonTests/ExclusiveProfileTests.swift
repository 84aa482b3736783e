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
  /// network namespace with a real gpsd on 127.0.0.1:2947, a process of another user gets
  /// nothing from gpsd, while user `waymark` (waymarkd) and root do.
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
    for user in ["waymark", "wmtest-b"] where getpwnam(user) == nil {
      let made = try CommandRun.run(
        "/usr/sbin/useradd", ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin", user])
      #expect(made.status == 0, "\(made.stderr)")
    }
    let control = destination.file("gpsd.sock")
    // In a fresh network namespace: loopback up, the rule loaded, gpsd listening, then one
    // connection attempt per user (exit status and first line printed for each).
    let script = """
      set -u
      ip link set lo up
      nft -f '\(rules)' || exit 3
      gpsd -N -n -S 2947 -F '\(control)' 2>/dev/null &
      gpsd=$!
      for try in $(seq 50); do gpspipe -w -n 1 127.0.0.1:2947 >/dev/null 2>&1 && break; sleep 0.1; done
      for user in wmtest-b waymark root; do
        line=$(setpriv --reuid="$user" --regid="$(id -g "$user")" --clear-groups \\
          timeout 5 gpspipe -w -n 1 127.0.0.1:2947 2>/dev/null | head -n 1 | tr -d '\\r')
        echo "$user ${line:-nothing}"
      done
      line=$(setpriv --reuid=wmtest-b --regid="$(id -g wmtest-b)" --clear-groups \\
        timeout 5 gpspipe -w -n 1 '[::1]:2947' 2>/dev/null | head -n 1 | tr -d '\\r')
      echo "wmtest-b-ipv6 ${line:-nothing}"
      kill "$gpsd"
      """
    let run = try CommandRun.run("/usr/bin/unshare", ["--net", "/bin/sh", "-c", script])
    #expect(run.status == 0, "\(run.stderr)")
    let results = Dictionary(
      run.output.split(separator: "\n").compactMap { line -> (String, String)? in
        guard let space = line.firstIndex(of: " ") else { return nil }
        return (String(line[..<space]), String(line[line.index(after: space)...]))
      }, uniquingKeysWith: { $1 })
    #expect(results["wmtest-b"] == "nothing", "\(run.output)")
    #expect(results["wmtest-b-ipv6"] == "nothing", "\(run.output)")
    #expect(results["waymark"]?.hasPrefix(#"{"class":"VERSION""#) == true, "\(run.output)")
    #expect(results["root"]?.hasPrefix(#"{"class":"VERSION""#) == true, "\(run.output)")
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
