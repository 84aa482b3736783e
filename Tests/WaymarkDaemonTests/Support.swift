import Foundation
import WaymarkCore
import WaymarkSimulation
import WaymarkStore
import WaymarkTesting

let gpsdInstalled = GPSDHarness.isAvailable
let isRoot = getuid() == 0

/// A system user's uid and gid, created when missing (`useradd --system`, no home directory
/// unless `home` is given, no login shell): the users the tests run clients and attackers as.
/// User `waymark`, the daemon's own, is made by ``daemonUser()`` instead.
func systemUser(_ name: String, home: String? = nil) throws -> (uid: uid_t, gid: gid_t) {
  if name == daemonUserName { return try daemonUser() }
  if getpwnam(name) == nil {
    var arguments = ["--system", "--no-create-home", "--shell", "/usr/sbin/nologin"]
    if let home { arguments += ["--home-dir", home] }
    // A group of the same name left by something else: the user joins it rather than failing
    // ("group exists", exit 9).
    if getgrnam(name) != nil { arguments += ["--gid", name] }
    let run = try CommandRun.run("/usr/sbin/useradd", arguments + [name])
    guard run.status == 0 else { throw TestFailure(description: "useradd \(name): \(run.stderr)") }
  }
  guard let entry = getpwnam(name) else { throw TestFailure(description: "no user \(name)") }
  return (entry.pointee.pw_uid, entry.pointee.pw_gid)
}

/// The name of the daemon's system user and group.
let daemonUserName = "waymark"

/// The daemon's user and group `waymark`, made together as the package makes them: by
/// `systemd-sysusers` from the repository's `systemd/waymark.sysusers` (user, group of the same
/// name as its primary group, home `/var/lib/waymark`). Every test that needs either one asks
/// here, so the order the tests run in cannot leave a group without its user.
func daemonUser() throws -> (uid: uid_t, gid: gid_t) {
  if getpwnam(daemonUserName) == nil {
    let run = try CommandRun.run(
      "/usr/bin/systemd-sysusers", [packageFile("systemd/waymark.sysusers")])
    guard run.status == 0 else {
      throw TestFailure(description: "systemd-sysusers: \(run.stderr)")
    }
  }
  guard let user = getpwnam(daemonUserName), let group = getgrnam(daemonUserName) else {
    throw TestFailure(description: "no user and group \(daemonUserName) after systemd-sysusers")
  }
  guard user.pointee.pw_gid == group.pointee.gr_gid else {
    throw TestFailure(
      description: "user \(daemonUserName)'s primary group is \(user.pointee.pw_gid), "
        + "not group \(daemonUserName) (\(group.pointee.gr_gid))")
  }
  return (user.pointee.pw_uid, user.pointee.pw_gid)
}

/// `waymark agent --socket <socket> <arguments>` run as system user `user`, with `answers` (one
/// per line) on its standard input when given, its output collected as lines.
///
/// The shell runs as root and `setpriv` execs `waymark` itself: a shell already running as the
/// user could not reach a build directory under a parent that only root may enter (a checkout
/// in a `mktemp -d` folder).
func waymarkAgent(
  as user: String, socket: String, arguments: [String] = [], answers: String? = nil
) throws -> DaemonProcess {
  let ids = try systemUser(user)
  let waymark = String(cString: realpath(Products.executable("waymark"), nil))
  let words = ([waymark, "agent", "--socket", socket] + arguments).map { "'\($0)'" }
  let input = answers.map { " <<'END'\n\($0)END\n" } ?? ""
  return try DaemonProcess(
    executable: "/bin/sh",
    arguments: [
      "-c",
      "exec /usr/bin/setpriv --reuid=\(ids.uid) --regid=\(ids.gid) --clear-groups -- "
        + words.joined(separator: " ") + " 1>&2" + input,
    ],
    environment: ["PATH": "/usr/bin:/bin", "HOME": "/"])
}

/// Fails a wait with a message.
struct TestFailure: Error, CustomStringConvertible {
  var description: String
}

/// Waits (on the wall clock: the test's patience, not domain time) until `condition` holds,
/// checking every 20 ms; throws with `what` (evaluated then, so it can say what was seen) when
/// it still does not after `timeout`.
func eventually(
  _ what: @autoclosure () -> String, within timeout: Duration = .seconds(20),
  _ condition: () -> Bool
) async throws {
  let clock = ContinuousClock()
  let deadline = clock.now + timeout
  while !condition() {
    guard clock.now < deadline else {
      throw TestFailure(description: "not within \(timeout): \(what())")
    }
    try await clock.sleep(for: .milliseconds(20))
  }
}

/// A temporary directory removed at deinit.
final class TemporaryDirectory: Sendable {
  let url: URL

