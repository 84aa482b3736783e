import Glibc
import WaymarkCore

/// Starting a helper program (gpsd, waymarkd under test) whose stderr the caller reads line by
/// line: stdin and stdout on /dev/null, stderr on a pipe, the signal mask cleared (a test
/// process may block signals the child must receive).
public enum ChildProcess {
  /// Why a child could not be started.
  public struct SpawnError: Error, CustomStringConvertible {
    /// The failing call and its reason.
    public var description: String
  }

  /// Starts `arguments[0]` (a path) with `arguments` as its argv and exactly `environment`.
  ///
  /// - Returns: The child's pid and the read end of its stderr pipe (close-on-exec; the caller
  ///   owns it and must reap the child).
  /// - Throws: ``SpawnError`` when the pipe or `posix_spawn` fails.
  public static func startWithStderrPipe(
    _ arguments: [String], environment: [String: String]
  ) throws(SpawnError) -> (processID: pid_t, stderr: Int32) {
    var pipeFDs: [Int32] = [0, 0]
    guard pipe(&pipeFDs) == 0 else {
      throw SpawnError(description: "pipe: \(String(cString: strerror(errno)))")
    }
    _ = fcntl(pipeFDs[0], F_SETFD, FD_CLOEXEC)
    _ = fcntl(pipeFDs[1], F_SETFD, FD_CLOEXEC)
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 2)
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var mask = sigset_t()
    sigemptyset(&mask)
    posix_spawnattr_setsigmask(&attributes, &mask)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK))
    let argv = arguments.map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
      for pointer in argv { free(pointer) }
      for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let status = posix_spawn(&pid, arguments[0], &actions, &attributes, argv, envp)
    close(pipeFDs[1])
    guard status == 0 else {
      close(pipeFDs[0])
      throw SpawnError(
        description: "posix_spawn \(arguments[0]): \(String(cString: strerror(status)))")
    }
    return (pid, pipeFDs[0])
  }

  /// Reads `descriptor` (a child's stderr pipe) on a new thread until end of file, calling
  /// `body` with each complete line without its newline, then closes it.
  public static func readLines(
    from descriptor: Int32, threadName: String, _ body: @escaping @Sendable (String) -> Void
  ) {
    DetachedThread.start(name: threadName) {
      var pending: [UInt8] = []
      var buffer = [UInt8](repeating: 0, count: 4096)
      while true {
        let count = read(descriptor, &buffer, buffer.count)
        if count < 0 && errno == EINTR { continue }
        if count <= 0 { break }
        pending += buffer[0..<count]
        while let newline = pending.firstIndex(of: 10) {
          body(String(decoding: pending[..<newline], as: UTF8.self))
          pending.removeSubrange(...newline)
        }
      }
      close(descriptor)
    }
  }
}
