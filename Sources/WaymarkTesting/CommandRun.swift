import Foundation
import WaymarkCore
import WaymarkProcess

/// The result of running a program to completion.
package struct CommandRun: Sendable {
  /// Exit status (or 128 + signal number when killed by a signal).
  package var status: Int32
  /// Everything written to standard output.
  package var stdout: Data
  /// Everything written to standard error, as text.
  package var stderr: String

  /// Standard output as text.
  package var output: String { String(decoding: stdout, as: UTF8.self) }

  /// Signals a child starts with at their default disposition, whatever the test process does
  /// with them.
  static let defaultSignals = [SIGPIPE, SIGINT, SIGTERM, SIGHUP, SIGQUIT]

  /// How long ``run(_:_:input:environment:currentDirectory:timeout:)`` waits by default.
  package static let defaultTimeout: Duration = .seconds(600)

  /// A program that did not end (or did not close its output) within its time.
  package struct Timeout: Error, CustomStringConvertible {
    /// The command line.
    package var command: [String]
    /// How long it was given.
    package var timeout: Duration
    /// What it had written to standard output and standard error by then.
    package var output: String

    package var description: String {
      "\(command.joined(separator: " ")) did not end within \(timeout) (killed); its output "
        + "so far:\n\(output)"
    }
  }

  /// Runs `executable` with `arguments` and waits for it; standard input is empty unless given.
  ///
  /// Started through ``ProcessSpawner`` (`posix_spawn(3)`) with its three standard streams on
  /// pipes; standard output and standard error are read here with `poll(2)`, and standard input
  /// is written on a thread of its own, so that a full pipe never blocks the child. The wait is
  /// bounded: a program that has not ended after `timeout` — or whose descendants still hold its
  /// output open — is killed and the call throws ``Timeout`` with what it had written, so that a
  /// test fails with the command's name instead of hanging the run.
  ///
  /// - Parameters:
  ///   - executable: the program's path.
  ///   - arguments: its arguments (without the program's name).
  ///   - input: its standard input; empty when `nil`.
  ///   - environment: its whole environment; this process's when `nil`.
  ///   - currentDirectory: its working directory; this process's when `nil`.
  ///   - timeout: how long it may take, output closed and exit included.
  /// - Throws: ``ProcessSpawner/SpawnError`` when it cannot be started; ``Timeout``.
  package static func run(
    _ executable: String, _ arguments: [String], input: Data? = nil,
    environment: [String: String]? = nil, currentDirectory: URL? = nil,
    timeout: Duration = defaultTimeout
  ) throws -> CommandRun {
    var options = ProcessSpawner.Options()
    options.standardInput = .pipe
    options.standardOutput = .pipe
    options.standardError = .pipe
    options.defaultSignals = defaultSignals
    options.workingDirectory = currentDirectory?.path
    let command = [executable] + arguments
    let child = try ProcessSpawner.spawn(
      command, environment: environment ?? ProcessInfo.processInfo.environment, options: options)
    let inputPipe = child.standardInput!
    let bytes = input.map { [UInt8]($0) } ?? []
    DetachedThread.start(name: "command-stdin") { writeAll(bytes, to: inputPipe) }
    let clock = ContinuousClock()
    let deadline = clock.now + timeout
    let (outputBytes, errorBytes, complete) = readBoth(
      child.standardOutput!, child.standardError!, until: deadline, clock: clock)
    if complete, let status = waitForExit(child.processID, until: deadline, clock: clock) {
      return CommandRun(
        status: status, stdout: Data(outputBytes),
        stderr: String(decoding: errorBytes, as: UTF8.self))
    }
    kill(child.processID, SIGKILL)
    _ = ProcessSpawner.waitForExit(child.processID)
    throw Timeout(
      command: command, timeout: timeout,
      output: String(decoding: outputBytes + errorBytes, as: UTF8.self))
  }

  /// Reads `output` and `error` to their ends (then closes them), or until `deadline`.
  /// Returns what was read and whether both ended.
  static func readBoth(
    _ output: Int32, _ error: Int32, until deadline: ContinuousClock.Instant,
    clock: ContinuousClock
  ) -> ([UInt8], [UInt8], Bool) {
    var collected: [[UInt8]] = [[], []]
    var open = [output, error]
    var buffer = [UInt8](repeating: 0, count: 65_536)
    defer {
      close(output)
      close(error)
    }
    while open.contains(where: { $0 >= 0 }) {
      let left = deadline - clock.now
      guard left > .zero else { return (collected[0], collected[1], false) }
      var polled = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
      let milliseconds = Int32(
        clamping: Int(saturating: min(left / .milliseconds(1), 60_000).rounded(.up)))
      let ready = poll(&polled, nfds_t(polled.count), max(1, milliseconds))
      if ready < 0 && errno != EINTR { return (collected[0], collected[1], false) }
      for index in open.indices where open[index] >= 0 && polled[index].revents != 0 {
        let count = read(open[index], &buffer, buffer.count)
        if count < 0 && (errno == EINTR || errno == EAGAIN) { continue }
        if count <= 0 {
          open[index] = -1
        } else {
          collected[index] += buffer[0..<count]
        }
      }
    }
    return (collected[0], collected[1], true)
  }

  /// The exit status of `process`, or `nil` if it has not ended by `deadline`.
  static func waitForExit(
    _ process: pid_t, until deadline: ContinuousClock.Instant, clock: ContinuousClock
  ) -> Int32? {
    while true {
      var status: Int32 = 0
      let result = waitpid(process, &status, WNOHANG)
      if result == process { return ProcessSpawner.exitStatus(status) }
      if result < 0 && errno != EINTR { return -1 }
      if clock.now >= deadline { return nil }
      usleep(2_000)
    }
  }

  /// Runs the package's `waymark` executable.
  package static func waymark(
    _ arguments: [String], input: Data? = nil, environment: [String: String]? = nil
  ) throws -> CommandRun {
    try run(Products.executable("waymark"), arguments, input: input, environment: environment)
  }

  /// Writes `bytes` to `descriptor` (a child's standard input), then closes it. `SIGPIPE` is
  /// blocked on this thread: a child that exits without reading ends the write with `EPIPE`,
  /// not the test process.
  static func writeAll(_ bytes: [UInt8], to descriptor: Int32) {
    var mask = sigset_t()
    sigemptyset(&mask)
    sigaddset(&mask, SIGPIPE)
    pthread_sigmask(SIG_BLOCK, &mask, nil)
    var offset = 0
    while offset < bytes.count {
      let count = bytes[offset...].withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
      if count < 0 && errno == EINTR { continue }
      if count <= 0 { break }
      offset += count
    }
    close(descriptor)
  }
}
