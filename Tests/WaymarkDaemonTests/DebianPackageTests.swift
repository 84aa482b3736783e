import Foundation
import Testing
import WaymarkTesting

/// The Debian package of `Scripts/package-deb.sh` and the real installation by
/// `Scripts/install.sh`: both install for real on a throw-away overlay of this machine's root
/// with systemd 252 as PID 1 (`Scripts/overlay-systemd-boot.sh`), so the maintainer scripts,
/// `systemd-sysusers`, the unit's enablement and start, and the daemon's own grant all run, and
/// nothing of it reaches the host.
@Suite(.serialized) struct DebianPackageTests {
  /// The static-runtime release binaries that `Scripts/test.sh` builds.
  static let releaseDirectory = packageFile(".build/release")
  static let store = "/var/lib/waymark/waymark.db"

  /// Every file the package installs.
  static let packageFiles: Set<String> = [
    "/etc/waymark/waymark.conf",
    "/lib/systemd/system/waymark-identify.socket",
    "/lib/systemd/system/waymark-identify@.service",
    "/lib/systemd/system/waymarkd.service",
    "/lib/udev/rules.d/61-waymark.rules",
    "/usr/bin/waymark",
    "/usr/bin/waymarkd",
    "/usr/lib/sysusers.d/waymark.conf",
    "/usr/libexec/waymark/waymark-identify",
    "/usr/share/bash-completion/completions/waymark",
    "/usr/share/doc/waymark/README.md.gz",
    "/usr/share/doc/waymark/changelog.Debian.gz",
    "/usr/share/doc/waymark/copyright",
    "/usr/share/fish/vendor_completions.d/waymark.fish",
    "/usr/share/lintian/overrides/waymark",
    "/usr/share/man/man1/waymark.1.gz",
    "/usr/share/man/man5/waymark.conf.5.gz",
    "/usr/share/man/man8/waymarkd.8.gz",
    "/usr/share/polkit-1/actions/org.waymark.location.policy",
    "/usr/share/zsh/vendor-completions/_waymark",
  ]

  /// The link `systemctl enable` makes and deb-systemd-helper's record of it.
  static let enablement: Set<String> = [
    "/etc/systemd/system/multi-user.target.wants/waymarkd.service",
    "/var/lib/systemd/deb-systemd-helper-enabled/waymarkd.service.dsh-also",
  ]

  /// Why these tests cannot run here, or `nil`.
  static var impossibility: String? {
    if let reason = SystemdBootTests.impossibility { return reason }
    for tool in ["/usr/bin/dpkg-deb", "/usr/bin/dpkg-shlibdeps", "/usr/bin/lintian"]
    where !FileManager.default.isExecutableFile(atPath: tool) {
      return "\(tool) is missing (Scripts/install-deps.sh installs lintian and dpkg-dev)"
    }
    for binary in ["waymark", "waymark-identify"] {
      let path = "\(releaseDirectory)/\(binary)"
      guard FileManager.default.isExecutableFile(atPath: path) else {
        return "no \(path): swift build -c release -j 2 --static-swift-stdlib (Scripts/test.sh)"
      }
      if (try? runTool("/usr/bin/ldd", [path]).output.contains("libswiftCore")) != false {
        return "\(path) uses the shared Swift runtime (build it with --static-swift-stdlib)"
      }
    }
    if FileManager.default.fileExists(atPath: "/var/lib/dpkg/info/waymark.list") {
      return "the waymark package is installed on this machine"
    }
    return nil
  }

  /// Runs a shell command inside the booted root, with a system PATH.
  static func shell(_ boot: SystemdBootTests.Boot, _ command: String) throws -> CommandRun {
    try boot.run(["/usr/bin/env", "PATH=/usr/sbin:/usr/bin:/sbin:/bin", "/bin/sh", "-c", command])
  }

  /// The paths among `paths` that exist (as files or links) inside the booted root.
  static func existing(_ boot: SystemdBootTests.Boot, _ paths: some Sequence<String>) throws
    -> Set<String>
  {
    let list = paths.sorted().map { "'\($0)'" }.joined(separator: " ")
    let run = try shell(boot, "for p in \(list); do [ -e \"$p\" ] && echo \"$p\"; done; true")
    return Set(run.output.split(separator: "\n").map(String.init))
  }