  init() throws {
    url = FileManager.default.temporaryDirectory
      .appendingPathComponent("waymarkd-test-\(UUID().uuidString.prefix(8))")
    try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
  }

  var path: String { url.path }

  func file(_ name: String) -> String { url.appendingPathComponent(name).path }

  @discardableResult
  func write(_ name: String, _ text: String) throws -> String {
    let path = file(name)
    try Data(text.utf8).write(to: URL(fileURLWithPath: path))
    return path
  }

  deinit { try? FileManager.default.removeItem(at: url) }
}

/// The real `waymarkd` binary, running, with its standard error collected line by line.
final class DaemonProcess: Sendable {
  let processID: pid_t
  private let lines = Locked<[String]>([])
  private let exitStatus = Locked<Int32?>(nil)

  /// Starts `executable` (`waymarkd` by default) with `arguments` and `environment`
  /// (replacing the test's, but for `LLVM_PROFILE_FILE` and `TSAN_OPTIONS`: in a coverage run,
  /// the child's profile goes where the test run's go, not to `default.profraw` in its
  /// directory; in a `--sanitize=thread` run, the child's reports follow the run's options,
  /// `log_path` say).
  init(
    executable: String = Products.executable("waymarkd"), arguments: [String],
    environment: [String: String]
  ) throws {
    var environment = environment
    for name in ["LLVM_PROFILE_FILE", "TSAN_OPTIONS"] where environment[name] == nil {
      environment[name] = ProcessInfo.processInfo.environment[name]
    }
    let (pid, descriptor) = try ChildProcess.startWithStderrPipe(
      [executable] + arguments, environment: environment)
    processID = pid
    // Weakly: the reader runs as long as the child writes, and a strong reference would keep
    // this object (whose deinit kills the child) alive for as long, so a test that ends without
    // stopping its daemon left it running after the suite.
    ChildProcess.readLines(from: descriptor, threadName: "waymarkd-stderr") { [weak self] line in
      self?.lines.withLock { $0.append(line) }
    }
  }

  deinit {
    if exitStatus.withLock({ $0 }) == nil {
      kill(processID, SIGKILL)
      var status: Int32 = 0
      waitpid(processID, &status, 0)
    }
  }

  /// Every log line so far.
  var log: [String] { lines.withLock { $0 } }

  /// The log as one text, for failure messages.
  var logText: String { log.joined(separator: "\n") }

  /// Waits until a log line satisfies `predicate`; returns it.
  @discardableResult
  func waitForLine(
    timeout: Duration = .seconds(20), _ predicate: (String) -> Bool
  ) async throws -> String {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if let line = log.first(where: predicate) { return line }
      if hasExited { break }
      try await clock.sleep(for: .milliseconds(20))
    }
    if let line = log.first(where: predicate) { return line }
    throw TestFailure(description: "no such log line within \(timeout); log:\n\(logText)")
  }

  /// Waits until the log contains `text` `count` times.
  func waitForCount(_ text: String, _ count: Int, timeout: Duration = .seconds(20)) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if log.filter({ $0.contains(text) }).count >= count { return }
      try await clock.sleep(for: .milliseconds(20))
    }
    throw TestFailure(description: "'\(text)' not seen \(count) times; log:\n\(logText)")
  }

  func signal(_ number: Int32) { kill(processID, number) }

  /// Whether the process has not ended yet (an ended one is reaped here).
  var isRunning: Bool { !hasExited }

  private var hasExited: Bool {
    if exitStatus.withLock({ $0 }) != nil { return true }
    var status: Int32 = 0
    if waitpid(processID, &status, WNOHANG) == processID {
      exitStatus.withLock { $0 = DaemonProcess.decode(status) }
      return true
    }
    return false
  }

  /// Waits for the process to end; returns its exit status (128 + signal when killed).
  func waitForExit(timeout: Duration = .seconds(20)) async throws -> Int32 {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if hasExited, let status = exitStatus.withLock({ $0 }) {
        // Let the reader thread take the last lines.
        try await clock.sleep(for: .milliseconds(50))
        return status
      }
      try await clock.sleep(for: .milliseconds(20))
    }
    throw TestFailure(description: "waymarkd did not exit within \(timeout); log:\n\(logText)")
  }

  /// SIGKILL, as a crash, and reap.
  func crash() async throws {
    kill(processID, SIGKILL)
    _ = try await waitForExit()
  }

  private static func decode(_ status: Int32) -> Int32 {
    let signal = status & 0x7f
    return signal == 0 ? (status >> 8) & 0xff : 128 + signal
  }
}

