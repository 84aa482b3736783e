import Foundation
import Testing
import WaymarkIdentify
import WaymarkTesting

/// `waymark-identify`, the helper that holds `CAP_SYS_PTRACE` for waymarkd, run for real on one
/// end of a socketpair (as systemd's `Accept=yes` socket would give it a connection).
@Suite(.serialized, .enabled(if: isRoot, "needs root: a process of another user (setpriv)"))
struct IdentifyHelperTests {
  /// The helper on one end of a `SOCK_SEQPACKET` socketpair; ``socket`` is our end.
  final class Helper {
    let process = Process()
    let socket: Int32

    init(client: String) throws {
      var ends: [Int32] = [-1, -1]
      let type = Int32(SOCK_SEQPACKET.rawValue) | Int32(SOCK_CLOEXEC.rawValue)
      guard socketpair(AF_UNIX, type, 0, &ends) == 0 else {
        throw TestFailure(description: "socketpair: \(String(cString: strerror(errno)))")
      }
      socket = ends[0]
      var timeout = timeval(tv_sec: 10, tv_usec: 0)
      _ = setsockopt(
        socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
      process.executableURL = URL(fileURLWithPath: Products.executable("waymark-identify"))
      process.arguments = ["--client", client]
      process.standardInput = FileHandle(fileDescriptor: ends[1], closeOnDealloc: false)
      var environment = ["SWIFT_BACKTRACE": "enable=no"]
      // In a coverage run, the helper's profile joins the run's (as for DaemonProcess).
      environment["LLVM_PROFILE_FILE"] = ProcessInfo.processInfo.environment["LLVM_PROFILE_FILE"]
      process.environment = environment
      defer { close(ends[1]) }  // the helper's end is the helper's alone
      try process.run()
    }

    deinit {
      close(socket)
      if process.isRunning { process.terminate() }
    }

    /// Sends `bytes` with `descriptor` and returns the answer's bytes (empty: the helper
    /// closed the connection without a word).
    func ask(_ bytes: [UInt8], _ descriptor: Int32?) -> [UInt8]? {
      guard DescriptorMessage.send(bytes, descriptor: descriptor, on: socket) else { return [] }
      return DescriptorMessage.receive(on: socket, capacity: 8192)?.bytes
    }

    /// The helper's exit status, waited for at most 10 s.
    func exitStatus() async throws -> Int32 {
      let clock = ContinuousClock()
      let deadline = clock.now + .seconds(10)
      while process.isRunning, clock.now < deadline {
        try await clock.sleep(for: .milliseconds(20))
      }
      try #require(!process.isRunning, "the helper did not exit")
      return process.terminationStatus
    }
  }

  /// `sleep 60` as user nobody, once it has exec'd (its /proc/<pid>/exe is sleep's).
  static func sleeperOfAnotherUser() async throws -> Process {
    let sleeper = Process()
    sleeper.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
    sleeper.arguments = [
      "--reuid=nobody", "--regid=nogroup", "--clear-groups", "/usr/bin/sleep", "60",
    ]
    try sleeper.run()
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while clock.now < deadline {
      if ProcFS.executablePath(of: sleeper.processIdentifier) == "/usr/bin/sleep" { return sleeper }
      try await clock.sleep(for: .milliseconds(20))
    }
    sleeper.terminate()
    throw TestFailure(description: "setpriv did not exec sleep")
  }

  /// The helper's client asks about a pidfd of another user's process and learns its uid, pid,
  /// start time and executable; about its own loopback TCP connection, the process at the
  /// other end; about a process that has exited, nothing but a failure. A malformed question
  /// ends the connection.
  @Test func answersItsClientAboutPidfdsAndLoopbackConnections() async throws {
    let helper = try Helper(client: "root")
    let sleeper = try await Self.sleeperOfAnotherUser()
    let pidfd = ProcFS.openPIDFD(sleeper.processIdentifier)
    try #require(pidfd >= 0)
    defer { close(pidfd) }
    let answer = try #require(helper.ask([IdentifyRequest.pidfd.rawValue], pidfd))
    let process = try PeerProcess.decode(answer)
    #expect(process.uid == getpwnam("nobody")!.pointee.pw_uid)
    #expect(process.pid == sleeper.processIdentifier)
    #expect(process.executable == "/usr/bin/sleep")
    #expect(process.startTime == ProcFS.startTime(of: sleeper.processIdentifier))

    // A loopback TCP connection of this process: the helper finds this process at the other end.
    let listener = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(listener) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let client = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    defer { close(client) }
    let connected = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        bind(listener, $0, length) == 0 && listen(listener, 1) == 0
          && getsockname(listener, $0, &length) == 0 && connect(client, $0, length) == 0
      }
    }
    try #require(connected)
    let accepted = accept(listener, nil, nil)
    defer { close(accepted) }
    let tcp = try PeerProcess.decode(
      try #require(helper.ask([IdentifyRequest.loopbackTCP.rawValue], accepted)))
    #expect(tcp.pid == getpid())
    #expect(tcp.uid == getuid())

    // The process exits: its pidfd names no process any more.
    kill(sleeper.processIdentifier, SIGKILL)
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(10)
    while ProcFS.isAlive(pidfd: pidfd), clock.now < deadline {
      try await clock.sleep(for: .milliseconds(20))
    }
    let gone = try #require(helper.ask([IdentifyRequest.pidfd.rawValue], pidfd))
    #expect(throws: IdentifyFailure.self) { try PeerProcess.decode(gone) }

    // A question of another kind: no answer, the connection ends.
    #expect(helper.ask([0x58], pidfd) == [])
    #expect(try await helper.exitStatus() == 1)
  }