  /// Waits until waymarkd runs under its grant: the status says it waits for gpsd (there is
  /// none in the boot), which the daemon reports only once it is authorized.
  static func waitUntilAuthorizedAndRunning(_ boot: SystemdBootTests.Boot) async throws {
    let state = try await SystemdBootTests.waitFor(boot.systemdPID) {
      $0["ActiveState"] == "active" && $0["SubState"] == "running"
        && $0["StatusText"]?.hasPrefix("waiting for gpsd") == true
    }
    #expect(state["Type"] == "notify")
  }

  /// Binaries with the shared Swift runtime (the debug build here) are refused; so are
  /// unknown arguments.
  @Test(
    .enabled(
      if: ["/usr/bin/dpkg-deb", "/usr/bin/dpkg-shlibdeps"].allSatisfy {
        FileManager.default.isExecutableFile(atPath: $0)
      }, "needs dpkg-dev"))
  func sharedRuntimeBinariesAndBadArgumentsAreRefused() throws {
    let output = try TemporaryDirectory()
    let script = packageFile("Scripts/package-deb.sh")
    let shared = try runTool(
      script, ["--build-dir", Products.buildDirectory.path, "--output", output.path])
    #expect(shared.status == 65)
    #expect(shared.stderr.contains("uses the shared Swift runtime"), "\(shared.stderr)")
    #expect(try FileManager.default.contentsOfDirectory(atPath: output.path).isEmpty)
    let compression = try runTool(script, ["--compression", "zip"])
    #expect(compression.status == 64)
    #expect(compression.stderr.contains("expected xz or gzip"))
    #expect(try runTool(script, ["--bogus"]).status == 64)
  }

  @Test(
    .enabled(
      if: Self.impossibility == nil,
      "needs root, systemd as PID 1 in namespaces, dpkg-dev, lintian and the static release binaries (DebianPackageTests.impossibility says which is missing)"
    ))
  func thePackagePassesLintianInstallsStartsAndPurgesCleanly() async throws {
    let payload = try TemporaryDirectory()
    let build = try runTool(
      packageFile("Scripts/package-deb.sh"),
      ["--build-dir", Self.releaseDirectory, "--output", payload.path, "--compression", "gzip"])
    try #require(build.status == 0, "\(build.stderr)")
    let deb = build.output.trimmingCharacters(in: .whitespacesAndNewlines)
    #expect(deb.hasPrefix(payload.path + "/waymark_") && deb.hasSuffix(".deb"), "\(deb)")

    // lintian: no error and no warning (the overrides file names its reasons).
    let lintian = try runTool("/usr/bin/lintian", [deb])
    let tags = lintian.output.split(separator: "\n").filter {
      $0.hasPrefix("E:") || $0.hasPrefix("W:")
    }
    #expect(tags.isEmpty, "\(lintian.output)")
    #expect(lintian.status == 0, "\(lintian.output)\(lintian.stderr)")

    // Control fields: Depends from dpkg-shlibdeps plus gpsd; the configuration is a conffile.
    let depends = try runTool("/usr/bin/dpkg-deb", ["-f", deb, "Depends"]).output
    for package in ["libc6", "libgps28", "libsqlite3-0", "gpsd", "systemd"] {
      #expect(depends.contains(package), "Depends: \(depends)")
    }
    let contents = try runTool("/usr/bin/dpkg-deb", ["-c", deb]).output
    let files = contents.split(separator: "\n").filter { $0.hasPrefix("-") }.compactMap {
      $0.split(separator: " ").last.map { String($0.dropFirst()) }
    }
    // waymark and waymarkd are one file: one of them is a hard link to the other ("h…
    // ./usr/bin/waymarkd link to ./usr/bin/waymark"), and nothing else is.
    let links = contents.split(separator: "\n").filter { $0.hasPrefix("h") }.map { line in
      line.split(separator: " ").suffix(4).map { String($0.drop { $0 == "." }) }
    }
    #expect(links.count == 1, "\(contents)")
    let link = links.first ?? []
    #expect(
      link == ["/usr/bin/waymarkd", "link", "to", "/usr/bin/waymark"]
        || link == ["/usr/bin/waymark", "link", "to", "/usr/bin/waymarkd"], "\(link)")
    #expect(Set(files).union(link.prefix(1)) == Self.packageFiles)
    #expect(contents.contains("root/root"))
    #expect(!contents.contains("rwxrwx"))