/// A datagram socket bound where `NOTIFY_SOCKET` points, collecting what the daemon sends.
final class NotifySocket: Sendable {
  /// The value for `NOTIFY_SOCKET` (`@name` for an abstract socket).
  let address: String
  private let descriptor: Int32
  private let pathToRemove: String?
  private let messages = Locked<[String]>([])

  /// Binds a socket file in `directory`, or an abstract name when `directory` is `nil`.
  init(directory: String?) throws {
    // Close-on-exec: a daemon started later must not inherit (and so keep alive) our socket.
    descriptor = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
    guard descriptor >= 0 else { throw TestFailure(description: "socket: \(errno)") }
    var bytes: [UInt8]
    if let directory {
      let path = directory + "/notify.sock"
      unlink(path)
      address = path
      pathToRemove = path
      bytes = Array(path.utf8) + [0]
    } else {
      let name = "waymarkd-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
      address = "@" + name
      pathToRemove = nil
      bytes = [0] + Array(name.utf8)
    }
    var socketAddress = sockaddr_un()
    socketAddress.sun_family = sa_family_t(AF_UNIX)
    withUnsafeMutableBytes(of: &socketAddress.sun_path) { raw in
      for (index, byte) in bytes.enumerated() { raw[index] = byte }
    }
    let length = socklen_t(MemoryLayout<sockaddr_un>.offset(of: \.sun_path)! + bytes.count)
    let bound = withUnsafePointer(to: &socketAddress) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(descriptor, $0, length) }
    }
    guard bound == 0 else {
      close(descriptor)
      throw TestFailure(description: "bind \(address): \(String(cString: strerror(errno)))")
    }
    var timeout = timeval(tv_sec: 0, tv_usec: 50_000)
    setsockopt(
      descriptor, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
  }

  deinit {
    close(descriptor)
    if let pathToRemove { unlink(pathToRemove) }
  }

  /// Receives whatever is waiting (up to 50 ms of waiting).
  private func drain() {
    var buffer = [UInt8](repeating: 0, count: 4096)
    while true {
      let count = recv(descriptor, &buffer, buffer.count, 0)
      if count <= 0 { return }
      let text = String(decoding: buffer[0..<count], as: UTF8.self)
      messages.withLock { $0.append(text) }
    }
  }

  /// Every datagram received so far.
  var all: [String] {
    drain()
    return messages.withLock { $0 }
  }

  /// Every `KEY=value` assignment received so far, in order.
  var assignments: [String] { all.flatMap { $0.split(separator: "\n").map(String.init) } }

  /// Waits until an assignment satisfies `predicate`.
  @discardableResult
  func wait(timeout: Duration = .seconds(20), _ predicate: (String) -> Bool) async throws
    -> String
  {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      if let found = assignments.first(where: predicate) { return found }
      try await clock.sleep(for: .milliseconds(10))
    }
    throw TestFailure(
      description: "no such notification within \(timeout); got: \(assignments)")
  }
}

/// The environment for a daemon under test: a state directory, no inherited systemd variables.
func daemonEnvironment(state: String, extra: [String: String] = [:]) -> [String: String] {
  var environment: [String: String] = [
    "PATH": "/usr/local/bin:/usr/bin:/bin",
    "STATE_DIRECTORY": state,
    "HOME": state,
    "SWIFT_BACKTRACE": "enable=no",
  ]
  for (key, value) in extra { environment[key] = value }
  return environment
}

/// Grants `always` to `client` in the store `waymark.db` of `directory` through the real
/// `waymark auth grant`.
func grantAlways(_ client: String = "waymarkd", directory: String, reduced: Bool = false) throws {
  try grant(client, "always", store: directory + "/waymark.db", reduced: reduced)
}

/// Grants `level` to `client` in `store` through the real `waymark auth grant`.
func grant(_ client: String, _ level: String, store: String, reduced: Bool = false) throws {
  let run = try CommandRun.waymark(
    ["auth", "grant", client, level, "--store", store] + (reduced ? ["--reduced"] : []))
  guard run.status == 0 else {
    throw TestFailure(description: "waymark auth grant failed: \(run.stderr)")
  }
}

/// Adds a place through the real `waymark places add`.
func addPlace(
  store: String, id: String, name: String, at coordinate: Coordinate, radius: Double
) throws {
  let run = try CommandRun.waymark([
    "places", "add", "--store", store, "--id", id, "--name", name,
    "--lat", String(coordinate.latitude), "--lon", String(coordinate.longitude),
    "--radius", String(radius),
  ])
  guard run.status == 0 else {
    throw TestFailure(description: "waymark places add failed: \(run.stderr)")
  }
}

/// The visits in the store, through the store module (a second connection, as the CLI has).
func storedVisits(_ path: String) throws -> [VisitRecord] {
  let database = try Database(path: path, createIfMissing: false)
  return try database.read { try VisitRepository($0).all() }
}