  /// The files a process maps (`/proc/<pid>/maps`, the path column), by their last component.
  static func mappedFiles(of pid: pid_t) throws -> Set<String> {
    // Read whole by cat: Foundation reads a /proc file (size 0) one page only.
    let run = try CommandRun.run("/bin/cat", ["/proc/\(pid)/maps"])
    try #require(run.status == 0, "\(run.stderr)")
    let maps = run.output
    return Set(
      maps.split(separator: "\n").compactMap { line -> String? in
        // address, permissions, offset, device, inode, then the path after blanks
        let fields = line.split(separator: " ", maxSplits: 5, omittingEmptySubsequences: true)
        guard fields.count == 6 else { return nil }
        let path = fields[5].drop { $0 == " " }
        guard path.hasPrefix("/") else { return nil }
        return path.split(separator: "/").last.map(String.init)
      })
  }

  /// The helper maps its own file and glibc alone (built with Embedded Swift): no Swift
  /// runtime, no libstdc++, none of the libraries of the daemon (libgps, libsqlite3, …), which
  /// is what docs/security.md ("Least privilege") says. Read from the running helper's
  /// `/proc/<pid>/maps` after it answered a question (so everything it loads is loaded), and
  /// from its `DT_NEEDED` entries. Control: the same reading of this test process finds the
  /// Swift runtime and Foundation it maps.
  @Test func mapsItsOwnFileAndGlibcAlone() async throws {
    let helper = try Helper(client: "root")
    let pidfd = ProcFS.openPIDFD(getpid())
    try #require(pidfd >= 0)
    defer { close(pidfd) }
    let answer = try #require(helper.ask([IdentifyRequest.pidfd.rawValue], pidfd))
    #expect(try PeerProcess.decode(answer).pid == getpid())
    let mapped = try Self.mappedFiles(of: helper.process.processIdentifier)
    #expect(mapped == ["waymark-identify", "libc.so.6", "libm.so.6", "ld-linux-x86-64.so.2"])
    let own = try Self.mappedFiles(of: getpid())
    #expect(own.contains("libswiftCore.so") && own.contains("libFoundation.so"), "\(own)")

    let dynamic = try CommandRun.run(
      "/usr/bin/readelf", ["-d", Products.executable("waymark-identify")])
    let needed = dynamic.output.split(separator: "\n").filter { $0.contains("(NEEDED)") }.map {
      $0.split(separator: "[").last.map { String($0.dropLast()) } ?? ""
    }
    #expect(needed.sorted() == ["libc.so.6", "libm.so.6"], "\(dynamic.output)")
  }

  /// A peer that is not the client user (here root, for a helper that serves `nobody`) gets
  /// no answer at all: the helper exits at once. The same question from the client user is
  /// answered (the test above).
  @Test func refusesAPeerThatIsNotItsClient() async throws {
    let helper = try Helper(client: "nobody")
    let sleeper = try await Self.sleeperOfAnotherUser()
    defer { kill(sleeper.processIdentifier, SIGKILL) }
    let pidfd = ProcFS.openPIDFD(sleeper.processIdentifier)
    defer { close(pidfd) }
    let answer = helper.ask([IdentifyRequest.pidfd.rawValue], pidfd)
    #expect(answer == nil || answer == [])
    #expect(try await helper.exitStatus() == 77)
  }

  /// The command line and what standard input must be: `--help` prints the usage on standard
  /// output and exits 0; an unknown option or `--client` without a name exit 64, an unknown
  /// user 78, and a standard input that is a pipe, not a connected Unix socket, 64, each with
  /// its reason on standard error. (The helper that answers, given a socket, is the tests above.)
  @Test func usageErrorsAndAStandardInputThatIsNotASocketAreRefused() throws {
    let helper = Products.executable("waymark-identify")
    let help = try CommandRun.run(helper, ["--help"], input: Data())
    #expect(help.status == 0)
    #expect(help.output.hasPrefix("usage: waymark-identify"), "\(help.output)")
    for arguments in [["--bogus"], ["--client"]] {
      let run = try CommandRun.run(helper, arguments, input: Data())
      #expect(run.status == 64, "\(arguments)")
      #expect(run.stderr.contains("usage: waymark-identify"), "\(arguments): \(run.stderr)")
    }
    let unknown = try CommandRun.run(helper, ["--client", "wm-no-such-user"], input: Data())
    #expect(unknown.status == 78)
    #expect(unknown.stderr.contains("no user 'wm-no-such-user'"), "\(unknown.stderr)")
    let pipe = try CommandRun.run(helper, ["--client", "root"], input: Data())
    #expect(pipe.status == 64)
    #expect(
      pipe.stderr.contains("standard input is not a connected Unix socket"), "\(pipe.stderr)")
  }
}