    try FileManager.default.moveItem(atPath: deb, toPath: payload.file("waymark.deb"))
    try FileManager.default.copyItem(
      atPath: "\(Self.releaseDirectory)/waymark", toPath: payload.file("waymark"))
    let boot = try await SystemdBootTests.Boot(
      script: packageFile("Scripts/overlay-systemd-boot.sh"), arguments: [payload.path])
    defer { boot.stop() }
    #expect(try Self.shell(boot, "dpkg-query -W waymark").status != 0)

    // A store that root wrote before the package came: postinst hands it to user waymark.
    let seed = try Self.shell(
      boot,
      "mkdir -p /var/lib/waymark && /payload/waymark auth grant alice:/usr/bin/gnome-maps"
        + " whenInUse --store \(Self.store)")
    #expect(seed.status == 0, "\(seed.stderr)")

    let install = try Self.shell(boot, "dpkg -i /payload/waymark.deb")
    #expect(install.status == 0, "\(install.output)\(install.stderr)")
    #expect(install.output.contains("granted 'waymarkd' always in \(Self.store)"))
    let enabled = try Self.shell(boot, "systemctl is-enabled waymarkd.service")
    #expect(enabled.output == "enabled\n")
    #expect(try Self.existing(boot, Self.enablement) == Self.enablement)
    try await Self.waitUntilAuthorizedAndRunning(boot)
    let grant = try Self.shell(boot, "waymark auth status waymarkd --store \(Self.store)")
    #expect(grant.output.contains(#""status":"authorizedAlways""#), "\(grant.output)")
    let grants = try Self.shell(boot, "waymark auth status --store \(Self.store)")
    #expect(grants.output.contains(#""client":"alice:/usr/bin/gnome-maps","level":"whenInUse""#))
    let owner = try Self.shell(boot, "stat -c %U:%G:%a /var/lib/waymark \(Self.store)")
    #expect(owner.output.hasPrefix("waymark:waymark:770\nwaymark:waymark:"), "\(owner.output)")
    let installed = try Self.shell(
      boot, #"dpkg -L waymark | while read -r p; do [ -f "$p" ] && echo "$p"; done; true"#)
    #expect(Set(installed.output.split(separator: "\n").map(String.init)) == Self.packageFiles)
    let ldd = try Self.shell(
      boot, "ldd /usr/bin/waymarkd /usr/bin/waymark /usr/libexec/waymark/waymark-identify")
    #expect(ldd.status == 0 && !ldd.output.contains("libswift"), "\(ldd.output)")
    // One executable: the two names are one inode, and the daemon runs as /usr/bin/waymarkd
    // (its /proc/<pid>/exe, the identity a client's grant is recorded under, is the name).
    let inodes = try Self.shell(boot, "stat -c %i /usr/bin/waymark /usr/bin/waymarkd")
    let numbers = inodes.output.split(separator: "\n")
    #expect(numbers.count == 2 && numbers[0] == numbers[1], "\(inodes.output)")
    let daemonPID = try #require(SystemdBootTests.show(boot.systemdPID)["MainPID"])
    let exe = try Self.shell(boot, "readlink /proc/\(daemonPID)/exe")
    #expect(exe.output == "/usr/bin/waymarkd\n", "\(exe.output)\(exe.stderr)")
    // The helper links glibc alone (Embedded Swift): no libstdc++, none of the daemon's
    // libraries (docs/security.md, "Least privilege").
    let helperLibraries = try Self.shell(
      boot, "ldd /usr/libexec/waymark/waymark-identify | awk '{print $1}' | sort")
    #expect(
      helperLibraries.output
        == "/lib64/ld-linux-x86-64.so.2\nlibc.so.6\nlibm.so.6\nlinux-vdso.so.1\n",
      "\(helperLibraries.output)")
    // waymarkd pulled in its helper's socket (user waymark, mode 0600).
    let helper = try Self.shell(
      boot,
      "systemctl is-active waymark-identify.socket; stat -c %U:%a /run/waymark-identify.sock")
    #expect(helper.output == "active\nwaymark:600\n", "\(helper.output)\(helper.stderr)")
    let conffile = try Self.shell(boot, "dpkg-query -W -f='${Conffiles}' waymark")
    #expect(conffile.output.contains("/etc/waymark/waymark.conf"))

