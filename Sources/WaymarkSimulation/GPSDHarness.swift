import FoundationEssentials
import Glibc
import Synchronization
import WaymarkCore

/// A private, real gpsd for tests and simulations: `gpsd -N -n -b -D 2 -S <free port> -F <sock>`.
///
/// It handles what goes wrong when tests drive a real gpsd:
/// - gpsd drops root to user `gpsd`: devices must be readable by it (``PseudoTerminal`` does).
/// - a client that connects late misses what was written before its WATCH: use
///   ``waitForWatchers(_:timeout:)`` before writing (it counts `?WATCH` lines in gpsd's log).
/// - gpsd throws away what arrives while it probes drivers and line speeds:
///   ``FakeReceiver/warmUp(gpsd:timeout:)`` writes numbered `$GPTXT` sentences until gpsd
///   echoes them steadily (``waitForEcho(timeout:until:)``).
/// - every gpsd gets its own `GPSD_SHM_KEY`, and the segment is removed afterwards (gpsd
///   itself cannot, once it has dropped root).
/// - stopping sends SIGTERM, then SIGKILL after a grace period.
package final class GPSDHarness: Sendable {
  /// An error starting or talking to gpsd.
  package struct Failure: Error, CustomStringConvertible {
    /// What went wrong, with the tail of gpsd's log when it helps.
    package var description: String
  }

  /// TCP port gpsd listens on (127.0.0.1).
  package let port: UInt16
  /// Path of gpsd's control socket (`-F`), used to add and remove devices.
  package let controlSocket: String
  /// The System V shared-memory key given to gpsd in `GPSD_SHM_KEY`.
  package let sharedMemoryKey: Int32
  /// The gpsd executable.
  package let executable: String
  private let initialDevices: [String]
  private let state = Locked(State())

  private struct State {
    var pid: pid_t = 0
    var watches = 0
    var probeWatches = 0
    var log: [String] = []
    var generation = 0
  }

  private static let counter = Atomic<Int32>(0)

  /// The gpsd binary: `/usr/sbin/gpsd`, or `WAYMARK_GPSD` when set.
  package static var defaultExecutable: String {
    ProcessInfo.processInfo.environment["WAYMARK_GPSD"] ?? "/usr/sbin/gpsd"
  }

  /// Whether a gpsd binary is installed.
  package static var isAvailable: Bool {
    FileManager.default.isExecutableFile(atPath: defaultExecutable)
  }

  /// Starts gpsd on `devices` and waits until it accepts connections.
  ///
  /// - Parameters:
  ///   - devices: device paths gpsd opens at once (`-n`).
  ///   - port: the TCP port; a free one when `nil`.
  ///   - executable: the gpsd binary.
  /// - Throws: ``Failure`` when gpsd does not start or does not listen within 5 s.
  package init(
    devices: [String], port: UInt16? = nil, executable: String = GPSDHarness.defaultExecutable
  ) async throws {
    self.port = try port ?? GPSDHarness.freePort()
    let serial = GPSDHarness.counter.add(1, ordering: .relaxed).newValue
    let pid = getpid()
    self.controlSocket =
      FileManager.default.temporaryDirectory.path + "/waymark-gpsd-\(pid)-\(serial).sock"
    self.sharedMemoryKey = Int32(
      bitPattern: 0x5757_0000 | (UInt32(pid & 0xFF) << 8)
        | UInt32(serial & 0xFF))
    self.executable = executable
    self.initialDevices = devices
    try await launch()
  }

  deinit { stop() }

  /// The endpoint text for clients: `127.0.0.1:<port>`.
  package var endpoint: String { "127.0.0.1:\(port)" }

  /// gpsd's log so far (`-D 2`: warnings and client traffic).
  package var log: [String] { state.withLock { $0.log } }

  /// Client WATCH requests gpsd has received from clients other than this harness's probes,
  /// since it was (re)started.
  package var watcherCount: Int { state.withLock { max(0, $0.watches - $0.probeWatches) } }

  /// The gpsd process id, while it runs.
  package var processID: pid_t? { state.withLock { $0.pid == 0 ? nil : $0.pid } }

  /// Whether gpsd is running.
  package var isRunning: Bool { state.withLock { $0.pid != 0 } }

  private func launch() async throws {
    unlink(controlSocket)
    var arguments = [
      executable, "-N", "-n", "-b", "-D", "2", "-S", String(port), "-F", controlSocket,
    ]
    arguments += initialDevices
    var environment = ProcessInfo.processInfo.environment
    let key = String(UInt32(bitPattern: sharedMemoryKey), radix: 16)
    environment["GPSD_SHM_KEY"] = "0x" + String(repeating: "0", count: 8 - key.count) + key
    let (pid, stderr): (pid_t, Int32)
    do {
      (pid, stderr) = try ChildProcess.startWithStderrPipe(arguments, environment: environment)
    } catch {
      throw Failure(description: String(describing: error))
    }
    let generation = state.withLock { state in
      state.pid = pid
      state.watches = 0
      state.probeWatches = 0
      state.generation += 1
      return state.generation
    }
    ChildProcess.readLines(from: stderr, threadName: "gpsd-log") { [weak self] line in
      self?.record(line, generation: generation)
    }
    let clock = ContinuousClock()
    let deadline = clock.now + .seconds(5)
    while clock.now < deadline {
      if GPSDHarness.canConnect(port: port) { return }
      if !isRunning { break }
      try await clock.sleep(for: .milliseconds(20))
    }
    let tail = log.suffix(10).joined(separator: "\n")
    stop()
    throw Failure(description: "gpsd did not listen on port \(port) within 5 s\n\(tail)")
  }

  private func record(_ line: String, generation: Int) {
    state.withLock { state in
      guard state.generation == generation else { return }
      if line.contains("<= client("), line.contains("?WATCH=") { state.watches += 1 }
      state.log.append(line)
      if state.log.count > 2000 { state.log.removeFirst(1000) }
    }
  }

  /// Waits until `count` clients other than the harness's probes have sent WATCH.
  ///
  /// - Throws: ``Failure`` after `timeout`.
  package func waitForWatchers(_ count: Int = 1, timeout: Duration = .seconds(10)) async throws {
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while watcherCount < count {
      guard clock.now < deadline else {
        throw Failure(description: "no WATCH from \(count) client(s) within \(timeout)")
      }
      try await clock.sleep(for: .milliseconds(10))
    }
  }

  /// Tells gpsd to open `device`, as udev's hotplug script does. Wraps the control socket's
  /// `+path` command.
  package func add(device: String) throws { try control("+\(device)\r\n") }

  /// Tells gpsd to close `device`, as on a USB unplug. Wraps `-path`.
  package func remove(device: String) throws { try control("-\(device)\r\n") }

  private func control(_ command: String) throws {
    let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let pathBytes = Array(controlSocket.utf8)
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
      for (index, byte) in pathBytes.prefix(raw.count - 1).enumerated() { raw[index] = byte }
    }
    let connected = withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
      }
    }
    guard connected == 0 else {
      throw Failure(description: "connect \(controlSocket): \(String(cString: strerror(errno)))")
    }
    _ = Array(command.utf8).withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    var reply = [UInt8](repeating: 0, count: 64)
    var timeout = timeval(tv_sec: 2, tv_usec: 0)
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
    let count = recv(fd, &reply, reply.count, 0)
    let text = count > 0 ? String(decoding: reply[0..<count], as: UTF8.self) : ""
    guard text.hasPrefix("OK") else {
      throw Failure(description: "gpsd control '\(command.dropLast(2))' answered '\(text)'")
    }
  }

  /// Reads what gpsd sends a watcher, NMEA echoes included, until `done` accepts a line.
  ///
  /// The probe has its own WATCH connection, not counted by ``watcherCount``.
  /// - Throws: ``Failure`` after `timeout`.
  package func waitForEcho(timeout: Duration = .seconds(10), until done: (String) -> Bool)
    async throws
  {
    try await probe(timeout: timeout, what: "the expected NMEA echo", until: done)
  }

  private func probe(
    timeout: Duration, what: String, until done: (String) -> Bool
  ) async throws {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
    defer { close(fd) }
    guard GPSDHarness.connect(fd, port: port) else {
      throw Failure(description: "probe could not connect to gpsd on port \(port)")
    }
    state.withLock { $0.probeWatches += 1 }
    let watch = Array("?WATCH={\"enable\":true,\"json\":true,\"nmea\":true};\n".utf8)
    _ = watch.withUnsafeBytes { send(fd, $0.baseAddress, $0.count, 0) }
    let flags = fcntl(fd, F_GETFL)
    _ = fcntl(fd, F_SETFL, flags | O_NONBLOCK)
    var pending: [UInt8] = []
    var buffer = [UInt8](repeating: 0, count: 8192)
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    while clock.now < deadline {
      let count = recv(fd, &buffer, buffer.count, 0)
      if count > 0 {
        pending += buffer[0..<count]
        while let newline = pending.firstIndex(of: 10) {
          let line = String(decoding: pending[..<newline], as: UTF8.self)
          pending.removeSubrange(...newline)
          if done(line) { return }
        }
        continue
      }
      if count == 0 { break }
      try await clock.sleep(for: .milliseconds(5))
    }
    throw Failure(description: "gpsd did not send \(what) within \(timeout)")
  }

  /// Stops gpsd: SIGTERM, then SIGKILL after `grace`; reaps it and removes its shared memory
  /// segment and control socket. Safe to call twice.
  package func stop(grace: Duration = .seconds(2)) {
    let pid = state.withLock { state in
      defer { state.pid = 0 }
      return state.pid
    }
    guard pid != 0 else { return }
    kill(pid, SIGTERM)
    let clock = ContinuousClock()
    let deadline = clock.now + grace
    var status: Int32 = 0
    var reaped = false
    while clock.now < deadline {
      if waitpid(pid, &status, WNOHANG) == pid {
        reaped = true
        break
      }
      usleep(5_000)
    }
    if !reaped {
      kill(pid, SIGKILL)
      waitpid(pid, &status, 0)
    }
    let segment = shmget(key_t(sharedMemoryKey), 0, 0)
    if segment >= 0 { shmctl(segment, IPC_RMID, nil) }
    unlink(controlSocket)
  }

  /// Kills gpsd with SIGKILL at once (a crash), without waiting for it to clean up.
  package func crash() {
    let pid = state.withLock { $0.pid }
    guard pid != 0 else { return }
    kill(pid, SIGKILL)
    stop(grace: .zero)
  }

  /// Starts gpsd again on the same port, control socket, key and initial devices.
  package func restart() async throws {
    stop()
    try await launch()
  }

  // MARK: - Plumbing

  /// A TCP port that was free a moment ago on 127.0.0.1.
  package static func freePort() throws -> UInt16 {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
    defer { close(fd) }
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = 0
    var length = socklen_t(MemoryLayout<sockaddr_in>.size)
    let bound = withUnsafeMutablePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { pointer -> Int32 in
        guard bind(fd, pointer, length) == 0 else { return -1 }
        return getsockname(fd, pointer, &length)
      }
    }
    guard bound == 0 else { throw Failure(description: "bind: \(errno)") }
    return UInt16(bigEndian: address.sin_port)
  }

  static func connect(_ fd: Int32, port: UInt16) -> Bool {
    var address = sockaddr_in()
    address.sin_family = sa_family_t(AF_INET)
    address.sin_addr.s_addr = inet_addr("127.0.0.1")
    address.sin_port = port.bigEndian
    return withUnsafePointer(to: &address) {
      $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
        Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
      }
    }
  }

  static func canConnect(port: UInt16) -> Bool {
    let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
    guard fd >= 0 else { return false }
    defer { close(fd) }
    return connect(fd, port: port)
  }
}
