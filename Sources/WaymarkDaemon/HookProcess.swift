import FoundationEssentials
import Glibc
import WaymarkCore
import WaymarkProcess

/// A hook's child process: spawned in its own process group with default signal handling, its
/// input written from a buffer, its output (standard output and error together) read line by
/// line, and a time limit.
struct HookProcess {
  /// How a hook ended.
  enum Outcome: Sendable, Hashable {
    /// It exited with this status.
    case exited(Int32)
    /// A signal killed it (not ours).
    case signaled(Int32)
    /// It ran past the timeout and was terminated.
    case timedOut
  }

  struct SpawnError: Error, CustomStringConvertible {
    var description: String
  }

  let processID: pid_t
  private let output: Int32

  /// Starts `arguments[0]` (an absolute path) with `environment`, `input` on standard input.
  ///
  /// Started through ``ProcessSpawner``.
  static func spawn(
    _ arguments: [String], environment: [String: String], input: [UInt8]
  ) throws -> HookProcess {
    markDescriptorsCloseOnExec()
    var options = ProcessSpawner.Options()
    options.standardInput = .pipe
    options.standardOutput = .pipe
    options.standardError = .standardOutput
    // The daemon blocks or ignores signals for its own handling; the hook starts clean.
    options.defaultSignals = [SIGPIPE, SIGTERM, SIGINT, SIGHUP, SIGCHLD, SIGUSR1, SIGUSR2]
    options.newProcessGroup = true
    let child: ProcessSpawner.Child
    do {
      child = try ProcessSpawner.spawn(arguments, environment: environment, options: options)
    } catch {
      throw SpawnError(description: error.description)
    }
    let inputWrite = child.standardInput!
    // The input is small (one event); a hook that does not read it must not block us, and one
    // that has already exited must not kill us with SIGPIPE (blocked on this thread for the
    // write, and a pending one consumed).
    _ = fcntl(inputWrite, F_SETFL, fcntl(inputWrite, F_GETFL) | O_NONBLOCK)
    var pipeSignal = sigset_t()
    sigemptyset(&pipeSignal)
    sigaddset(&pipeSignal, SIGPIPE)
    var previousMask = sigset_t()
    pthread_sigmask(SIG_BLOCK, &pipeSignal, &previousMask)
    var brokenPipe = false
    input.withUnsafeBytes { raw in
      var offset = 0
      while offset < raw.count {
        let written = write(inputWrite, raw.baseAddress! + offset, raw.count - offset)
        if written < 0 && errno == EINTR { continue }
        if written < 0 && errno == EPIPE { brokenPipe = true }
        if written <= 0 { break }
        offset += written
      }
    }
    close(inputWrite)
    if brokenPipe {
      var immediately = timespec(tv_sec: 0, tv_nsec: 0)
      _ = sigtimedwait(&pipeSignal, nil, &immediately)
    }
    pthread_sigmask(SIG_SETMASK, &previousMask, nil)
    return HookProcess(processID: child.processID, output: child.standardOutput!)
  }

  /// Reads the output until the process ends or `timeoutSeconds` pass (then SIGTERM to the
  /// process group, SIGKILL one second later), and reaps it.
  ///
  /// - Parameters:
  ///   - time: what the timeout is measured on.
  ///   - onLine: called for each output line (at most 1,000 characters each).
  func wait(timeoutSeconds: Double, time: TimeSource, onLine: (String) -> Void) -> Outcome {
    defer { close(output) }
    let clock = time
    let start = clock.now
    let deadline = start + .milliseconds(Int64(saturating: timeoutSeconds * 1000))
    var pending: [UInt8] = []
    var outputOpen = true
    var buffer = [UInt8](repeating: 0, count: 4096)
    var terminatedAt: ContinuousClock.Instant?
    var killed = false

    func flushLines(final: Bool) {
      while let newline = pending.firstIndex(of: 10) {
        onLine(String(decoding: pending[..<newline].prefix(1000), as: UTF8.self))
        pending.removeSubrange(...newline)
      }
      if pending.count > 1000 || (final && !pending.isEmpty) {
        onLine(String(decoding: pending.prefix(1000), as: UTF8.self))
        pending.removeAll()
      }
    }

    while true {
      var status: Int32 = 0
      let reaped = waitpid(processID, &status, WNOHANG)
      if reaped == processID {
        drain(&pending, &buffer)
        flushLines(final: true)
        if terminatedAt != nil { return .timedOut }
        return HookProcess.outcome(status)
      }
      let now = clock.now
      if terminatedAt == nil && now >= deadline {
        kill(-processID, SIGTERM)
        kill(processID, SIGTERM)
        terminatedAt = now
      } else if let terminatedAt, !killed, now >= terminatedAt + .seconds(1) {
        kill(-processID, SIGKILL)
        kill(processID, SIGKILL)
        killed = true
      }
      if outputOpen {
        var descriptor = pollfd(fd: output, events: Int16(POLLIN), revents: 0)
        let ready = poll(&descriptor, 1, 50)
        if ready > 0 {
          let count = read(output, &buffer, buffer.count)
          if count > 0 {
            pending += buffer[0..<count]
            flushLines(final: false)
          } else if count == 0 || (errno != EINTR && errno != EAGAIN) {
            outputOpen = false
          }
        }
      } else {
        usleep(20_000)
      }
    }
  }

  private func drain(_ pending: inout [UInt8], _ buffer: inout [UInt8]) {
    _ = fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK)
    while pending.count < 1 << 16 {
      let count = read(output, &buffer, buffer.count)
      if count <= 0 { break }
      pending += buffer[0..<count]
    }
  }

  /// Sets close-on-exec on every open descriptor above 2 (gpsd's socket, the notification
  /// socket, the database), so that a hook inherits only its standard input, output and error.
  /// Harmless to their owners, which never exec. (`posix_spawn_file_actions_addclosefrom_np`
  /// would do it per spawn, but it is a GNU extension the Glibc module does not export.)
  static func markDescriptorsCloseOnExec() {
    guard let entries = try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")
    else { return }
    for entry in entries {
      guard let descriptor = Int32(entry), descriptor > 2 else { continue }
      let flags = fcntl(descriptor, F_GETFD)
      if flags >= 0 && flags & FD_CLOEXEC == 0 {
        _ = fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC)
      }
    }
  }

  private static func outcome(_ status: Int32) -> Outcome {
    let signal = status & 0x7f
    if signal == 0 { return .exited((status >> 8) & 0xff) }
    return .signaled(signal)
  }
}