    // Installing again changes nothing but restarts the daemon (a new main process, running
    // under its grant again); the grant is left alone.
    let before = try #require(SystemdBootTests.show(boot.systemdPID)["MainPID"])
    #expect(before != "0", "the daemon runs before the reinstall")
    let again = try Self.shell(boot, "dpkg -i /payload/waymark.deb")
    #expect(again.status == 0, "\(again.output)\(again.stderr)")
    #expect(again.output.contains("'waymarkd' already has a grant"), "\(again.output)")
    try await Self.waitUntilAuthorizedAndRunning(boot)
    let after = try #require(SystemdBootTests.show(boot.systemdPID)["MainPID"])
    #expect(
      after != "0" && after != before, "MainPID \(before) before the reinstall, \(after) after")

    // An operator's choices survive an upgrade (the same version again runs the same scripts):
    // a disabled unit stays disabled and stopped, a "never" for the daemon stays "never".
    let choose = try Self.shell(
      boot,
      "systemctl disable --now waymarkd.service"
        + " && waymark auth grant waymarkd never --store \(Self.store)")
    #expect(choose.status == 0, "\(choose.stderr)")
    let upgrade = try Self.shell(boot, "dpkg -i /payload/waymark.deb")
    #expect(upgrade.status == 0, "\(upgrade.output)\(upgrade.stderr)")
    #expect(try Self.shell(boot, "systemctl is-enabled waymarkd.service").output == "disabled\n")
    #expect(try SystemdBootTests.show(boot.systemdPID)["ActiveState"] == "inactive")
    let never = try Self.shell(boot, "waymark auth status waymarkd --store \(Self.store)")
    #expect(never.output.contains(#""status":"denied""#), "\(never.output)")

    // remove: the daemon stops, the files go, the edited conffile and the store stay.
    #expect(try Self.shell(boot, "systemctl start waymarkd.service").status == 0)
    _ = try await SystemdBootTests.waitFor(boot.systemdPID) {
      $0["ActiveState"] == "active" && $0["StatusText"]?.hasPrefix("not authorized") == true
    }
    _ = try Self.shell(boot, "echo '# edited' >> /etc/waymark/waymark.conf")
    let remove = try Self.shell(boot, "dpkg -r waymark")
    #expect(remove.status == 0, "\(remove.output)\(remove.stderr)")
    let removed = try SystemdBootTests.show(boot.systemdPID)
    #expect(removed["ActiveState"] == "inactive", "\(removed)")
    #expect(
      try Self.existing(boot, Self.packageFiles.union([Self.store]))
        == ["/etc/waymark/waymark.conf", Self.store])

    // purge: the conffile, /etc/waymark, the store and the enablement go too.
    let purge = try Self.shell(boot, "dpkg --purge waymark")
    #expect(purge.status == 0, "\(purge.output)\(purge.stderr)")
    let leftovers = Self.packageFiles.union(Self.enablement).union([
      "/etc/waymark", "/var/lib/waymark",
    ])
    #expect(try Self.existing(boot, leftovers).isEmpty)
    #expect(try Self.shell(boot, "dpkg-query -W waymark").status != 0)
  }

  /// `Scripts/install.sh` without --destdir: the user, the daemon's grant, the unit enabled and
  /// started; `--uninstall` stops it and removes every installed file but the store;
  /// `--no-enable` neither enables nor starts it; `--uninstall --purge` removes the store and
  /// the configuration too.
  @Test(
    .enabled(
      if: Self.impossibility == nil,
      "needs root, systemd as PID 1 in namespaces, dpkg-dev, lintian and the static release binaries (DebianPackageTests.impossibility says which is missing)"
    ))
  func installShEnablesGrantsAndUninstalls() async throws {
    let boot = try await SystemdBootTests.Boot(
      script: packageFile("Scripts/overlay-systemd-boot.sh"),
      arguments: [Products.packageRoot.path])
    defer { boot.stop() }
    let install = "/payload/Scripts/install.sh --build-dir /payload/.build/release"

    // --exclusive without nftables (nft moved aside in this throw-away root) writes nothing at
    // all: no gpsd drop-in that would require the missing rule, no manifest, no binary.
    let withoutNFT = try Self.shell(
      boot,
      "mv /usr/sbin/nft /usr/sbin/nft.aside 2>/dev/null; touch /tmp/before; sleep 1; "
        + install + " --exclusive; status=$?; mv /usr/sbin/nft.aside /usr/sbin/nft 2>/dev/null; "
        + "find /etc /usr/local /usr/share/polkit-1 /var/lib -newer /tmp/before -type f; "
        + "exit $status")
    #expect(withoutNFT.status == 69, "\(withoutNFT.output)\(withoutNFT.stderr)")
    #expect(withoutNFT.stderr.contains("--exclusive needs nftables"), "\(withoutNFT.stderr)")
    #expect(withoutNFT.output.isEmpty, "written without nft: \(withoutNFT.output)")

    let first = try Self.shell(boot, install)
    #expect(first.status == 0, "\(first.output)\(first.stderr)")
    #expect(first.output.contains("granted 'waymarkd' always in \(Self.store)"), "\(first.output)")
    #expect(first.output.contains("waymarkd.service enabled and (re)started"))
    // Control: the same search finds what an install writes.
    let written = try Self.shell(
      boot, "find /etc /usr/local /usr/share/polkit-1 /var/lib -newer /tmp/before -type f")
    #expect(written.output.contains("/usr/local/bin/waymarkd\n"), "\(written.output)")
    let enabled = try Self.shell(boot, "systemctl is-enabled waymarkd.service")
    #expect(enabled.output == "enabled\n")
    try await Self.waitUntilAuthorizedAndRunning(boot)
    let grant = try Self.shell(
      boot, "/usr/local/bin/waymark auth status waymarkd --store \(Self.store)")
    #expect(grant.output.contains(#""status":"authorizedAlways""#), "\(grant.output)")

    let second = try Self.shell(boot, install)
    #expect(second.status == 0, "\(second.stderr)")
    #expect(second.output.contains("'waymarkd' already has a grant"), "\(second.output)")
    let manifest = try Self.shell(boot, "cat /usr/local/share/waymark/install-manifest")
    let files = Set(
      manifest.output.split(separator: "\n").compactMap { $0.split(separator: " ").last }
        .map(String.init))
    #expect(
      files.contains("/usr/local/bin/waymarkd") && files.contains("/etc/waymark/waymark.conf"))
    #expect(try Self.existing(boot, files) == files)

    let uninstall = try Self.shell(boot, "/payload/Scripts/install.sh --uninstall")
    #expect(uninstall.status == 0, "\(uninstall.stderr)")
    #expect(uninstall.output.contains("kept: /var/lib/waymark"), "\(uninstall.output)")
    let gone = try SystemdBootTests.show(boot.systemdPID)
    #expect(gone["ActiveState"] == "inactive", "\(gone)")
    let link = "/etc/systemd/system/multi-user.target.wants/waymarkd.service"
    #expect(try Self.existing(boot, files.union([link, Self.store])) == [Self.store])

    // --no-enable: installed and granted, but neither enabled nor started.
    let again = try Self.shell(boot, install + " --no-enable")
    #expect(again.status == 0, "\(again.stderr)")
    #expect(!again.output.contains("enabled and (re)started"), "\(again.output)")
    let disabled = try Self.shell(boot, "systemctl is-enabled waymarkd.service")
    #expect(disabled.output == "disabled\n", "\(disabled.output)")
    #expect(try SystemdBootTests.show(boot.systemdPID)["ActiveState"] == "inactive")
    let purge = try Self.shell(boot, "/payload/Scripts/install.sh --uninstall --purge")
    #expect(purge.status == 0, "\(purge.stderr)")
    #expect(
      try Self.existing(
        boot, files.union([link, "/var/lib/waymark", "/etc/waymark"])
      ).isEmpty)
  }
}
